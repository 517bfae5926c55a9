import type {
  ChangeVisibilityOutcome,
  ChangeVisibilityRequest,
  DeadLetterTarget,
  DeleteOutcome,
  MessageReceipt,
  MoveDestination,
  MoveOutcome,
  MoveRequest,
  ReceiptCheck,
  ReceiveRequest,
  ReceiveResult,
  StoredMessage,
} from './contract.ts';
import { type Answer, answer, type Plan } from './plan.ts';
import {
  type MessageState,
  type ReceiptBounds,
  receiptBounds,
  receiptRefusal,
  visibilityChangeRefusal,
} from './receipts.ts';
import { type MessageRow, type MoveTaskRow, messageRowBytes, toMessage, toMoveTask } from './rows.ts';
import type { SendSteps } from './send-plan.ts';

/**
 * The receive and the move task's batch, decided once for both stores: which messages a receive takes, in
 * which order (fair-queue tenant turns, FIFO group order), which go to the dead-letter queue instead, and
 * which messages a move task's batch moves where. A store decides inside its transaction, for atomicity,
 * by running these plans (plan.ts) over its own statements, the `PlanSteps` below; the stores differ only
 * in SQL dialect and in how they lock (PostgreSQL: row locks, SKIP LOCKED; SQLite: one writer).
 */

/** How many fair-queue tenants one receive looks at, least recently served first. */
export const TENANTS_PER_RECEIVE = 32;
/** How many available FIFO groups one receive looks at. */
export const GROUPS_PER_RECEIVE = 32;

/** What a FIFO receive attempt claimed: each message's seq and the receive count it was claimed at. */
export type AttemptClaims = Array<[seq: number, receiveCount: number]>;

/** The in-flight bound of a receive (ReceiveRequest.maxInFlight). */
export interface InFlightSteps {
  /**
   * A number at least the queue's in-flight count while that is under `limit`, and `limit` or more
   * otherwise: its invisible messages, counted from the index without reading rows (or less, when the store
   * knows a tighter bound).
   */
  inFlightUpperBound(queueId: number, now: number, limit: number): Answer<number>;
  /** The queue's messages in flight (invisible after a receive), counted up to `limit`. */
  countInFlight(queueId: number, now: number, limit: number): Answer<number>;
}

/** Standard queues, and the turns of fair queues' tenants. */
export interface TenantSteps {
  /** Up to `limit` visible unexpired messages, oldest visibility first, then seq; rows another receiver holds are skipped. */
  visible(queueId: number, now: number, limit: number): Answer<Iterable<MessageRow>>;
  /** `visible`, of one tenant's messages. */
  visibleOfTenant(queueId: number, tenant: string, now: number, limit: number): Answer<MessageRow[]>;
  /** The queue's fair-queue tenants, least recently served first, at most `limit`; none for a queue without. */
  tenantsToServe(queueId: number, limit: number): Answer<string[]>;
  /** The tenant was served now: it goes behind every other tenant of the queue. */
  serveTenant(queueId: number, tenant: string): Answer<void>;
  tenantHasMessages(queueId: number, tenant: string): Answer<boolean>;
  forgetTenant(queueId: number, tenant: string): Answer<void>;
  /**
   * `tenant` and '' (messages without a group) become tenants of the queue, if not yet; when '' is new, the
   * queue's messages without a group join it.
   */
  noteTenant(queueId: number, tenant: string): Answer<void>;
  /** The message `seq`, without a group, joins the fair queue's tenant '' (which becomes a tenant if not yet). */
  joinTenantless(queueId: number, seq: number): Answer<void>;
  hasTenants(queueId: number): Answer<boolean>;
}

