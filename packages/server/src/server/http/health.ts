import type { StoreCondition } from '../../store/contract.ts';
import type { Serve } from './front.ts';

/**
 * GET /health (and HEAD, for health checkers that ask with it; Node leaves a HEAD response's body out).
 * Degraded is still 200: reads work, and on a full disk so do the receives and deletes that free it.
 */
export function serveHealth(storeCondition: () => Promise<StoreCondition | undefined>): Serve {
  return async () => {
    const condition = await storeCondition();
    const health = condition ? { status: 'degraded', reason: condition } : { status: 'ok' };
    return { contentType: 'application/json', body: JSON.stringify(health) };
  };
}
