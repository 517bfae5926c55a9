import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type DeliveryCounts, DeliveryState } from '../../packages/server/src/store/delivery-state.ts';

/** A message as the SQL statements of the SQLite store see it: the model the delivery state must agree with. */
interface Row {
  seq: number;
  visibleAt: number;
  expiresAt: number;
  sentAt: number;
  received: boolean;
}

/** What selectVisible, countInFlight, nextVisibleAt and countMessages answer over `rows`. */
const sql = {
  visible: (rows: Row[], now: number, limit: number) =>
    rows
      .filter((row) => row.visibleAt <= now && row.expiresAt > now)
      .sort((a, b) => a.visibleAt - b.visibleAt || a.seq - b.seq)
      .slice(0, limit)
      .map((row) => row.seq),
  inFlight: (rows: Row[], now: number) => rows.filter((row) => row.visibleAt > now && row.received).length,
  nextVisibleAt: (rows: Row[], now: number) => {
    const later = rows.filter((row) => row.visibleAt > now).map((row) => row.visibleAt);
    return later.length > 0 ? Math.min(...later) : undefined;
  },
  counts: (rows: Row[], now: number): DeliveryCounts => {
    const live = rows.filter((row) => row.expiresAt > now);
    return {
      visible: live.filter((row) => row.visibleAt <= now).length,
      notVisible: live.filter((row) => row.visibleAt > now && row.received).length,
      delayed: live.filter((row) => row.visibleAt > now && !row.received).length,
      oldestSentAt: live.length > 0 ? Math.min(...live.map((row) => row.sentAt)) : undefined,
    };
  },
  seqs: (rows: Row[]) => rows.map((row) => row.seq).sort((a, b) => a - b),
  expired: (rows: Row[], now: number, limit: number) =>
    sql.seqs(rows.filter((row) => row.expiresAt <= now)).slice(0, limit),
  nextExpiryAt: (rows: Row[], now: number) => {
    const later = rows.filter((row) => row.expiresAt > now).map((row) => row.expiresAt);
    return later.length > 0 ? Math.min(...later) : undefined;
  },
  lastSeq: (rows: Row[]) => Math.max(0, ...rows.map((row) => row.seq)),
};

function add(state: DeliveryState, row: Row): void {
  state.add(row.seq, row.visibleAt, row.expiresAt, row.sentAt, row.received);
}