/** FIFO groups: the fifo_groups rows say when each group's oldest message is visible. */
export interface GroupSteps {
  /**
   * Up to `limit` groups whose row says available at `now`, earliest first, none of them in `taken` (the groups
   * this receive already took from); groups another receiver holds are skipped, and the ones answered are held
   * until the transaction ends.
   */
  availableGroups(queueId: number, now: number, limit: number, taken: readonly string[]): Answer<string[]>;
  /** The group's first `limit` messages, in seq order, in any state. */
  groupMessages(queueId: number, groupId: string, limit: number): Answer<MessageRow[]>;
  /** Holds the group's row until the transaction ends (a store with one writer has nothing to do). */
  lockGroup(queueId: number, groupId: string): Answer<void>;
  /** When the group's oldest message is (or was) visible; undefined when the group has no message. */
  groupHeadVisibleAt(queueId: number, groupId: string): Answer<number | undefined>;
  setGroupAvailableAt(queueId: number, groupId: string, at: number): Answer<void>;
  addGroupIfAbsent(queueId: number, groupId: string, at: number): Answer<void>;
  forgetGroup(queueId: number, groupId: string): Answer<void>;
  /** Replaces every group row of the queue by one per group, from its oldest message. */
  rebuildGroupRows(queueId: number): Answer<void>;
  isFifo(queueId: number): Answer<boolean>;
}

/** A receive's writes. */
export interface ReceiveSteps {
  /** Records the claims (visibility, receive count, first receive, token, delivery start) of `claimed`. */
  writeClaims(request: ReceiveRequest, claimed: StoredMessage[]): Answer<void>;
  /** The message goes to the dead-letter queue, visible at `now`, with its receive count and no token. */
  moveToDeadLetter(seq: number, deadLetter: DeadLetterTarget, now: number): Answer<void>;
  /** What the attempt claimed, while remembered (and, with several writers, holds the attempt until commit). */
  attemptClaims(queueId: number, attemptId: string, now: number): Answer<AttemptClaims | undefined>;
  /** The messages of `claims` still at that receive count, made invisible until `visibleUntil` again. */
  reclaim(queueId: number, claims: AttemptClaims, visibleUntil: number): Answer<MessageRow[]>;
  rememberAttempt(
    queueId: number,
    attempt: { id: string; expiresAt: number },
    claims: AttemptClaims,
  ): Answer<void>;
}

/** A move task's batch. */
export interface MoveSteps {
  /** The task's row, held until the transaction ends (two runners of one task move one batch at a time). */
  lockMoveTask(handle: string): Answer<MoveTaskRow | undefined>;
  /**
   * Up to `limit` visible unexpired messages with seq up to `upToSeq`, lowest seq first; with `fifo`, only
   * those with no earlier message of their group invisible. Rows another writer holds are skipped.
   */
  movable(
    queueId: number,
    options: { upToSeq: number; now: number; limit: number; fifo: boolean },
  ): Answer<MessageRow[]>;
  /** A copy of the message `seq` as a new message of the destination. */
  insertMoved(
    seq: number,
    destination: MoveDestination,
    moved: { messageId: string; now: number; groupId: string | null },
  ): Answer<void>;
  deleteMessage(seq: number): Answer<void>;
  addMoved(handle: string, count: number): Answer<MoveTaskRow>;
}

/** A change of a message's visibility. */
export interface VisibilitySteps {
  /**
   * Holds the row of the message's FIFO group before the message's own (locks go group first, then
   * messages); a store with one writer has nothing to do.
   */
  lockGroupOf(queueId: number, seq: number): Answer<void>;
  /** The message's receipt state, its row held until the transaction ends; undefined when it is gone. */
  messageState(queueId: number, seq: number): Answer<MessageState | undefined>;
  /** The message becomes visible at `visibleAt`; `was` is its state before. */
  setVisibleAt(queueId: number, seq: number, visibleAt: number, was: MessageState, now: number): Answer<void>;
}

/** A message a delete by receipt deleted. */
export interface DeletedMessage {
  seq: number;
  /** Its group, in a FIFO queue. */
  groupId?: string | null;
  /** Its state before the delete; given at least when another receipt of the batch names the same message. */
  before?: MessageState;
}

/**
 * DeleteSteps.deleteByReceipts for a store with one writer, which deletes one receipt at a time: `deleteWithin`
 * deletes the message if it is within the receipt's bounds and answers whether it did (and, in a FIFO queue, its
 * group). A message the batch names again has its state read before its first receipt, for the others to be
 * judged by.
 */
