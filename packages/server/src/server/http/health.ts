import type { StoreCondition } from '../../store/contract.ts';
import { HEALTH_SERVER_HEADER } from '../port-holder.ts';
import type { Serve } from './front.ts';

/**
 * GET /health (and HEAD, for health checkers that ask with it; Node leaves a HEAD response's body out).
 * Degraded is still 200: reads work, and on a full disk so do the receives and deletes that free it. Its
 * `server: Sluice` header tells a second `sluice serve` on a taken port who holds it (port-holder.ts).
 */
export function serveHealth(storeCondition: () => Promise<StoreCondition | undefined>): Serve {
  return async () => {
    const condition = await storeCondition();
    const health = condition ? { status: 'degraded', reason: condition } : { status: 'ok' };
    return {
      status: 200,
      headers: { 'content-type': 'application/json', server: HEALTH_SERVER_HEADER },
      body: JSON.stringify(health),
    };
  };
}
