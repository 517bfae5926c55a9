import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { SignatureV4 } from '@smithy/signature-v4';
import { assertJsonError, assertQueryError, rawRequest, type WireResponse } from '../helpers/raw-requests.ts';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { NodeSha256 } from '../helpers/sigv4.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * What a web page can make a browser send, sent by hand to a really started server: a page on another
 * origin (Origin, or only Sec-Fetch-Site for an `<img>`), a page on a rebound DNS name (Host), and the
 * GETs a page can make without either. Each is refused in both protocols, and a normal client then finds
 * nothing changed. The same through a real browser: test/browser/cross-origin.test.ts.
 */

const exec = promisify(execFile);
const JSON_TYPE = 'application/x-amz-json-1.0';
const FORM_TYPE = 'application/x-www-form-urlencoded';
/** Another port of the same host: same-site for a browser, another origin all the same. */
const OTHER_ORIGIN = 'http://127.0.0.1:5173';

const sdk = (endpoint: string, credentials = { accessKeyId: 'test', secretAccessKey: 'test' }) =>
  sqsClient(endpoint, { credentials });

const jsonCall = (
  endpoint: string,
  action: string,
  input: Record<string, unknown>,
  headers: Record<string, string> = {},
) =>
  rawRequest(endpoint, {
    method: 'POST',
    headers: { 'content-type': JSON_TYPE, 'x-amz-target': `AmazonSQS.${action}`, ...headers },
    body: JSON.stringify(input),
  });

const formCall = (
  endpoint: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
  contentType = FORM_TYPE,
) =>
  rawRequest(endpoint, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body: new URLSearchParams(fields).toString(),
  });

function assertServed(response: WireResponse): void {
  assert.equal(response.status, 200, response.text.slice(0, 500));
}