export function deleteOneByOne(
  receipts: readonly ReceiptBounds[],
  stateOf: (seq: number) => MessageState | undefined,
  deleteWithin: (receipt: ReceiptBounds) => { groupId?: string | null } | undefined,
): DeletedMessage[] {
  const named = new Map<number, number>();
  for (const { seq } of receipts) named.set(seq, (named.get(seq) ?? 0) + 1);
  const before = new Map<number, MessageState | undefined>();
  const deleted: DeletedMessage[] = [];
  for (const receipt of receipts) {
    const { seq } = receipt;
    if (named.get(seq)! > 1 && !before.has(seq)) before.set(seq, stateOf(seq));
    const done = deleteWithin(receipt);
    if (done) deleted.push({ ...done, seq, before: before.get(seq) });
  }
  return deleted;
}

/** A batch of deletes by receipt. */
export interface DeleteSteps {
  /** Holds the rows of the FIFO groups of the messages `seqs`, in name order; a store with one writer has nothing to do. */
  lockGroupsOf(queueId: number, seqs: readonly number[]): Answer<void>;
  /**
   * Deletes each message of the queue whose receipt's bounds it is within, the receipts in order (a message
   * several pass for is deleted once); answers the messages deleted.
   */
  deleteByReceipts(
    queueId: number,
    receipts: readonly ReceiptBounds[],
    fifo: boolean,
  ): Answer<DeletedMessage[]>;
  /** The receipt states of the queue's messages `seqs` (those that are gone are left out). */
  messageStates(queueId: number, seqs: readonly number[]): Answer<Array<MessageState & { seq: number }>>;
}

/** What a replay or a delete by seq decides with, inside the store's transaction for the one message. */
export interface TriageSteps {
  /**
   * The queue's message `seq`, its row held until the transaction ends; `held` (its id and expiry) when
   * another writer holds the row now, a receive claiming it; undefined when it is gone.
   */
  triageRow(
    queueId: number,
    seq: number,
  ): Answer<MessageRow | { held: Pick<MessageRow, 'message_id' | 'expires_at'> } | undefined>;
  deleteMessage(seq: number): Answer<void>;
  /** Long polls of the queue on other nodes learn of its new message, at commit; one process has nothing to do. */
  wake(queueId: number): Answer<void>;
}

/** A purge and the sweep of expired messages. */
export interface UpkeepSteps {
  /**
   * When the queue was last purged (null: never), its row held until the transaction ends; undefined when
   * there is no such queue.
   */
  lastPurgedAt(queueId: number): Answer<number | null | undefined>;
  /** Deletes the queue's messages sent up to `now` and its deduplication ids, and notes `now` as its last purge. */
  purge(queueId: number, now: number): Answer<void>;
  /** Deletes up to `limit` messages expired at `now`; answers their queues and groups. */
  deleteExpired(
    now: number,
    limit: number,
  ): Answer<ReadonlyArray<{ queue_id: number; group_id: string | null }>>;
  /** Forgets the deduplication ids and FIFO receive attempts expired at `now`. */
  forgetExpired(now: number): Answer<void>;
}

/** What the receive and the move batch decide with. */
export type PlanSteps = InFlightSteps & TenantSteps & GroupSteps & ReceiveSteps & MoveSteps;

/** Every step a store gives the plans. */
export type StoreSteps = PlanSteps & SendSteps & DeleteSteps & VisibilitySteps & UpkeepSteps & TriageSteps;

/** The kinds of the queues a receive touches, which the store knows (and caches) in its own way. */
export interface ReceiveKinds {
  fifo: boolean;
  /** Whether the dead-letter queue, if any, is FIFO. */
  deadLetterFifo: boolean;
}

/** What one receive has claimed and moved so far, while it picks its messages. */
interface ReceiveProgress {
  request: ReceiveRequest;
  deadLetterFifo: boolean;
  claimed: StoredMessage[];
  /** Rows looked at: a message claimed with a zero visibility timeout is still visible and must not be claimed twice. */
  seen: Set<number>;
  moved: number;
  /** The server's admit refused the next message: the receive ends with what it claimed. */
  refused: boolean;
}

