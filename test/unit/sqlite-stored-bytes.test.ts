import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { auditEntry } from '../helpers/audit-entry.ts';
import { newMessage } from '../helpers/new-message.ts';

/**
 * `--max-stored-bytes` guards a disk, so the store's size is what its files take: the WAL, which keeps every
 * changed page until a checkpoint (up to 32 MiB) and keeps its size after, counts; the disk reserve does not.
 */
describe('SQLite stored bytes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-stored-bytes-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('counts the WAL, and not the disk reserve', async () => {
    const reserveBytes = 8 * 1024 * 1024;
    const store = new SqliteStore({ dataDir: dir, durability: 'durable', diskReserveBytes: reserveBytes });
    const queue = await store.createQueue({ name: 'q', fifo: false, attributes: {}, tags: {}, now: 1 });
    // Sends and deletes: little data stays, but every page they changed is in the WAL.
    for (let i = 0; i < 40; i++) {
      const [sent] = await store.sendMessages(queue.id, [newMessage(`m${i}`, 'x'.repeat(100_000))]);
      await store.receiveMessages({
        queueId: queue.id,
        now: 2,
        max: 1,
        visibleUntil: 100,
        newReceiptToken: () => `token${i}`,
        maxInFlight: 120_000,
      });
      const receipt = { seq: sent!.seq, receiveCount: 1, receiptToken: `token${i}` };
      assert.equal(await store.deleteMessage(queue.id, receipt, { rule: 'latest', now: 2 }), 'deleted');
    }
    const walBytes = statSync(join(dir, 'sluice.db-wal')).size;
    assert.ok(walBytes > 4_000_000, `the WAL holds ${walBytes} bytes`);
    const stored = await store.storedBytes();
    // Less the few free pages the deletes left, which the next sends fill first.
    assert.ok(stored > 0.9 * walBytes, `${stored} stored bytes leave out the WAL's ${walBytes}`);
    assert.equal(statSync(join(dir, 'sluice.reserve')).size, reserveBytes);
    assert.ok(stored < walBytes + reserveBytes, `${stored} stored bytes count the reserve`);
    await store.close();
  });

  it('counts the audit trail', async () => {
    const auditDir = join(dir, 'audit');
    const store = new SqliteStore({ dataDir: auditDir, durability: 'durable', diskReserveBytes: 0 });
    const before = await store.storedBytes();
    const keep = { since: 0, newest: 1_000_000 };
    for (let i = 0; i < 400; i++) await store.appendAudit(auditEntry('d'.repeat(1000)), keep);
    const grown = (await store.storedBytes()) - before;
    assert.ok(grown > 400_000, `400 entries of 1 KB grew the stored bytes by ${grown}`);
    await store.close();
  });
});