describe('delivery state', () => {
  it('gives visible messages oldest visibility first, then by seq, without taking them', () => {
    const state = new DeliveryState();
    add(state, { seq: 1, visibleAt: 30, expiresAt: 1000, sentAt: 0, received: false });
    add(state, { seq: 2, visibleAt: 10, expiresAt: 1000, sentAt: 0, received: false });
    add(state, { seq: 3, visibleAt: 10, expiresAt: 1000, sentAt: 0, received: false });
    add(state, { seq: 4, visibleAt: 50, expiresAt: 1000, sentAt: 0, received: false });
    assert.deepEqual(state.visibleSeqs(40, 10), [2, 3, 1]);
    assert.deepEqual(state.visibleSeqs(40, 2), [2, 3]);
    assert.equal(state.nextVisibleAt(40), 50);
    assert.deepEqual(state.counts(40), { visible: 3, notVisible: 0, delayed: 1, oldestSentAt: 0 });
  });

  it('hides a claimed message until its deadline and counts it in flight meanwhile', () => {
    const state = new DeliveryState();
    add(state, { seq: 1, visibleAt: 0, expiresAt: 1000, sentAt: 0, received: false });
    state.claim(1, 100);
    assert.deepEqual(state.visibleSeqs(10, 10), []);
    assert.equal(state.inFlight(10), 1);
    assert.equal(state.nextVisibleAt(10), 100);
    assert.deepEqual(state.visibleSeqs(100, 10), [1]);
    assert.equal(state.inFlight(100), 0);
    assert.deepEqual(state.counts(100), { visible: 1, notVisible: 0, delayed: 0, oldestSentAt: 0 });
  });

  it('skips expired messages for receivers and counts, but not for wakes', () => {
    const state = new DeliveryState();
    add(state, { seq: 1, visibleAt: 0, expiresAt: 5, sentAt: 0, received: false });
    add(state, { seq: 2, visibleAt: 0, expiresAt: 1000, sentAt: 3, received: false });
    assert.deepEqual(state.visibleSeqs(10, 10), [2]);
    assert.deepEqual(state.counts(10), { visible: 1, notVisible: 0, delayed: 0, oldestSentAt: 3 });
  });

  it('splits again when the clock goes back', () => {
    const state = new DeliveryState();
    add(state, { seq: 1, visibleAt: 50, expiresAt: 1000, sentAt: 0, received: true });
    assert.deepEqual(state.visibleSeqs(60, 10), [1]);
    assert.deepEqual(state.visibleSeqs(40, 10), []);
    assert.equal(state.inFlight(40), 1);
  });

  it('puts an older message in its place in seq order, and forgets removed ones', () => {
    const state = new DeliveryState(2);
    add(state, { seq: 5, visibleAt: 0, expiresAt: 1000, sentAt: 0, received: false });
    add(state, { seq: 9, visibleAt: 0, expiresAt: 1000, sentAt: 0, received: false });
    state.claim(9, 50);
    add(state, { seq: 7, visibleAt: 0, expiresAt: 1000, sentAt: 0, received: true });
    add(state, { seq: 1, visibleAt: 0, expiresAt: 1000, sentAt: 0, received: false });
    assert.deepEqual(state.visibleSeqs(10, 10), [1, 5, 7]);
    assert.equal(state.inFlight(10), 1);
    assert.equal(state.remove(7), true);
    assert.equal(state.remove(7), false);
    state.setVisibleAt(9, 10);
    assert.deepEqual(state.visibleSeqs(10, 10), [1, 5, 9]);
    assert.equal(state.size, 3);
  });

  it('keeps its answers through compactions of many removed messages', () => {
    const state = new DeliveryState();
    for (let seq = 1; seq <= 10_000; seq++)
      add(state, { seq, visibleAt: seq % 7, expiresAt: 1e9, sentAt: seq, received: false });
    for (let seq = 1; seq <= 10_000; seq++) if (seq % 10 !== 0) state.remove(seq);
    assert.equal(state.size, 1000);
    assert.deepEqual(state.visibleSeqs(0, 3), [70, 140, 210]);
    state.claim(70, 500);
    assert.equal(state.inFlight(1), 1);
    assert.deepEqual(state.counts(6).oldestSentAt, 10);
  });

  it('steps back exactly after it pruned its list of recently visible messages', () => {
    const state = new DeliveryState();
    const rows: Row[] = [];
    let now = 0;
    for (let seq = 1; seq <= 5000; seq++) {
      // Some are received with a zero timeout: visible again at once, and in flight after a step back.
      const row = { seq, visibleAt: now + 1, expiresAt: 1e9, sentAt: now, received: false };
      rows.push(row);
      add(state, row);
      now += 1;
      state.inFlight(now);
      if (seq % 3 === 0) {
        row.received = true;
        row.visibleAt = now;
        state.claim(seq, now);
      }
    }
    for (const back of [1, 7, 20, 999, 1001, 3000]) {
      const at = now - back;
      assert.equal(state.inFlight(at), sql.inFlight(rows, at), `back ${back}`);
      assert.equal(state.nextVisibleAt(at), sql.nextVisibleAt(rows, at), `back ${back}`);
      assert.deepEqual(state.visibleSeqs(at, 5), sql.visible(rows, at, 5), `back ${back}`);
      assert.equal(state.inFlight(now), sql.inFlight(rows, now));
    }
  });

  it('answers as SQL at its first split after a build from the table, and at steps back after it', () => {
    // The first split after a build sorts every message into its heap at once; received and delayed rows,
    // rows visible within the step-back window and expired ones all go through it.
    const rows: Row[] = [];
    for (let seq = 1; seq <= 3000; seq++) {
      const visibleAt = seq % 5 === 0 ? 5000 + seq : 2000 + seq;
      rows.push({
        seq,
        visibleAt,
        expiresAt: seq % 7 === 0 ? 2500 : 1e9,
        sentAt: seq,
        received: seq % 3 === 0,
      });
    }
    for (const firstAt of [1000, 4200, 9000]) {
      const state = DeliveryState.loading();
      for (const row of rows) state.load(row.seq, row.visibleAt, row.expiresAt, row.sentAt, row.received);
      state.loadedAll();
      for (const at of [firstAt, firstAt - 5, firstAt - 900, firstAt - 1500, firstAt + 300]) {
        assert.deepEqual(state.visibleSeqs(at, 20), sql.visible(rows, at, 20), `first ${firstAt}, at ${at}`);
        assert.equal(state.inFlight(at), sql.inFlight(rows, at), `first ${firstAt}, at ${at}`);
        assert.equal(state.nextVisibleAt(at), sql.nextVisibleAt(rows, at), `first ${firstAt}, at ${at}`);
        assert.deepEqual(state.counts(at), sql.counts(rows, at), `first ${firstAt}, at ${at}`);
      }
    }
  });

  /** Random operations on the state and on a model of its rows; after each, the state answers as SQL would. */
  function answersAsSql(runs: { numRuns: number; minLength: number; maxLength: number }): void {
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        delay: fc.integer({ min: 0, max: 40 }),
        life: fc.integer({ min: 1, max: 400 }),
      }),
      // A row dead-lettered from another queue: it keeps its older seq, and may have been received.
      fc.record({ kind: fc.constant('addOlder' as const), pick: fc.nat(), received: fc.boolean() }),
      fc.record({
        kind: fc.constant('claim' as const),
        pick: fc.nat(),
        timeout: fc.integer({ min: 0, max: 60 }),
      }),
      fc.record({
        kind: fc.constant('setVisibleAt' as const),
        pick: fc.nat(),
        at: fc.integer({ min: -10, max: 60 }),
      }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      // Mostly forward; back a little (requests answered out of the order of their times), or a lot.
      fc.record({
        kind: fc.constant('tick' as const),
        by: fc.oneof(
          { arbitrary: fc.integer({ min: -20, max: 30 }), weight: 20 },
          { arbitrary: fc.constant(-1500), weight: 1 },
        ),
      }),
      fc.record({ kind: fc.constant('receive' as const), limit: fc.integer({ min: 1, max: 12 }) }),
    );
    // size 'max': fast-check's default size keeps arrays to about ten operations.
    const scripts = fc.array(operation, {
      minLength: runs.minLength,
      maxLength: runs.maxLength,
      size: 'max',
    });
    fc.assert(
      fc.property(scripts, (operations) => {
        const state = new DeliveryState(1);
        let rows: Row[] = [];
        let now = 1000;
        let seq = 0;
        const picked = (pick: number) => (rows.length > 0 ? rows[pick % rows.length] : undefined);
        for (const op of operations) {
          if (op.kind === 'add') {
            seq += 2;
            const row = {
              seq,
              visibleAt: now + op.delay,
              expiresAt: now + op.life,
              sentAt: now,
              received: false,
            };
            rows.push(row);
            add(state, row);
          } else if (op.kind === 'addOlder') {
            // New rows take even seqs; older ones the odd seqs between them.
            const older = 2 * (op.pick % (seq / 2 + 1)) - 1;
            if (older > 0 && !rows.some((row) => row.seq === older)) {
              const row = {
                seq: older,
                visibleAt: now,
                expiresAt: now + 300,
                sentAt: now - 5,
                received: op.received,
              };
              rows.push(row);
              add(state, row);
            }
          } else if (op.kind === 'claim') {
            const row = picked(op.pick);
            if (row) {
              row.received = true;
              row.visibleAt = now + op.timeout;
              state.claim(row.seq, row.visibleAt);
            }
          } else if (op.kind === 'setVisibleAt') {
            const row = picked(op.pick);
            if (row) {
              row.visibleAt = now + op.at;
              state.setVisibleAt(row.seq, row.visibleAt);
            }
          } else if (op.kind === 'remove') {
            const row = picked(op.pick);
            if (row) {
              rows = rows.filter((other) => other !== row);
              assert.equal(state.remove(row.seq), true);
            }
          } else if (op.kind === 'tick') {
            now += op.by;
          } else {
            assert.deepEqual(state.visibleSeqs(now, op.limit), sql.visible(rows, now, op.limit));
          }
          assert.equal(state.inFlight(now), sql.inFlight(rows, now));
          assert.equal(state.nextVisibleAt(now), sql.nextVisibleAt(rows, now));
          assert.deepEqual(state.counts(now), sql.counts(rows, now));
          assert.equal(state.size, rows.length);
          // What the in-memory message table asks of it besides.
          assert.deepEqual(state.seqs(), sql.seqs(rows));
          assert.deepEqual(state.expiredSeqs(now, 3), sql.expired(rows, now, 3));
          assert.equal(state.nextExpiryAt(now), sql.nextExpiryAt(rows, now));
          assert.equal(state.lastSeq(), sql.lastSeq(rows));
        }
      }),
      { numRuns: runs.numRuns },
    );
  }

  it('answers as the SQL statements do over the same rows, whatever the operations (property)', () => {
    answersAsSql({ numRuns: 300, minLength: 0, maxLength: 200 });
  });

  it('answers as SQL would over long runs too, where the list of recently visible messages is pruned', () => {
    answersAsSql({ numRuns: 4, minLength: 4000, maxLength: 6000 });
  });
});