/** Store.receiveMessages (see its contract): the whole receive, in one transaction of the store's. */
export function* receivePlan(
  steps: PlanSteps,
  request: ReceiveRequest,
  kinds: ReceiveKinds,
): Plan<ReceiveResult> {
  if (yield* inFlightAtLeast(steps, request.queueId, request.now, request.maxInFlight))
    return { messages: [], overLimit: true, movedToDeadLetter: 0 };
  if (kinds.fifo && request.attempt) {
    const repeated = yield* repeatAttempt(steps, request, request.attempt.id);
    if (repeated) return { messages: repeated, overLimit: false, movedToDeadLetter: 0 };
  }
  const progress: ReceiveProgress = {
    request,
    deadLetterFifo: kinds.deadLetterFifo,
    claimed: [],
    seen: new Set(),
    moved: 0,
    refused: false,
  };
  if (kinds.fifo) yield* claimFromGroups(steps, progress);
  else yield* claimByTenant(steps, progress);
  // Nothing above reads a claimed row again (`seen`; a group's row is set from its claims), so the claims
  // are written together.
  if (progress.claimed.length > 0) yield* answer(steps.writeClaims(request, progress.claimed));
  if (kinds.fifo && request.attempt && progress.claimed.length > 0) {
    const claims: AttemptClaims = progress.claimed.map((message) => [message.seq, message.receiveCount]);
    yield* answer(steps.rememberAttempt(request.queueId, request.attempt, claims));
  }
  return { messages: progress.claimed, overLimit: false, movedToDeadLetter: progress.moved };
}

/**
 * In flight means invisible after a receive. The upper bound needs no row reads; only when it reaches the
 * limit are rows read to tell in-flight messages from delayed ones.
 */
function* inFlightAtLeast(steps: InFlightSteps, queueId: number, now: number, limit: number): Plan<boolean> {
  if ((yield* answer(steps.inFlightUpperBound(queueId, now, limit))) < limit) return false;
  return (yield* answer(steps.countInFlight(queueId, now, limit))) >= limit;
}

/** A receive has claimed `target` messages, or the server's admit refused the next one. */
function receiveFull(progress: ReceiveProgress, target: number): boolean {
  return progress.refused || progress.claimed.length >= target;
}

/**
 * Claims rows in the order `candidates` gives them until `target` messages are claimed. Dead-letter moves do
 * not count towards it: after a pass that moved some, look again so the receive still returns the live
 * messages behind them.
 */
function* claimInOrder(
  steps: PlanSteps,
  progress: ReceiveProgress,
  target: number,
  candidates: (limit: number) => Answer<Iterable<MessageRow>>,
): Plan<void> {
  for (let movedInPass = 1; movedInPass > 0 && !receiveFull(progress, target); ) {
    movedInPass = 0;
    for (const row of yield* answer(candidates(target - progress.claimed.length + progress.seen.size))) {
      // Stop reading at once when full: a store may read each candidate row only when asked for it.
      if (receiveFull(progress, target)) break;
      if (progress.seen.has(row.seq)) continue;
      if ((yield* claimOrMove(steps, progress, row)) === 'moved') movedInPass++;
    }
  }
}

/** The one place a receive takes a message: it is claimed, or moved to the dead-letter queue. */
function* claimOrMove(
  steps: PlanSteps,
  progress: ReceiveProgress,
  row: MessageRow,
): Plan<'claimed' | 'moved' | 'refused'> {
  const { request } = progress;
  progress.seen.add(row.seq);
  const deadLetter = request.deadLetter;
  if (deadLetter && row.receive_count >= deadLetter.maxReceiveCount) {
    const groupId = row.group_id;
    if (groupId !== null && progress.deadLetterFifo)
      yield* answer(steps.lockGroup(deadLetter.queueId, groupId));
    yield* answer(steps.moveToDeadLetter(row.seq, deadLetter, request.now));
    if (groupId !== null) {
      if (progress.deadLetterFifo) yield* refreshGroup(steps, deadLetter.queueId, groupId);
      else yield* answer(steps.noteTenant(deadLetter.queueId, groupId));
    } else if (!progress.deadLetterFifo && (yield* answer(steps.hasTenants(deadLetter.queueId)))) {
      // In a fair dead-letter queue a message without a group is the tenant '', as if sent there.
      yield* answer(steps.joinTenantless(deadLetter.queueId, row.seq));
    }
    progress.moved++;
    return 'moved';
  }
  if (request.admit && !request.admit(messageRowBytes(row))) {
    progress.refused = true;
    return 'refused';
  }
  progress.claimed.push(
    toMessage({
      ...row,
      visible_at: request.visibleUntil,
      receive_count: row.receive_count + 1,
      first_received_at: row.first_received_at ?? request.now,
      receipt_token: row.receipt_token ?? request.newReceiptToken(),
      delivery_started_at: request.now,
    }),
  );
  return 'claimed';
}

