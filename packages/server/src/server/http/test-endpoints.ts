import type { PageAccess } from '../auth/page-access.ts';
import type { Endpoint } from '../page.ts';
import type { ServeApi } from './api.ts';

/**
 * One of test mode's endpoints (`--test-clock`): with credentials configured, only for a request signed by a
 * key that may act on every queue. Its errors are answered in JSON, whatever the request looks like.
 */
export function serveTestEndpoint(endpoint: Endpoint, pageAccess: PageAccess | undefined): ServeApi {
  return async (exchange, _protocol, { body }) => {
    const refusal = pageAccess?.admitTest(exchange.request, body);
    return refusal ?? (await endpoint({ method: exchange.method, body }));
  };
}
