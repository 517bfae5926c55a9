import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type {
  MoveDestination,
  ReceiveRequest,
  StoredMessage,
} from '../../packages/server/src/store/contract.ts';
import { runNow } from '../../packages/server/src/store/plan.ts';
import {
  type AttemptClaims,
  moveBatchPlan,
  type PlanSteps,
  receivePlan,
} from '../../packages/server/src/store/planner.ts';
import type { MessageRow, MoveTaskRow } from '../../packages/server/src/store/rows.ts';

/**
 * The shared receive and move plans, run over a model store kept in memory (what each step means, without
 * SQL): the decisions are tested here once; test/contract and test/store check that both real stores carry
 * them out.
 */

const NOW = 1_000_000;
const SOURCE = 1;
const DLQ = 2;

/** A store in memory answering every step at once, as SQLite does. */
class ModelSteps implements PlanSteps {
  readonly messages = new Map<number, MessageRow>();
  readonly fifo = new Map<number, boolean>();
  readonly groups = new Map<string, number>();
  readonly tenants = new Map<string, number>();
  readonly attempts = new Map<string, AttemptClaims>();
  readonly tasks = new Map<string, MoveTaskRow>();
  private turn = 0;
  private nextSeq = 1;

  add(queueId: number, row: Partial<MessageRow> = {}): MessageRow {
    const seq = this.nextSeq++;
    const message: MessageRow = {
      seq,
      queue_id: queueId,
      message_id: `m${seq}`,
      body: `body ${seq}`,
      message_attributes: null,
      system_attributes: null,
      md5_of_body: '',
      md5_of_message_attributes: null,
      md5_of_system_attributes: null,
      sender_id: 'me',
      sent_at: NOW - 1000,
      visible_at: NOW - 1000 + seq,
      expires_at: NOW + 1_000_000,
      receive_count: 0,
      first_received_at: null,
      receipt_token: null,
      delivery_started_at: null,
      dead_letter_source_arn: null,
      group_id: null,
      deduplication_id: null,
      ...row,
    };
    this.messages.set(seq, message);
    if (message.group_id !== null) {
      if (this.fifo.get(queueId)) this.refreshGroupRow(queueId, message.group_id);
      else this.noteTenant(queueId, message.group_id);
    }
    return message;
  }

  private of(queueId: number): MessageRow[] {
    return [...this.messages.values()]
      .filter((row) => row.queue_id === queueId)
      .sort((a, b) => a.seq - b.seq);
  }

  private refreshGroupRow(queueId: number, groupId: string): void {
    const head = this.of(queueId).find((row) => row.group_id === groupId);
    if (head) this.groups.set(`${queueId}\n${groupId}`, head.visible_at);
  }