/**
 * Standard queues. Without tenants, oldest visibility first. With tenants (fair queues), the least recently
 * served tenants take turns, each up to an equal share of what is left to claim, so one tenant's backlog
 * does not hold the others back.
 */
function* claimByTenant(steps: PlanSteps, progress: ReceiveProgress): Plan<void> {
  const { request } = progress;
  const { queueId, now, max } = request;
  const tenants = yield* answer(steps.tenantsToServe(queueId, TENANTS_PER_RECEIVE));
  // Only messages without a group are left: the queue is an ordinary queue again.
  if (tenants.length === 1 && tenants[0] === '') yield* answer(steps.forgetTenant(queueId, ''));
  if (tenants.length <= 1) {
    yield* claimInOrder(steps, progress, max, (limit) => steps.visible(queueId, now, limit));
    return;
  }
  let turn = tenants;
  while (turn.length > 0 && !receiveFull(progress, max)) {
    const share = Math.ceil((max - progress.claimed.length) / turn.length);
    const again: string[] = [];
    for (const tenant of turn) {
      if (receiveFull(progress, max)) break;
      const before = progress.claimed.length;
      const target = Math.min(max, before + share);
      yield* claimInOrder(steps, progress, target, (limit) =>
        steps.visibleOfTenant(queueId, tenant, now, limit),
      );
      yield* answer(steps.serveTenant(queueId, tenant));
      const got = progress.claimed.length - before;
      if (got === share) again.push(tenant);
      else if (got === 0 && !(yield* answer(steps.tenantHasMessages(queueId, tenant))))
        yield* answer(steps.forgetTenant(queueId, tenant));
    }
    turn = again;
  }
}

/**
 * FIFO queues: groups whose oldest message is visible, the one visible longest first; from each, its
 * messages in order from the oldest, up to the first one that is not visible (a later message never
 * overtakes an earlier one).
 *
 * The groups are asked for as the receive needs them: one first, since one group fills most receives, then
 * as many as messages are still wanted (an available group gives at least one). A store that locks the groups
 * it answers (PostgreSQL) then holds only those, and concurrent receivers take the others; asking for 32 at
 * once made them skip groups with messages and come back empty (docs/decisions/postgres-locks.md).
 */
function* claimFromGroups(steps: PlanSteps, progress: ReceiveProgress): Plan<void> {
  const { request } = progress;
  const { queueId, now, max } = request;
  const taken: string[] = [];
  let wanted = 1;
  while (wanted > 0) {
    const groups = yield* answer(steps.availableGroups(queueId, now, wanted, taken));
    for (const groupId of groups) {
      taken.push(groupId);
      yield* claimFromGroup(steps, progress, groupId);
      if (receiveFull(progress, max)) return;
    }
    if (groups.length < wanted) return;
    wanted = Math.min(max - progress.claimed.length, GROUPS_PER_RECEIVE - taken.length);
  }
}

/** Takes the group's visible messages in order, then says when the group can next be received from. */
function* claimFromGroup(steps: PlanSteps, progress: ReceiveProgress, groupId: string): Plan<void> {
  const { request } = progress;
  const { queueId, now, max } = request;
  const rows = yield* answer(steps.groupMessages(queueId, groupId, max - progress.claimed.length + 1));
  let claimedHere = 0;
  for (const row of rows) {
    if (receiveFull(progress, max)) break;
    // Expired but not yet swept: gone for receivers, and not in the group's way.
    if (row.expires_at <= now) continue;
    if (row.visible_at > now) break;
    if ((yield* claimOrMove(steps, progress, row)) === 'claimed') claimedHere++;
  }
  // The group's oldest message is in flight now (or expired, and swept soon).
  if (claimedHere > 0) yield* answer(steps.setGroupAvailableAt(queueId, groupId, request.visibleUntil));
  else yield* refreshGroup(steps, queueId, groupId);
}

/**
 * A retried FIFO receive: the messages its first attempt claimed that were not received again since, in
 * the order it returned them.
 */
