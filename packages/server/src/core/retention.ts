import type { Timer } from 'sluice-client/clock';
import type { SqsService } from './sqs-service.ts';

const SWEEP_BATCH = 1000;

/**
 * Reclaims the space of messages past their retention period. Receives already skip expired messages;
 * this only deletes them, in bounded batches so a sweep never holds the store for long.
 */
export function startRetentionSweeper(
  service: SqsService,
  onError: (error: unknown) => void,
  intervalMs = 10_000,
): { stop(): void } {
  let timer: Timer | undefined;
  let stopped = false;
  const sweep = async () => {
    try {
      while (
        !stopped &&
        (await service.store.deleteExpired(service.clock.now(), SWEEP_BATCH)) === SWEEP_BATCH
      ) {
        // keep going: there may be more
      }
    } finally {
      if (!stopped) schedule();
    }
  };
  // The sweep is returned, so a clock moved forward waits for it.
  const schedule = () => {
    timer = service.clock.setTimer(intervalMs, () => sweep().catch(onError), { periodic: true });
  };
  schedule();
  return {
    stop() {
      stopped = true;
      timer?.cancel();
    },
  };
}
