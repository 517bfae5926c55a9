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