  inFlightUpperBound = (queueId: number, now: number, limit: number) =>
    Math.min(limit, this.of(queueId).filter((row) => row.visible_at > now).length);
  countInFlight = (queueId: number, now: number, limit: number) =>
    Math.min(limit, this.of(queueId).filter((row) => row.visible_at > now && row.receive_count > 0).length);
  visible = (queueId: number, now: number, limit: number) =>
    this.of(queueId)
      .filter((row) => row.visible_at <= now && row.expires_at > now)
      .sort((a, b) => a.visible_at - b.visible_at || a.seq - b.seq)
      .slice(0, limit);
  visibleOfTenant = (queueId: number, tenant: string, now: number, limit: number) =>
    this.visible(queueId, now, Number.MAX_SAFE_INTEGER)
      .filter((row) => row.group_id === tenant)
      .slice(0, limit);
  tenantsToServe = (queueId: number, limit: number) =>
    [...this.tenants.entries()]
      .filter(([key]) => key.startsWith(`${queueId}\n`))
      .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1))
      .slice(0, limit)
      .map(([key]) => key.slice(`${queueId}\n`.length));
  serveTenant = (queueId: number, tenant: string) => {
    this.tenants.set(`${queueId}\n${tenant}`, ++this.turn);
  };
  tenantHasMessages = (queueId: number, tenant: string) =>
    this.of(queueId).some((row) => row.group_id === tenant);
  forgetTenant = (queueId: number, tenant: string) => {
    this.tenants.delete(`${queueId}\n${tenant}`);
  };
  noteTenant = (queueId: number, tenant: string) => {
    for (const name of [tenant, '']) {
      const key = `${queueId}\n${name}`;
      if (this.tenants.has(key)) continue;
      this.tenants.set(key, 0);
      if (name === '') for (const row of this.of(queueId)) row.group_id ??= '';
    }
  };
  joinTenantless = (queueId: number, seq: number) => {
    if (!this.tenants.has(`${queueId}\n`)) this.tenants.set(`${queueId}\n`, 0);
    this.messages.get(seq)!.group_id ??= '';
  };
  hasTenants = (queueId: number) => [...this.tenants.keys()].some((key) => key.startsWith(`${queueId}\n`));
  availableGroups = (queueId: number, now: number, limit: number, taken: readonly string[]) =>
    [...this.groups.entries()]
      .filter(([key, at]) => key.startsWith(`${queueId}\n`) && at <= now)
      .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1))
      .map(([key]) => key.slice(`${queueId}\n`.length))
      .filter((groupId) => !taken.includes(groupId))
      .slice(0, limit);
  groupMessages = (queueId: number, groupId: string, limit: number) =>
    this.of(queueId)
      .filter((row) => row.group_id === groupId)
      .slice(0, limit);
  lockGroup = () => {};
  groupHeadVisibleAt = (queueId: number, groupId: string) =>
    this.of(queueId).find((row) => row.group_id === groupId)?.visible_at;
  setGroupAvailableAt = (queueId: number, groupId: string, at: number) => {
    this.groups.set(`${queueId}\n${groupId}`, at);
  };
  addGroupIfAbsent = (queueId: number, groupId: string, at: number) => {
    if (!this.groups.has(`${queueId}\n${groupId}`)) this.groups.set(`${queueId}\n${groupId}`, at);
  };
  forgetGroup = (queueId: number, groupId: string) => {
    this.groups.delete(`${queueId}\n${groupId}`);
  };
  rebuildGroupRows = (queueId: number) => {
    for (const key of this.groups.keys()) if (key.startsWith(`${queueId}\n`)) this.groups.delete(key);
    for (const row of this.of(queueId))
      if (row.group_id !== null) this.refreshGroupRow(queueId, row.group_id);
  };
  isFifo = (queueId: number) => this.fifo.get(queueId) ?? false;
  writeClaims = (_request: ReceiveRequest, claimed: StoredMessage[]) => {
    for (const message of claimed) {
      const row = this.messages.get(message.seq)!;
      Object.assign(row, {
        visible_at: message.visibleAt,
        receive_count: message.receiveCount,
        first_received_at: message.firstReceivedAt,
        receipt_token: message.receiptToken,
        delivery_started_at: message.deliveryStartedAt,
      });
    }
  };
  moveToDeadLetter = (seq: number, deadLetter: { queueId: number; sourceArn: string }, now: number) => {
    Object.assign(this.messages.get(seq)!, {
      queue_id: deadLetter.queueId,
      visible_at: now,
      receipt_token: null,
      dead_letter_source_arn: deadLetter.sourceArn,
    });
  };
  attemptClaims = (queueId: number, attemptId: string) => this.attempts.get(`${queueId}\n${attemptId}`);
  reclaim = (queueId: number, claims: AttemptClaims, visibleUntil: number) =>
    // In an order of its own (as PostgreSQL's UPDATE … RETURNING): the plan restores the claims' order.
    claims
      .flatMap(([seq, receiveCount]) => {
        const row = this.messages.get(seq);
        return row?.queue_id === queueId && row.receive_count === receiveCount ? [row] : [];
      })
      .map((row) => Object.assign(row, { visible_at: visibleUntil }))
      .sort((a, b) => b.seq - a.seq);
  rememberAttempt = (queueId: number, attempt: { id: string }, claims: AttemptClaims) => {
    this.attempts.set(`${queueId}\n${attempt.id}`, claims);
  };
  lockMoveTask = (handle: string) => this.tasks.get(handle);
  movable = (queueId: number, options: { upToSeq: number; now: number; limit: number; fifo: boolean }) =>
    this.of(queueId)
      .filter(
        (row) =>
          row.seq <= options.upToSeq &&
          row.visible_at <= options.now &&
          row.expires_at > options.now &&
          !(
            options.fifo &&
            this.of(queueId).some(
              (earlier) =>
                earlier.group_id === row.group_id &&
                earlier.seq < row.seq &&
                earlier.visible_at > options.now,
            )
          ),
      )
      .slice(0, options.limit);
  insertMoved = (
    seq: number,
    destination: MoveDestination,
    moved: { messageId: string; now: number; groupId: string | null },
  ) => {
    const source = this.messages.get(seq)!;
    const copy = this.nextSeq++;
    this.messages.set(copy, {
      ...source,
      seq: copy,
      queue_id: destination.queueId,
      message_id: moved.messageId,
      sent_at: moved.now,
      visible_at: destination.visibleAt,
      expires_at: destination.expiresAt,
      group_id: moved.groupId,
      receive_count: 0,
      receipt_token: null,
      first_received_at: null,
      delivery_started_at: null,
      dead_letter_source_arn: null,
    });
  };
  deleteMessage = (seq: number) => {
    this.messages.delete(seq);
  };
  addMoved = (handle: string, count: number) => {
    const task = this.tasks.get(handle)!;
    task.moved += count;
    return { ...task };
  };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function request(overrides: Partial<ReceiveRequest> = {}): ReceiveRequest {
  let token = 0;
  return {
    queueId: SOURCE,
    now: NOW,
    max: 10,
    visibleUntil: NOW + 30_000,
    newReceiptToken: () => `t${++token}`,
    maxInFlight: 120_000,
    ...overrides,
  };
}

