/**
 * Serves handler.ts over the Lambda Invoke API, as `sam local start-lambda` or an AWS Lambda base image
 * would: `POST /2015-03-31/functions/{name}/invocations`, the event as the body, the handler's result as the
 * answer; a thrown error answers 200 with `X-Amz-Function-Error: Unhandled`, as Lambda does. Run it with
 *   PORT=9001 node --import tsx examples/lambda-consumer/invoke-server.ts
 * and start Sluice with `--lambda-endpoint http://127.0.0.1:9001`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSEvent } from 'aws-lambda';
import { handler } from './handler.ts';

const server = createServer((request, response) => {
  const match = /^\/2015-03-31\/functions\/([^/?]+)\/invocations/.exec(request.url ?? '');
  if (request.method !== 'POST' || !match) {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"message": "not found"}');
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    try {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SQSEvent;
      const result = await handler(event);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result ?? null));
    } catch (error) {
      response
        .writeHead(200, { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled' })
        .end(JSON.stringify({ errorType: (error as Error).name, errorMessage: (error as Error).message }));
    }
  });
});

server.listen(Number(process.env.PORT ?? 9001), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${port}` }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
