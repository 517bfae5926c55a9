import type { ProtocolAdapter } from './adapter.ts';
import { isJsonRequest, jsonProtocol } from './json.ts';
import { queryProtocol } from './query.ts';

/** The protocol a request speaks: AWS JSON 1.0 names its action in X-Amz-Target, Query in its params. */
export function protocolOf(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): ProtocolAdapter {
  return isJsonRequest(headers) ? jsonProtocol : queryProtocol;
}

export { jsonProtocol };
