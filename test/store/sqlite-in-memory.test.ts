import assert from 'node:assert/strict';
import { it } from 'node:test';
import { IN_MEMORY } from '../../packages/server/src/store/sqlite/options.ts';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { newMessage } from '../helpers/new-message.ts';

/**
 * In memory, the messages are not in the database (memory/message-table.ts): a write's message changes are
 * not undone by a rollback, so no write may run twice when another of its group commit fails.
 */
it('a write that fails in a group commit leaves the others of the commit applied once, in memory', async () => {
  const store = new SqliteStore({ dataDir: IN_MEMORY });
  const queue = await store.createQueue({ name: 'work', fifo: false, attributes: {}, tags: {}, now: 0 });
  // Queued in one turn of the event loop: one group commit. The second create of the name fails (UNIQUE).
  const [sent, again] = await Promise.allSettled([
    store.sendMessages(queue.id, [newMessage('m1', 'body')]),
    store.createQueue({ name: 'work', fifo: false, attributes: {}, tags: {}, now: 0 }),
  ]);
  assert.equal(sent.status, 'fulfilled');
  assert.equal(again.status, 'rejected');
  const counts = await store.countMessages(queue.id, 1);
  assert.equal(counts.visible, 1);
  await store.close();
});