function receiveOnce(steps: ModelSteps, overrides: Partial<ReceiveRequest> = {}) {
  const receive = request(overrides);
  return runNow(
    receivePlan(steps, receive, {
      fifo: steps.isFifo(receive.queueId),
      deadLetterFifo: receive.deadLetter !== undefined && steps.isFifo(receive.deadLetter.queueId),
    }),
  );
}

const deadLetter = (maxReceiveCount: number) => ({
  queueId: DLQ,
  maxReceiveCount,
  sourceArn: 'arn:source',
  resetSentAt: false,
  retentionMs: 1000,
});

describe('receive plan: standard and fair queues', () => {
  it('takes the oldest visible first, at most max, never a message in flight', () => {
    const steps = new ModelSteps();
    const inFlight = steps.add(SOURCE, { visible_at: NOW + 5, receive_count: 1 });
    const rows = Array.from({ length: 12 }, () => steps.add(SOURCE));
    const result = receiveOnce(steps);
    assert.deepEqual(
      result.messages.map((message) => message.seq),
      rows.slice(0, 10).map((row) => row.seq),
    );
    assert.ok(!result.messages.some((message) => message.seq === inFlight.seq));
    assert.ok(result.messages.every((message) => message.receiveCount === 1 && message.receiptToken));
  });

  it('lets a quiet tenant through a busy tenant’s backlog, each taking an equal share', () => {
    const steps = new ModelSteps();
    for (let i = 0; i < 100; i++) steps.add(SOURCE, { group_id: 'busy' });
    for (let i = 0; i < 5; i++) steps.add(SOURCE, { group_id: 'quiet' });
    const counts = (result: ReturnType<typeof receiveOnce>) =>
      groupBy(result.messages, (message) => message.groupId ?? '');
    const first = counts(receiveOnce(steps));
    assert.equal(first.get('quiet')?.length, 5);
    assert.equal(first.get('busy')?.length, 5);
    // The quiet tenant is empty now: the busy one takes the whole next receive.
    assert.equal(counts(receiveOnce(steps)).get('busy')?.length, 10);
  });

  it('refuses at the in-flight limit, claiming nothing', () => {
    const steps = new ModelSteps();
    for (let i = 0; i < 3; i++) steps.add(SOURCE, { visible_at: NOW + 5, receive_count: 1 });
    steps.add(SOURCE);
    assert.deepEqual(receiveOnce(steps, { maxInFlight: 3 }), {
      messages: [],
      overLimit: true,
      movedToDeadLetter: 0,
    });
    // Delayed messages are invisible but not in flight.
    const delayed = new ModelSteps();
    for (let i = 0; i < 3; i++) delayed.add(SOURCE, { visible_at: NOW + 5 });
    delayed.add(SOURCE);
    assert.equal(receiveOnce(delayed, { maxInFlight: 3 }).messages.length, 1);
  });

  it('ends where the admit refuses, with what it claimed', () => {
    const steps = new ModelSteps();
    for (let i = 0; i < 5; i++) steps.add(SOURCE);
    let room = 2;
    assert.equal(receiveOnce(steps, { admit: () => room-- > 0 }).messages.length, 2);
  });

  it('moves messages received maxReceiveCount times to the DLQ and still returns max live ones', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(4), { minLength: 0, maxLength: 40 }),
        fc.integer({ min: 1, max: 10 }),
        fc.boolean(),
        (receiveCounts, max, zeroVisibility) => {
          const steps = new ModelSteps();
          for (const count of receiveCounts) steps.add(SOURCE, { receive_count: count, receipt_token: 't' });
          const result = receiveOnce(steps, {
            max,
            deadLetter: deadLetter(3),
            // A zero visibility timeout leaves claimed messages visible: none may be claimed twice.
            visibleUntil: zeroVisibility ? NOW : NOW + 30_000,
          });
          const seqs = result.messages.map((message) => message.seq);
          assert.equal(new Set(seqs).size, seqs.length);
          assert.equal(
            result.messages.length,
            Math.min(max, receiveCounts.filter((count) => count < 3).length),
          );
          assert.ok(result.messages.every((message) => message.receiveCount <= 3));
          const inDlq = [...steps.messages.values()].filter((row) => row.queue_id === DLQ);
          assert.equal(inDlq.length, result.movedToDeadLetter);
          assert.ok(
            inDlq.every((row) => row.receive_count >= 3 && row.dead_letter_source_arn === 'arn:source'),
          );
        },
      ),
    );
  });
});

