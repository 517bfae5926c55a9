import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../../packages/client/src/node-sha256.ts';
import { signRequest } from '../../packages/server/src/server/auth/sigv4.ts';

export { NodeSha256 };

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * Headers for a hand-made request signed with AWS Signature V4 (dummy credentials), so raw requests
 * look like an SDK's to a server that checks or routes on the signature.
 */
export function signV4(
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  region = 'us-east-1',
  service = 'sqs',
): Record<string, string> {
  const amzDate = new Date().toISOString().replace(/[:-]|\.\d{3}/g, '');
  const date = amzDate.slice(0, 8);
  const all: Record<string, string> = { host: url.host, 'x-amz-date': amzDate };
  for (const [key, value] of Object.entries(headers)) all[key.toLowerCase()] = value.trim();
  const names = Object.keys(all).sort();
  const canonicalRequest = [
    'POST',
    url.pathname || '/',
    '',
    ...names.map((name) => `${name}:${all[name]}`),
    '',
    names.join(';'),
    sha256(body),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac('AWS4test', date), region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return {
    ...all,
    authorization: `AWS4-HMAC-SHA256 Credential=test/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
}

/**
 * The AWS SDK's own SigV4 signer (@smithy/signature-v4, what @aws-sdk/client-sqs uses), for requests made
 * by hand with a given key, so a misreading of the canonical form shared with Sluice's verifier cannot pass.
 */
export function sdkSigner(
  credentials: { accessKeyId: string; secretAccessKey: string },
  region = 'us-east-1',
  service = 'sqs',
): SignatureV4 {
  return new SignatureV4({ credentials, region, service, sha256: NodeSha256 });
}

/**
 * A request to one of a Sluice server's own pages (`/api/...`, `/alarms`) signed with `key`, as the CLI signs
 * them: the body as bytes, to which fetch adds no Content-Type (the signature would have to cover it).
 */
export function signedFetch(
  endpoint: string,
  key: { accessKeyId: string; secretAccessKey: string },
  method: 'GET' | 'POST',
  path: string,
  body = '',
  signal?: AbortSignal,
): Promise<Response> {
  const url = new URL(`${endpoint}${path}`);
  const { host: _host, ...headers } = signRequest({ method, url, body }, key, 'us-east-1', Date.now());
  return fetch(url, { method, headers, signal, ...(method === 'POST' ? { body: Buffer.from(body) } : {}) });
}
