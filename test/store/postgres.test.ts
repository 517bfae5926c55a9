import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { NewMessage, Store } from '../../packages/server/src/store/contract.ts';
import type { TriageStore } from '../../packages/server/src/store/triage.ts';
import type { StoreFactory } from '../contract/harness.ts';
import { auditEntry } from '../helpers/audit-entry.ts';
import { newMessage } from '../helpers/new-message.ts';
import { postgresFactory } from '../helpers/store-factories.ts';
import { storeContractSuite } from './store-contract.ts';

// A real PostgreSQL (127.0.0.1:5432), on a fresh database dropped afterwards.
storeContractSuite('PostgreSQL', postgresFactory);

describe('PostgreSQL store: round trips', () => {
  let made: StoreFactory;
  let store: Store;
  before(async () => {
    made = postgresFactory();
    store = await made.open();
  });
  after(async () => {
    await store?.close();
    await made?.destroy();
  });

  /** The statements the store sends to PostgreSQL while `work` runs. */
  const statementsOf = async (work: () => Promise<unknown>): Promise<number> => {
    const query = pg.Client.prototype.query;
    let statements = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      statements++;
      return (query as (...given: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      await work();
    } finally {
      pg.Client.prototype.query = query;
    }
    return statements;
  };

  it('sends a FIFO batch of ten in as many statements as a batch of one', async () => {
    // Each statement is a round trip, and the group rows a send locks stay locked until it commits: a send of
    // five statements a message held its groups ten times as long as one of five a batch.
    const queue = await store.createQueue({
      name: 'batch.fifo',
      fifo: true,
      attributes: {},
      tags: {},
      now: 1,
    });
    const fifoMessage = (n: number): NewMessage => ({
      ...newMessage(`m${n}`, `body ${n}`),
      groupId: `g${n % 4}`,
      deduplication: { scope: 'queue', id: `d${n}`, expiresAt: 300_001 },
    });
    await store.sendMessages(queue.id, [fifoMessage(100)]); // the queue's kind is read once, then cached
    const one = await statementsOf(() => store.sendMessages(queue.id, [fifoMessage(0)]));
    const ten = await statementsOf(() =>
      store.sendMessages(
        queue.id,
        Array.from({ length: 10 }, (_, i) => fifoMessage(i + 1)),
      ),
    );
    assert.equal(ten, one);
  });

  it('sends a standard batch of ten in one statement, as a batch of one', async () => {
    const queue = await store.createQueue({ name: 'batch', fifo: false, attributes: {}, tags: {}, now: 1 });
    await store.sendMessages(queue.id, [newMessage('first', 'body')]); // the queue's kind is read once, then cached
    const one = await statementsOf(() => store.sendMessages(queue.id, [newMessage('m0', 'body 0')]));
    const ten = await statementsOf(() =>
      store.sendMessages(
        queue.id,
        Array.from({ length: 10 }, (_, i) => newMessage(`m${i + 1}`, `body ${i + 1}`)),
      ),
    );
    assert.deepEqual([one, ten], [1, 1]);
  });

  it('counts the audit trail in the stored bytes, which --max-stored-bytes caps', async () => {
    const triage = store as Store & TriageStore;
    const before = await store.storedBytes!();
    const keep = { since: 0, newest: 1_000_000 };
    for (let i = 0; i < 100; i++) await triage.appendAudit(auditEntry('d'.repeat(1000)), keep);
    const grown = (await store.storedBytes!()) - before;
    assert.ok(grown > 100_000, `100 entries of 1 KB grew the stored bytes by ${grown}`);
  });
});