function* repeatAttempt(
  steps: PlanSteps,
  request: ReceiveRequest,
  attemptId: string,
): Plan<StoredMessage[] | undefined> {
  const claims = yield* answer(steps.attemptClaims(request.queueId, attemptId, request.now));
  if (!claims) return undefined;
  const rows = yield* answer(steps.reclaim(request.queueId, claims, request.visibleUntil));
  if (rows.length === 0) return undefined;
  const order = new Map(claims.map(([seq], index) => [seq, index]));
  rows.sort((a, b) => order.get(a.seq)! - order.get(b.seq)!);
  for (const groupId of new Set(rows.map((row) => row.group_id)))
    if (groupId !== null) yield* refreshGroup(steps, request.queueId, groupId);
  return rows.map(toMessage);
}

/**
 * Recomputes when a FIFO group can next be received from: when its oldest message is visible (SQS: the first
 * message in flight holds back the ones after it, not the ones before); an empty group loses its row. The
 * row is locked first, so a send to the group committing meanwhile is seen.
 */
export function* refreshGroup(steps: GroupSteps, queueId: number, groupId: string): Plan<void> {
  yield* answer(steps.lockGroup(queueId, groupId));
  const head = yield* answer(steps.groupHeadVisibleAt(queueId, groupId));
  if (head === undefined) yield* answer(steps.forgetGroup(queueId, groupId));
  else yield* answer(steps.setGroupAvailableAt(queueId, groupId, head));
}

/** After a change to many of a queue's messages at once (purge, new delay): a FIFO queue's group rows anew. */
export function* rebuildGroups(steps: GroupSteps, queueId: number): Plan<void> {
  if (yield* answer(steps.isFifo(queueId))) yield* answer(steps.rebuildGroupRows(queueId));
}

/** The groups of `rows` that are FIFO groups (their queue is FIFO), each once, refreshed. */
export function* refreshGroupsOf(
  steps: GroupSteps,
  rows: ReadonlyArray<{ queue_id: number; group_id: string | null }>,
): Plan<void> {
  const groups = new Map<string, { queueId: number; groupId: string }>();
  for (const row of rows) {
    if (row.group_id !== null && (yield* answer(steps.isFifo(row.queue_id))))
      groups.set(JSON.stringify([row.queue_id, row.group_id]), {
        queueId: row.queue_id,
        groupId: row.group_id,
      });
  }
  for (const { queueId, groupId } of groups.values()) yield* refreshGroup(steps, queueId, groupId);
}

/** Store.moveMessages (see its contract): one batch of a move task, in one transaction of the store's. */
export function* moveBatchPlan(steps: PlanSteps, request: MoveRequest): Plan<MoveOutcome> {
  const task = yield* answer(steps.lockMoveTask(request.handle));
  const outcome: MoveOutcome = {
    moved: 0,
    destinations: [],
    more: false,
    unroutable: undefined,
    task: task && toMoveTask(task),
  };
  if (task?.status !== 'RUNNING') return outcome;
  const sourceId = task.source_queue_id;
  const sourceFifo = yield* answer(steps.isFifo(sourceId));
  const candidates = yield* answer(
    steps.movable(sourceId, {
      upToSeq: task.up_to_seq,
      now: request.now,
      limit: request.max + 1,
      fifo: sourceFifo,
    }),
  );
  const destinations = new Set<number>();
  for (const row of candidates.slice(0, request.max)) {
    const origin = row.dead_letter_source_arn ?? undefined;
    const destination = request.route(origin);
    if (!destination) {
      outcome.unroutable = { origin };
      break;
    }
    // '' is a fair queue's tenant for messages without a group: not a group to carry over.
    const groupId = row.group_id || null;
    if (groupId !== null && destination.fifo) yield* answer(steps.lockGroup(destination.queueId, groupId));
    const fair = !destination.fifo && (yield* answer(steps.hasTenants(destination.queueId)));
    yield* answer(
      steps.insertMoved(row.seq, destination, {
        messageId: request.newMessageId(),
        now: request.now,
        groupId: groupId ?? (fair ? '' : null),
      }),
    );
    yield* answer(steps.deleteMessage(row.seq));
    if (row.group_id !== null && sourceFifo) yield* refreshGroup(steps, sourceId, row.group_id);
    if (groupId !== null) {
      if (destination.fifo)
        yield* answer(steps.addGroupIfAbsent(destination.queueId, groupId, destination.visibleAt));
      else yield* answer(steps.noteTenant(destination.queueId, groupId));
    }
    destinations.add(destination.queueId);
    outcome.moved++;
  }
  outcome.task = toMoveTask(yield* answer(steps.addMoved(request.handle, outcome.moved)));
  outcome.destinations = [...destinations];
  outcome.more = outcome.unroutable !== undefined || candidates.length > request.max;
  return outcome;
}