describe('receive plan: FIFO queues', () => {
  it('takes each group in order up to its first invisible message, groups visible longest first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ group: fc.constantFrom('a', 'b', 'c', 'd'), inFlight: fc.boolean() }), {
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 10 }),
        (messages, max) => {
          const steps = new ModelSteps();
          steps.fifo.set(SOURCE, true);
          const rows = messages.map(({ group, inFlight }) =>
            steps.add(SOURCE, {
              group_id: group,
              ...(inFlight ? { visible_at: NOW + 10, receive_count: 1, receipt_token: 't' } : {}),
            }),
          );
          const result = receiveOnce(steps, { max });
          assert.ok(result.messages.length <= max);
          const byGroup = groupBy(result.messages, (message) => message.groupId!);
          for (const [group, claimed] of byGroup) {
            const ofGroup = rows.filter((row) => row.group_id === group);
            // A prefix of the group, in seq order, all visible before the receive.
            assert.deepEqual(
              claimed!.map((message) => message.seq),
              ofGroup.slice(0, claimed!.length).map((row) => row.seq),
            );
          }
          // Short of max, every group was taken up to its first message in flight.
          if (result.messages.length < max) {
            for (const group of ['a', 'b', 'c', 'd']) {
              const next = rows.filter((row) => row.group_id === group)[byGroup.get(group)?.length ?? 0];
              if (next) assert.ok(next.visible_at > NOW, `group ${group} stopped at a message in flight`);
            }
          }
        },
      ),
    );
  });

  it('asks for one group first, then for as many as messages are still wanted, never for one it took', () => {
    // PostgreSQL holds every group it answers until the receive commits: a receive must not ask for groups it
    // will not take from, or concurrent receivers find them held.
    const steps = new ModelSteps();
    steps.fifo.set(SOURCE, true);
    for (let seq = 0; seq < 30; seq++) steps.add(SOURCE, { group_id: seq < 12 ? 'a' : seq < 15 ? 'b' : 'c' });
    const asked: Array<[limit: number, taken: string[], answered: string[]]> = [];
    const inOrder = steps.availableGroups;
    steps.availableGroups = (queueId: number, now: number, limit: number, taken: readonly string[]) => {
      const groups = inOrder(queueId, now, limit, taken);
      asked.push([limit, [...taken], groups]);
      return groups;
    };
    assert.equal(receiveOnce(steps, { max: 10 }).messages.length, 10);
    assert.deepEqual(asked, [[1, [], ['a']]]);
    asked.length = 0;
    // Group a is held by the messages in flight: b's 3, then c's first 7.
    assert.deepEqual(
      receiveOnce(steps, { max: 10, now: NOW + 1 }).messages.map((message) => message.groupId),
      [...'bbbccccccc'],
    );
    assert.deepEqual(asked, [
      [1, [], ['b']],
      [7, ['b'], ['c']],
    ]);
    asked.length = 0;
    // Groups b and c are held now, a too: nothing available, and one question says so.
    assert.equal(receiveOnce(steps, { max: 10, now: NOW + 2 }).messages.length, 0);
    assert.deepEqual(asked, [[1, [], []]]);
  });

  it('answers a repeated attempt with the messages it claimed, in the same order', () => {
    const steps = new ModelSteps();
    steps.fifo.set(SOURCE, true);
    for (const group of ['b', 'a', 'b', 'a']) steps.add(SOURCE, { group_id: group });
    const attempt = { id: 'retry', expiresAt: NOW + 300_000 };
    const first = receiveOnce(steps, { attempt });
    const again = receiveOnce(steps, { attempt, now: NOW + 1 });
    assert.deepEqual(
      again.messages.map((message) => message.seq),
      first.messages.map((message) => message.seq),
    );
    assert.deepEqual(
      first.messages.map((message) => message.groupId),
      ['b', 'b', 'a', 'a'],
    );
  });
});

