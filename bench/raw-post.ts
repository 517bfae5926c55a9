/**
 * The bench's raw clients' one request: a POST to `/` over node:http on a keep-alive agent, the answer read
 * whole as text. raw-client.ts (SQS, JSON 1.0) and peers/sns.ts (SNS, Query) each add their protocol's
 * encoding and errors around it.
 */
import { type Agent, request } from 'node:http';

const REQUEST_TIMEOUT_MS = 30_000;

export interface RawAnswer {
  status: number;
  text: string;
}

/** POSTs `payload` to the endpoint's root; `action` names the request in a timeout's error. */
export function rawPost(
  agent: Agent,
  endpoint: URL,
  headers: Readonly<Record<string, string>>,
  payload: string,
  action: string,
): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = request(
      {
        agent,
        host: endpoint.hostname,
        port: Number(endpoint.port || 80),
        method: 'POST',
        path: '/',
        headers: { ...headers, 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      req.destroy(new Error(`${action}: no response in ${REQUEST_TIMEOUT_MS} ms`));
    });
    req.on('error', reject);
    req.end(payload);
  });
}