describe('requests a web page can make', { skip: NEEDS_OWN_SERVER, concurrency: false }, () => {
  let server: RunningServer;
  let sqs: SQSClient;
  let queueUrl: string;
  let host: string;

  before(async () => {
    server = await startServer();
    sqs = sdk(server.endpoint);
    host = new URL(server.endpoint).host;
    ({ QueueUrl: queueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: 'victim' })));
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'keep me' }));
  });
  after(async () => {
    sqs?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  /** The victim queue as the attacks found it: there, one message, visible, never received. */
  async function assertUntouched(): Promise<void> {
    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    assert.deepEqual(QueueUrls, [queueUrl]);
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
    );
    assert.equal(Attributes.ApproximateNumberOfMessages, '1');
    assert.equal(Attributes.ApproximateNumberOfMessagesNotVisible, '0');
  }

  test('a page on another origin is refused in both protocols, and gets no CORS headers', async () => {
    const path = '/000000000000/victim';
    const site = { origin: OTHER_ORIGIN, 'sec-fetch-site': 'same-site' };
    const refusals: Array<[string, WireResponse]> = [
      [
        'form POST PurgeQueue',
        await formCall(server.endpoint, { Action: 'PurgeQueue', QueueUrl: path }, site),
      ],
      [
        'text/plain POST SendMessage',
        await formCall(
          server.endpoint,
          { Action: 'SendMessage', QueueUrl: path, MessageBody: 'injected' },
          { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
          'text/plain',
        ),
      ],
      [
        'form POST StartMessageMoveTask',
        await formCall(
          server.endpoint,
          { Action: 'StartMessageMoveTask', SourceArn: 'arn:aws:sqs:us-east-1:000000000000:victim' },
          site,
        ),
      ],
      // A sandboxed frame or a file: page sends Origin: null.
      [
        'Origin null DeleteQueue',
        await formCall(server.endpoint, { Action: 'DeleteQueue', QueueUrl: path }, { origin: 'null' }),
      ],
      [
        'GET ReceiveMessage with only Sec-Fetch-Site (an <img>)',
        await rawRequest(server.endpoint, {
          path: `${path}?Action=ReceiveMessage`,
          // Signed, so that only the cross-site rule can refuse it.
          headers: { 'sec-fetch-site': 'same-site', authorization: 'AWS4-HMAC-SHA256 Credential=test/...' },
        }),
      ],
    ];
    for (const [what, response] of refusals) {
      assertQueryError(response, 'AccessDenied', 403);
      assert.equal(response.headers.get('access-control-allow-origin'), null, what);
    }
    assertJsonError(
      await jsonCall(server.endpoint, 'SendMessage', { QueueUrl: queueUrl, MessageBody: 'x' }, site),
      'AccessDeniedException',
      'AccessDenied',
      403,
    );
    assertJsonError(
      await jsonCall(
        server.endpoint,
        'ReceiveMessage',
        { QueueUrl: queueUrl },
        { 'sec-fetch-site': 'cross-site' },
      ),
      'AccessDeniedException',
      'AccessDenied',
      403,
    );
    // The preflight a page's JSON fetch needs is refused too, so the browser never sends the request.
    const preflight = await rawRequest(server.endpoint, {
      method: 'OPTIONS',
      headers: {
        ...site,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-amz-target',
      },
    });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    await assertUntouched();
  });

  test('the server’s own pages (the console) and clients that are not browsers are served', async () => {
    assertServed(
      await jsonCall(
        server.endpoint,
        'GetQueueUrl',
        { QueueName: 'victim' },
        { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' },
      ),
    );
    // Sec-Fetch-Site: none is a request the user made (typed or bookmarked), not a page.
    assertServed(await formCall(server.endpoint, { Action: 'ListQueues' }, { 'sec-fetch-site': 'none' }));
    assertServed(await formCall(server.endpoint, { Action: 'ListQueues' }));
    const served = await jsonCall(server.endpoint, 'ListQueues', {});
    assertServed(served);
    assert.equal(served.headers.get('access-control-allow-origin'), null);
  });

  test('a Query GET must be signed in an Authorization header: an old browser’s <img> sends neither Origin nor Sec-Fetch-Site', async () => {
    for (const action of [
      'DeleteQueue',
      'PurgeQueue',
      'ReceiveMessage',
      'SendMessage&MessageBody=injected',
    ]) {
      const response = await rawRequest(server.endpoint, { path: `/000000000000/victim?Action=${action}` });
      assertQueryError(response, 'MissingAuthenticationToken', 403);
      assert.match(response.text, /must be signed in an Authorization header/);
    }
    await assertUntouched();
    // Signed as the SDKs sign (the server has no keys, so any signature), a GET is served.
    const signed = await rawRequest(server.endpoint, {
      path: '/000000000000/victim?Action=GetQueueAttributes&AttributeName.1=ApproximateNumberOfMessages',
      headers: { authorization: 'AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/sqs/aws4_request' },
    });
    assertServed(signed);
    assert.match(signed.text, /<Name>ApproximateNumberOfMessages<\/Name><Value>1<\/Value>/);
  });

  test('a Host that is not a loopback name or address is refused, pages included (DNS rebinding)', async () => {
    const rebound = { host: `attacker.example:${server.port}` };
    assertJsonError(
      await jsonCall(server.endpoint, 'CreateQueue', { QueueName: 'rebound' }, rebound),
      'AccessDeniedException',
      'AccessDenied',
      403,
    );
    const query = await formCall(server.endpoint, { Action: 'ListQueues' }, rebound);
    assertQueryError(query, 'AccessDenied', 403);
    assert.match(query.text, /--allow-host/);
    for (const page of ['/console', '/api/overview', '/metrics'])
      assert.equal((await rawRequest(server.endpoint, { path: page, headers: rebound })).status, 403, page);
    await assertUntouched();
  });

  test('loopback names and addresses are served, and queue URLs follow the Host header', async () => {
    for (const name of ['localhost', '127.0.0.1', '[::1]', 'app.localhost', 'LOCALHOST']) {
      const response = await jsonCall(
        server.endpoint,
        'GetQueueUrl',
        { QueueName: 'victim' },
        { host: `${name}:${server.port}` },
      );
      assertServed(response);
      assert.equal(
        (JSON.parse(response.text) as { QueueUrl: string }).QueueUrl,
        `http://${name}:${server.port}/000000000000/victim`,
      );
    }
  });

  test('the console’s files carry a CSP, refuse framing and sniffing; the icon is served', async () => {
    for (const path of ['/console', '/console/console.js']) {
      const response = await rawRequest(server.endpoint, { path });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    }
    const icon = await rawRequest(server.endpoint, { path: '/favicon.ico' });
    assert.equal(icon.status, 200, icon.text);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    assert.match(icon.text, /^<svg /);
  });
});

describe('--cors-origin and --allow-host', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ args: ['--cors-origin', OTHER_ORIGIN, '--allow-host', 'queues.internal'] });
  });
  after(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  test('the allowed origin’s preflight is answered with the SDK’s headers; its requests get CORS headers', async () => {
    const sdkHeaders =
      'amz-sdk-invocation-id,amz-sdk-request,authorization,content-type,x-amz-date,x-amz-target,x-amz-user-agent';
    const preflight = await rawRequest(server.endpoint, {
      method: 'OPTIONS',
      headers: {
        origin: OTHER_ORIGIN,
        'sec-fetch-site': 'same-site',
        'access-control-request-method': 'POST',
        'access-control-request-headers': sdkHeaders,
      },
    });
    assert.equal(preflight.status, 204, preflight.text);
    assert.equal(preflight.headers.get('access-control-allow-origin'), OTHER_ORIGIN);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    assert.equal(preflight.headers.get('access-control-allow-headers'), sdkHeaders);

    const sent = await jsonCall(
      server.endpoint,
      'CreateQueue',
      { QueueName: 'from-page' },
      { origin: OTHER_ORIGIN, 'sec-fetch-site': 'same-site' },
    );
    assertServed(sent);
    assert.equal(sent.headers.get('access-control-allow-origin'), OTHER_ORIGIN);
    assert.match(sent.headers.get('access-control-expose-headers') ?? '', /x-amzn-query-error/);
    assert.equal(sent.headers.get('vary'), 'Origin');
    // A form POST of that origin's page is served too.
    assertServed(await formCall(server.endpoint, { Action: 'ListQueues' }, { origin: OTHER_ORIGIN }));

    // Any other origin is still refused, and nothing else gets CORS headers.
    const other = await jsonCall(server.endpoint, 'ListQueues', {}, { origin: 'http://127.0.0.1:5174' });
    assertJsonError(other, 'AccessDeniedException', 'AccessDenied', 403);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(
      (await jsonCall(server.endpoint, 'ListQueues', {})).headers.get('access-control-allow-origin'),
      null,
    );
  });

  test('a name given with --allow-host is served and queue URLs follow it; others are still refused', async () => {
    const response = await jsonCall(
      server.endpoint,
      'CreateQueue',
      { QueueName: 'internal' },
      { host: `queues.internal:${server.port}` },
    );
    assertServed(response);
    assert.equal(
      (JSON.parse(response.text) as { QueueUrl: string }).QueueUrl,
      `http://queues.internal:${server.port}/000000000000/internal`,
    );
    assertQueryError(
      await formCall(
        server.endpoint,
        { Action: 'ListQueues' },
        { host: `queues.internal.example:${server.port}` },
      ),
      'AccessDenied',
      403,
    );
  });

  test('a flag value that is not an origin or a host name stops the server with a usage error', async () => {
    for (const [flag, value] of [
      ['--cors-origin', 'localhost:3000'],
      ['--cors-origin', 'http://localhost:3000/app'],
      ['--allow-host', 'queues.internal:9324'],
    ]) {
      await assert.rejects(
        exec(process.execPath, [...SLUICE_CLI, 'serve', '--port', '0', flag!, value!]),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 2);
          assert.match(error.stderr ?? '', new RegExp(`${flag} must be`));
          return true;
        },
      );
    }
  });
});

