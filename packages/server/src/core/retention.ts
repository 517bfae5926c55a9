import type { Clock, Timer } from '#toolkit/clock';
import type { Store } from '../store/contract.ts';

const SWEEP_BATCH = 1000;

/**
 * Reclaims the space of messages past their retention period. Receives already skip expired messages;
 * this only deletes them, in bounded batches so a sweep never holds the store for long.
 */
export function startRetentionSweeper(
  deps: { readonly store: Pick<Store, 'deleteExpired'>; readonly clock: Clock },
  onError: (error: unknown) => void,
  intervalMs = 10_000,
): { stop(): void } {
  let timer: Timer | undefined;
  let stopped = false;
  const sweep = async () => {
    try {
      while (!stopped && (await deps.store.deleteExpired(deps.clock.now(), SWEEP_BATCH)) === SWEEP_BATCH) {
        // keep going: there may be more
      }
    } finally {
      if (!stopped) schedule();
    }
  };
  // The sweep is returned, so a clock moved forward waits for it.
  const schedule = () => {
    timer = deps.clock.setTimer(intervalMs, () => sweep().catch(onError), { periodic: true });
  };
  schedule();
  return {
    stop() {
      stopped = true;
      timer?.cancel();
    },
  };
}
