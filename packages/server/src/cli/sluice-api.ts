import { signRequest } from '../server/auth/sigv4.ts';

/** How the CLI names itself, as SDKs do: a claim, which the audit trail does not rely on. */
export const CLI_USER_AGENT = 'sluice-cli';

/** GET a Sluice API page (/api/...) as JSON; signed with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when set. */
export function getJson<T>(url: string): Promise<T> {
  return request<T>('GET', url, '');
}

/** POST a JSON body to a Sluice API path, signed as getJson's requests are. */
export function postJson<T>(url: string, body: unknown): Promise<T> {
  return request<T>('POST', url, JSON.stringify(body));
}

async function request<T>(method: 'GET' | 'POST', url: string, body: string): Promise<T> {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_DEFAULT_REGION } = process.env;
  // No Content-Type: a signature must cover it when present, and the signer covers Host and X-Amz-Date only.
  const headers: Record<string, string> = { 'user-agent': CLI_USER_AGENT };
  const signed =
    AWS_ACCESS_KEY_ID && AWS_SECRET_ACCESS_KEY
      ? signRequest(
          { method, url: new URL(url), body },
          { accessKeyId: AWS_ACCESS_KEY_ID, secretAccessKey: AWS_SECRET_ACCESS_KEY },
          AWS_REGION ?? AWS_DEFAULT_REGION ?? 'us-east-1',
          Date.now(),
        )
      : {};
  // fetch sets Host itself, from the URL signed.
  const { host: _host, ...sent } = { ...headers, ...signed };
  // Bytes, which fetch sends without a Content-Type of its own.
  const response = await fetch(url, {
    method,
    headers: sent,
    ...(method === 'POST' ? { body: Buffer.from(body) } : {}),
  });
  if (!response.ok) {
    // Sluice's API answers errors as SQS does in JSON: {"__type": "...#Code", "message": "..."}.
    const text = await response.text();
    let detail = '';
    try {
      const error = JSON.parse(text) as { __type?: string; message?: string };
      if (error.message) detail = ` (${error.__type?.split('#').pop() ?? 'error'}: ${error.message})`;
    } catch {}
    throw new Error(`${method} ${url}: HTTP ${response.status}${detail}`);
  }
  return (await response.json()) as T;
}