describe('the Host check on a network address', { skip: NEEDS_OWN_SERVER }, () => {
  test('with credentials any Host is served (every request is signed; a page cannot sign), other origins still refused', async () => {
    const key = { accessKeyId: 'AKIDHOST', secretAccessKey: 'host-secret' };
    const server = await startServer({
      args: ['--host', '0.0.0.0', '--credentials', `${key.accessKeyId}:${key.secretAccessKey}`],
    });
    try {
      const port = new URL(server.endpoint).port;
      const signer = new SignatureV4({
        credentials: key,
        region: 'us-east-1',
        service: 'sqs',
        sha256: NodeSha256,
      });
      const signed = async (hostHeader: string, extra: Record<string, string> = {}) => {
        const body = JSON.stringify({ QueueName: 'by-name' });
        const request = await signer.sign({
          method: 'POST',
          protocol: 'http:',
          hostname: hostHeader.split(':')[0]!,
          port: Number(port),
          path: '/',
          headers: { host: hostHeader, 'content-type': JSON_TYPE, 'x-amz-target': 'AmazonSQS.CreateQueue' },
          body,
        });
        return rawRequest(`http://127.0.0.1:${port}`, {
          method: 'POST',
          headers: { ...request.headers, ...extra },
          body,
        });
      };
      const byName = await signed(`queues.example.net:${port}`);
      assertServed(byName);
      assert.match(byName.text, new RegExp(`http://queues\\.example\\.net:${port}/000000000000/by-name`));
      assertJsonError(
        await signed(`127.0.0.1:${port}`, { origin: 'http://evil.example' }),
        'AccessDeniedException',
        'AccessDenied',
        403,
      );
      // A presigned GET carries its signature in the URL; with keys configured it is checked, so it is served.
      const presigned = await signer.presign(
        {
          method: 'GET',
          protocol: 'http:',
          hostname: '127.0.0.1',
          port: Number(port),
          path: '/',
          query: { Action: 'ListQueues', Version: '2012-11-05' },
          headers: { host: `127.0.0.1:${port}` },
        },
        { expiresIn: 300 },
      );
      const query = new URLSearchParams(presigned.query as Record<string, string>).toString();
      assertServed(await rawRequest(`http://127.0.0.1:${port}`, { path: `/?${query}` }));
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });

  test('without credentials (--insecure) the Host check stays on', async () => {
    const server = await startServer({ args: ['--host', '0.0.0.0', '--insecure'] });
    try {
      const port = new URL(server.endpoint).port;
      const endpoint = `http://127.0.0.1:${port}`;
      assertQueryError(
        await formCall(endpoint, { Action: 'ListQueues' }, { host: `attacker.example:${port}` }),
        'AccessDenied',
        403,
      );
      assertServed(await formCall(endpoint, { Action: 'ListQueues' }));
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });
});
