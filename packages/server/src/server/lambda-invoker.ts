/**
 * The Lambda Invoke API over HTTP: `POST {endpoint}/2015-03-31/functions/{FunctionName}/invocations`, as
 * `sam local start-lambda`, the runtime interface emulator of AWS's Lambda base images and AWS serve it. The
 * time-out is the event-source core's (on its clock): it aborts the request through `signal`.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FunctionInvoker, InvokeAnswer } from '../core/event-source/poller.ts';

/** An answer past this is cut off: Lambda's synchronous response limit is 6 MB. */
const MAX_ANSWER_BYTES = 6 * 1024 * 1024 + 1024;

export function httpInvoker(endpoint: string): FunctionInvoker {
  const base = new URL(endpoint);
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new Error(`--lambda-endpoint must be an http:// or https:// URL, not ${JSON.stringify(endpoint)}`);
  const prefix = base.pathname.replace(/\/+$/, '');
  return {
    invoke({ functionName, qualifier, payload, signal }) {
      const url = new URL(base);
      url.pathname = `${prefix}/2015-03-31/functions/${encodeURIComponent(functionName)}/invocations`;
      if (qualifier !== undefined) url.searchParams.set('Qualifier', qualifier);
      return post(url, payload, signal);
    },
  };
}

/**
 * The invoker of each function: its own endpoint when the config file names one (`lambda.functions`), else the
 * server's (`--lambda-endpoint`); undefined when there is neither (mappings are then kept, not polled). A
 * function with no endpoint of its own and no default is not reached: its invocations fail as unreachable.
 */
export function functionInvoker(
  defaultEndpoint: string | undefined,
  functions: Record<string, string> = {},
): FunctionInvoker | undefined {
  const named = new Map(Object.entries(functions).map(([name, endpoint]) => [name, httpInvoker(endpoint)]));
  const fallback = defaultEndpoint === undefined ? undefined : httpInvoker(defaultEndpoint);
  if (!fallback && named.size === 0) return undefined;
  return {
    invoke(request) {
      const invoker = named.get(request.functionName) ?? fallback;
      if (!invoker)
        return Promise.reject(
          new Error(
            `no Invoke endpoint for function ${request.functionName} (lambda.functions, --lambda-endpoint)`,
          ),
        );
      return invoker.invoke(request);
    },
  };
}

function post(url: URL, payload: string, signal: AbortSignal): Promise<InvokeAnswer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      {
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'x-amz-invocation-type': 'RequestResponse',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) response.destroy(new Error('the function answered more than 6 MB'));
          else chunks.push(chunk);
        });
        response.once('end', () => {
          const functionError = response.headers['x-amz-function-error'];
          resolve({
            status: response.statusCode ?? 0,
            ...(typeof functionError === 'string' && { functionError }),
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end(payload);
  });
}
