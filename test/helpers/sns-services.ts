import type { Clock } from 'sluice-client/clock';
import type { NotificationSigner } from '../../packages/server/src/core/sns/envelope.ts';
import { SnsService } from '../../packages/server/src/core/sns/sns-service.ts';
import { SqsService } from '../../packages/server/src/core/sqs-service.ts';
import { IN_MEMORY } from '../../packages/server/src/store/sqlite/options.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';

/** SQS and SNS on one in-memory store, as the server wires them, for tests that call the core directly. */
export function snsOnMemoryStore(options: {
  clock: Clock;
  signer: NotificationSigner;
  warn?: (details: Record<string, unknown>, message: string) => void;
}): { store: SqliteStore; sqs: SqsService; sns: SnsService } {
  const store = new SqliteStore({ dataDir: IN_MEMORY });
  const sqs = new SqsService({ store, clock: options.clock });
  const sns = new SnsService({
    store,
    clock: options.clock,
    scope: { region: sqs.region, accountId: sqs.accountId },
    queues: sqs.queues,
    deliveries: sqs.deliveries,
    signer: options.signer,
    warn: options.warn,
  });
  return { store, sqs, sns };
}
