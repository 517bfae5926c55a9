import assert from 'node:assert/strict';
import { type Agent, request } from 'node:http';

/** Requests below the SDKs: exact bytes to a server, for malformed and hostile input. */
export function postJson(endpoint: string, action: string, body: string | Blob): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body,
  });
}

export function postForm(endpoint: string, body: string): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

export interface WireResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/**
 * One HTTP request with exactly these headers, Host and Origin included (fetch would replace Host), as a
 * browser or an attacker's page could send it.
 */
export function rawRequest(
  endpoint: string,
  options: {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** The connection to use: an agent's (one with a `localAddress`, say), or a new one (false). */
    agent?: Agent | false;
  },
): Promise<WireResponse> {
  const url = new URL(options.path ?? '/', endpoint);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, timeout: 15_000, agent: options.agent },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          resolve({
            status: response.statusCode ?? 0,
            headers,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer from ${url} in 15 s`)));
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** JSON error shape: `__type` "<namespace>#<shape>", a message, and the legacy code in x-amzn-query-error. */
export function assertJsonError(
  response: WireResponse,
  shape: string,
  queryCode: string,
  status = 400,
): void {
  const context = `${response.status} ${response.headers.get('x-amzn-query-error')} ${response.text.slice(0, 500)}`;
  assert.equal(response.status, status, context);
  assert.match(response.headers.get('content-type') ?? '', /^application\/x-amz-json-1\.0/, context);
  const body = JSON.parse(response.text) as { __type?: unknown; message?: unknown };
  assert.equal(typeof body.__type, 'string', context);
  assert.equal(String(body.__type).replace(/^[\w.]+#/, ''), shape, context);
  assert.match(String(body.__type), /^[\w.]+#\w+$/, context);
  assert.equal(typeof body.message, 'string', context);
  assert.equal(response.headers.get('x-amzn-query-error'), `${queryCode};Sender`, context);
}

/** Query error shape: `<ErrorResponse><Error><Type>Sender</Type><Code>...</Code><Message>`, HTTP 400. */
export function assertQueryError(response: WireResponse, code: string, status = 400): void {
  const context = `${response.status} ${response.text.slice(0, 500)}`;
  assert.equal(response.status, status, context);
  assert.match(response.headers.get('content-type') ?? '', /xml/, context);
  assert.match(
    response.text,
    /<ErrorResponse[\s>][\s\S]*<Error>[\s\S]*<\/Error>[\s\S]*<\/ErrorResponse>/,
    context,
  );
  assert.match(response.text, /<Type>Sender<\/Type>/, context);
  assert.ok(response.text.includes(`<Code>${code}</Code>`), context);
  assert.match(response.text, /<Message>[^<]+<\/Message>/, context);
  assert.match(response.text, /<RequestId>[^<]+<\/RequestId>/, context);
}
