import { describe } from 'node:test';
import { type StoreFactory, useContractService } from './harness.ts';
import { batchesSuite } from './sqs-semantics/batches.ts';
import { longPollingSuite } from './sqs-semantics/long-polling.ts';
import { messagesSuite } from './sqs-semantics/messages.ts';
import { queuesSuite } from './sqs-semantics/queues.ts';

/**
 * The SQS rules, checked through the service against a real store with a fake clock. Every storage
 * backend runs this same suite (see the *.test.ts files beside it), so a rule holds on all of them. The
 * topics live in sqs-semantics/, and share the one service this opens.
 */
export function sqsSemanticsSuite(backend: string, factory: () => StoreFactory): void {
  describe(`SQS semantics on ${backend}`, () => {
    const h = useContractService(factory);
    queuesSuite(h);
    messagesSuite(h);
    batchesSuite(h);
    longPollingSuite(h);
  });
}