/**
 * Store.deleteMessages (see its contract), on a queue that is FIFO or not (`fifo`): the batch's deletes in one
 * step, each FIFO group deleted from refreshed once (a group's row needs only its state after the batch), and
 * only a refused receipt's message read again, to tell why.
 */
export function* deletePlan(
  steps: GroupSteps & DeleteSteps,
  queueId: number,
  receipts: ReadonlyArray<MessageReceipt>,
  check: ReceiptCheck,
  fifo: boolean,
): Plan<DeleteOutcome[]> {
  if (receipts.length === 0) return [];
  const seqs = receipts.map((receipt) => receipt.seq);
  // Groups first, then messages: the lock order every writer keeps.
  if (fifo) yield* answer(steps.lockGroupsOf(queueId, seqs));
  const bounds = receipts.map((receipt) => receiptBounds(receipt, check));
  const deleted = new Map(
    (yield* answer(steps.deleteByReceipts(queueId, bounds, fifo))).map((message) => [message.seq, message]),
  );
  if (fifo) {
    const groups = new Set([...deleted.values()].flatMap((message) => message.groupId ?? []));
    for (const groupId of [...groups].sort()) yield* refreshGroup(steps, queueId, groupId);
  }
  const refused = [...new Set(seqs.filter((seq) => !deleted.has(seq)))];
  const remaining = new Map(
    refused.length === 0
      ? []
      : (yield* answer(steps.messageStates(queueId, refused))).map((row) => [row.seq, row]),
  );
  const done = new Set<number>();
  return receipts.map((receipt): DeleteOutcome => {
    const { seq } = receipt;
    // The first receipt that passes for a deleted message deleted it; any later one finds it gone.
    if (done.has(seq)) return 'missing';
    const message = deleted.get(seq);
    if (message) {
      const refusal = message.before && receiptRefusal(message.before, receipt, check);
      if (refusal) return refusal;
      done.add(seq);
      return 'deleted';
    }
    const row = remaining.get(seq);
    return (row && receiptRefusal(row, receipt, check)) ?? 'missing';
  });
}

/** Store.changeVisibility (see its contract), on a queue that is FIFO or not (`fifo`). */
export function* changeVisibilityPlan(
  steps: GroupSteps & VisibilitySteps,
  request: ChangeVisibilityRequest,
  fifo: boolean,
): Plan<ChangeVisibilityOutcome> {
  const { queueId } = request;
  const { seq } = request.receipt;
  if (fifo) yield* answer(steps.lockGroupOf(queueId, seq));
  const state = yield* answer(steps.messageState(queueId, seq));
  if (!state) return 'missing';
  const refusal = visibilityChangeRefusal(state, request);
  if (refusal) return refusal;
  yield* answer(steps.setVisibleAt(queueId, seq, request.visibleAt, state, request.now));
  if (state.group_id !== null && fifo) yield* refreshGroup(steps, queueId, state.group_id);
  return 'changed';
}

/** Store.purgeQueue (see its contract): at most one purge per queue within `windowMs`. */
export function* purgePlan(
  steps: GroupSteps & UpkeepSteps,
  queueId: number,
  now: number,
  windowMs: number,
): Plan<boolean> {
  const lastPurgedAt = yield* answer(steps.lastPurgedAt(queueId));
  if (lastPurgedAt === undefined || (lastPurgedAt !== null && now - lastPurgedAt < windowMs)) return false;
  yield* answer(steps.purge(queueId, now));
  yield* rebuildGroups(steps, queueId);
  return true;
}

/** Store.deleteExpired (see its contract): a batch of expired messages, their groups refreshed. */
export function* expiryPlan(steps: GroupSteps & UpkeepSteps, now: number, limit: number): Plan<number> {
  const deleted = yield* answer(steps.deleteExpired(now, limit));
  yield* refreshGroupsOf(steps, deleted);
  yield* answer(steps.forgetExpired(now));
  return deleted.length;
}
