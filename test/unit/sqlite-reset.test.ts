import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { NewMessage } from '../../packages/server/src/store/contract.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { newMessage } from '../helpers/new-message.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-reset-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const now = 1;

/** A FIFO message of group `g` with a deduplication id. */
function message(body: string, deduplicationId: string): NewMessage {
  return {
    ...newMessage(`id-${body}`, body),
    groupId: 'g',
    deduplication: { scope: '', id: deduplicationId, expiresAt: 1_000_000 },
  };
}

it('a reset leaves the SQLite store as a fresh one, with ids that keep growing', async () => {
  const store = new SqliteStore({ dataDir: dir });
  const newQueue = (name: string) => store.createQueue({ name, fifo: true, attributes: {}, tags: {}, now });
  const orders = await newQueue('orders.fifo');
  await store.sendMessages(orders.id, [message('a', 'dedup-1')]);
  assert.equal(await store.purgeQueue(orders.id, now, 60_000), true);
  await store.sendMessages(orders.id, [message('b', 'dedup-2')]);
  await store.deleteQueue((await newQueue('gone.fifo')).id, now);
  await store.createMoveTask({
    handle: 'task',
    sourceArn: 'arn:aws:sqs:us-east-1:000000000000:orders.fifo',
    sourceQueueId: orders.id,
    destinationArn: undefined,
    maxPerSecond: undefined,
    toMove: 1,
    upToSeq: 1,
    startedAt: now,
  });
  await store.recordQueueSamples([
    {
      queue: 'orders.fifo',
      at: now,
      periodMs: 10_000,
      visible: 1,
      notVisible: 0,
      delayed: 0,
      oldestAgeSeconds: 0,
      sent: 1,
      received: 0,
      deleted: 0,
      emptyReceives: 0,
      sentBytes: 1,
    },
  ]);
  await store.addQueueActivity([
    { queue: 'orders.fifo', sent: 1, received: 0, deleted: 0, emptyReceives: 0, sentBytes: 1 },
  ]);
  await store.saveClusterState('dlq-alarms', '[]');

  await store.reset();

  assert.deepEqual(await store.listQueues({ limit: 10 }), []);
  assert.equal(await store.getQueue('orders.fifo'), undefined);
  assert.equal(await store.queueDeletedAt('gone.fifo'), undefined);
  assert.deepEqual(await store.countMessages(orders.id, now), {
    visible: 0,
    notVisible: 0,
    delayed: 0,
    oldestSentAt: undefined,
  });
  assert.equal(await store.getMoveTask('task'), undefined);
  assert.deepEqual(await store.queueSamples('orders.fifo', 0), []);
  assert.deepEqual(await store.takeQueueActivity(), []);
  assert.equal(await store.clusterState('dlq-alarms'), undefined);

  // The same name is a new queue: a new id (a request begun before the reset cannot reach it), no purge
  // window, no deduplication id remembered.
  const again = await newQueue('orders.fifo');
  assert.ok(again.id > orders.id);
  assert.equal(await store.purgeQueue(again.id, now, 60_000), true);
  const [sent] = await store.sendMessages(again.id, [message('c', 'dedup-1')]);
  assert.equal(sent!.duplicate, false);
  await store.close();

  // And it is on disk: a restart finds the store as the reset left it.
  const reopened = new SqliteStore({ dataDir: dir });
  assert.deepEqual(
    (await reopened.listQueues({ limit: 10 })).map((queue) => queue.name),
    ['orders.fifo'],
  );
  await reopened.close();
});