describe('move-task batch plan', () => {
  const destination = (queueId: number, fifo = false): MoveDestination => ({
    queueId,
    fifo,
    visibleAt: NOW,
    expiresAt: NOW + 1000,
  });
  const task = (steps: ModelSteps, upToSeq: number): string => {
    steps.tasks.set('task', {
      handle: 'task',
      source_arn: 'arn:dlq',
      source_queue_id: DLQ,
      destination_arn: null,
      max_per_second: null,
      status: 'RUNNING',
      moved: 0,
      to_move: upToSeq,
      up_to_seq: upToSeq,
      started_at: NOW,
      ended_at: null,
      failure_reason: null,
    });
    return 'task';
  };
  let ids = 0;
  const move = (
    steps: ModelSteps,
    route: (origin: string | undefined) => MoveDestination | undefined,
    max = 10,
  ) =>
    runNow(moveBatchPlan(steps, { handle: 'task', now: NOW, max, route, newMessageId: () => `new${++ids}` }));

  it('moves lowest seq first up to the task’s last seq, and says whether more are left', () => {
    const steps = new ModelSteps();
    const rows = Array.from({ length: 5 }, () => steps.add(DLQ, { dead_letter_source_arn: 'arn:source' }));
    task(steps, rows[3]!.seq);
    const first = move(steps, () => destination(SOURCE), 3);
    assert.equal(first.moved, 3);
    assert.equal(first.more, true);
    const second = move(steps, () => destination(SOURCE), 3);
    assert.equal(second.moved, 1);
    assert.equal(second.more, false);
    assert.equal(second.task?.moved, 4);
    assert.deepEqual(second.destinations, [SOURCE]);
    assert.equal([...steps.messages.values()].filter((row) => row.queue_id === DLQ).length, 1);
  });

  it('stops at a message it has no destination for, and names its origin', () => {
    const steps = new ModelSteps();
    steps.add(DLQ, { dead_letter_source_arn: 'arn:a' });
    steps.add(DLQ, { dead_letter_source_arn: 'arn:gone' });
    steps.add(DLQ, { dead_letter_source_arn: 'arn:a' });
    task(steps, 3);
    const outcome = move(steps, (origin) => (origin === 'arn:a' ? destination(SOURCE) : undefined));
    assert.equal(outcome.moved, 1);
    assert.deepEqual(outcome.unroutable, { origin: 'arn:gone' });
    assert.equal(outcome.more, true);
  });

  it('on a FIFO source, leaves a group behind its message in flight', () => {
    const steps = new ModelSteps();
    steps.fifo.set(DLQ, true);
    steps.add(DLQ, { group_id: 'g', visible_at: NOW + 10, receive_count: 1 });
    steps.add(DLQ, { group_id: 'g' });
    const other = steps.add(DLQ, { group_id: 'h' });
    task(steps, other.seq);
    const outcome = move(steps, () => destination(SOURCE, true));
    assert.equal(outcome.moved, 1);
    assert.ok(steps.groups.has(`${SOURCE}\nh`), 'the moved message’s group is known to the FIFO destination');
  });

  it('moves nothing for a task no longer running', () => {
    const steps = new ModelSteps();
    steps.add(DLQ);
    task(steps, 1);
    steps.tasks.get('task')!.status = 'CANCELLING';
    assert.equal(move(steps, () => destination(SOURCE)).moved, 0);
  });
});
