import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import { EventSourceMappings } from '../../packages/server/src/core/event-source/event-source-mappings.ts';
import type { EventSourceMapping } from '../../packages/server/src/core/event-source/mapping-config.ts';
import type { MappingStore } from '../../packages/server/src/core/event-source/mapping-store.ts';
import type { QueueRecord } from '../../packages/server/src/store/contract.ts';

const ARN = 'arn:aws:sqs:us-east-1:000000000000:orders';

describe("the config file's mappings, made at start", () => {
  it('updates the mapping another node made between the read and the create, rather than failing the start', async () => {
    // Another node, started with the same config file, made the mapping after this one read none.
    const kept: EventSourceMapping[] = [
      {
        uuid: '00000000-0000-4000-8000-000000000001',
        eventSourceArn: ARN,
        functionName: 'orders-fn',
        batchSize: 10,
        maximumBatchingWindowInSeconds: 0,
        reportBatchItemFailures: false,
        enabled: true,
        stateTransitionReason: 'USER_INITIATED',
        lastModified: 1,
        functionTimeoutSeconds: 3,
      },
    ];
    let reads = 0;
    const store: MappingStore = {
      loadMappings: async () => (reads++ === 0 ? [] : kept.map((mapping) => ({ ...mapping }))),
      saveMapping: async () => assert.fail('whole-document saves race: changes go through changeMapping'),
      async changeMapping(uuid, change) {
        const index = kept.findIndex((mapping) => mapping.uuid === uuid);
        const next = index < 0 ? undefined : change(kept[index]!);
        if (next) kept[index] = next;
        return next;
      },
      async addMapping(mapping) {
        const other = kept.find(
          (candidate) =>
            candidate.eventSourceArn === mapping.eventSourceArn &&
            candidate.functionName === mapping.functionName,
        );
        if (other) return other.uuid;
        kept.push(mapping);
        return undefined;
      },
      deleteMapping: async () => {},
    };
    const queue = {
      id: 1,
      name: 'orders',
      fifo: false,
      deduplicatesPerGroup: false,
      attributes: { VisibilityTimeout: '30' },
      tags: {},
      createdAt: 0,
      lastModifiedAt: 0,
    } satisfies QueueRecord;
    const mappings = new EventSourceMappings({
      store,
      sqs: {
        ReceiveMessage: async () => assert.fail('not polling'),
        DeleteMessageBatch: async () => assert.fail('not polling'),
      },
      queues: { queueByArn: async (arn) => (arn === ARN ? queue : undefined), queueUrl: () => '' },
      clock: new FakeClock(),
      region: 'us-east-1',
      accountId: '000000000000',
      observer: { invoked() {}, filteredOut() {} },
      onError: (error) => assert.fail(error as Error),
      onNews() {},
    });
    await mappings.configure({ EventSourceArn: ARN, FunctionName: 'orders-fn', BatchSize: 5 });
    assert.equal(kept.length, 1);
    assert.equal(kept[0]!.uuid, '00000000-0000-4000-8000-000000000001');
    assert.equal(kept[0]!.batchSize, 5);
  });
});
