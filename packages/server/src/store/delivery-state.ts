/**
 * One queue's delivery state in memory: which messages are visible, in (visible_at, seq) order, which are
 * hidden until when (in flight or delayed), and the times the counts need. In the SQLite store it is a cache
 * of a standard queue's rows: the store answers receives, counts and wakes from it and writes only what must
 * survive, by row id; it is never the record there: every change to the queue's rows either updates it
 * exactly or drops it, and it is built again from the table on next use. In memory (memory/message-table.ts)
 * it is the index of every queue's messages.
 *
 * Struct of arrays, one slot per message in seq order (a message's slot is found by binary search on seq),
 * and two binary heaps of slots keyed by (visible_at, seq): the visible ones and the hidden ones. About 45
 * bytes a message, so a million waiting messages take tens of MiB, not hundreds.
 */

/** A slot's flags: absent (deleted, a hole until the next compaction), present, and received at least once. */
const PRESENT = 1;
const RECEIVED = 2;
/** The slot is in the visible heap (otherwise in the hidden one, when present). */
const IN_VISIBLE = 4;

/**
 * A clock step back by up to this much (requests answered in another order than their times were read, by a
 * few ms) moves back to the hidden heap only the messages that became visible within it; a longer one splits
 * every message again.
 */
const STEP_BACK_MS = 1000;
/** The list of messages recently made visible is pruned when it is this long, or twice what it was kept at. */
const MIN_RECENT_TO_PRUNE = 1024;

/** Holes are compacted away once there are this many and more holes than messages. */
const MIN_HOLES_TO_COMPACT = 1024;

export interface DeliveryCounts {
  visible: number;
  notVisible: number;
  delayed: number;
  oldestSentAt: number | undefined;
}

/** The columns of the slots, grown together; heaps read their keys from here. */
class Columns {
  seq: Float64Array;
  visibleAt: Float64Array;
  expiresAt: Float64Array;
  sentAt: Float64Array;
  flags: Uint8Array;
  /** The slot's index in the heap it is in. */
  heapIndex: Int32Array;

  constructor(capacity: number) {
    this.seq = new Float64Array(capacity);
    this.visibleAt = new Float64Array(capacity);
    this.expiresAt = new Float64Array(capacity);
    this.sentAt = new Float64Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.heapIndex = new Int32Array(capacity);
  }

  get capacity(): number {
    return this.seq.length;
  }

  grow(capacity: number, used: number): void {
    this.seq = copied(this.seq, new Float64Array(capacity), used);
    this.visibleAt = copied(this.visibleAt, new Float64Array(capacity), used);
    this.expiresAt = copied(this.expiresAt, new Float64Array(capacity), used);
    this.sentAt = copied(this.sentAt, new Float64Array(capacity), used);
    this.flags = copied(this.flags, new Uint8Array(capacity), used);
    this.heapIndex = copied(this.heapIndex, new Int32Array(capacity), used);
  }

  /** Moves the slots from `from` up to `used` one place up, to make room at `from`. */
  shiftUp(from: number, used: number): void {
    this.seq.copyWithin(from + 1, from, used);
    this.visibleAt.copyWithin(from + 1, from, used);
    this.expiresAt.copyWithin(from + 1, from, used);
    this.sentAt.copyWithin(from + 1, from, used);
    this.flags.copyWithin(from + 1, from, used);
    this.heapIndex.copyWithin(from + 1, from, used);
  }

  /** Whether slot a comes before slot b: earlier visible_at, then lower seq. */
  before(a: number, b: number): boolean {
    const va = this.visibleAt[a]!;
    const vb = this.visibleAt[b]!;
    return va < vb || (va === vb && this.seq[a]! < this.seq[b]!);
  }
}

function copied<T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T, used: number): T {
  to.set(from.subarray(0, used));
  return to;
}

/** A binary min-heap of slots, ordered by Columns.before, that keeps each slot's index in Columns.heapIndex. */
class SlotHeap {
  slots: Int32Array;
  size = 0;

  constructor(
    private readonly columns: Columns,
    capacity: number,
  ) {
    this.slots = new Int32Array(capacity);
  }

  peek(): number | undefined {
    return this.size > 0 ? this.slots[0] : undefined;
  }

  push(slot: number): void {
    if (this.size === this.slots.length) {
      const grown = new Int32Array(Math.max(16, this.slots.length * 2));
      grown.set(this.slots);
      this.slots = grown;
    }
    this.place(this.size++, slot);
    this.up(this.size - 1);
  }

  remove(slot: number): void {
    const index = this.columns.heapIndex[slot]!;
    const last = this.slots[--this.size]!;
    if (index === this.size) return;
    this.place(index, last);
    this.up(index);
    this.down(this.columns.heapIndex[last]!);
  }

  pop(): number {
    const top = this.slots[0]!;
    this.remove(top);
    return top;
  }

  /** The slots from `from` on moved one place up (Columns.shiftUp). */
  renumberFrom(from: number): void {
    for (let index = 0; index < this.size; index++) if (this.slots[index]! >= from) this.slots[index]!++;
  }

  /** Replaces the content by `slots` in O(n) (Floyd's heap construction). */
  rebuild(slots: Int32Array, count: number): void {
    if (this.slots.length < count) this.slots = new Int32Array(count);
    this.size = count;
    for (let index = 0; index < count; index++) this.place(index, slots[index]!);
    for (let index = (count >> 1) - 1; index >= 0; index--) this.down(index);
  }

  /**
   * Up to `limit` slots in heap order, without taking them out, skipping those `skip` refuses (whose
   * children are still looked at): a best-first walk of the tree, from its root.
   */
  first(limit: number, skip: (slot: number) => boolean): number[] {
    const found: number[] = [];
    const frontier: number[] = this.size > 0 ? [0] : [];
    while (frontier.length > 0 && found.length < limit) {
      let best = 0;
      for (let index = 1; index < frontier.length; index++) {
        if (this.columns.before(this.slots[frontier[index]!]!, this.slots[frontier[best]!]!)) best = index;
      }
      const at = frontier[best]!;
      frontier[best] = frontier[frontier.length - 1]!;
      frontier.pop();
      const slot = this.slots[at]!;
      if (!skip(slot)) found.push(slot);
      if (2 * at + 1 < this.size) frontier.push(2 * at + 1);
      if (2 * at + 2 < this.size) frontier.push(2 * at + 2);
    }
    return found;
  }

  private place(index: number, slot: number): void {
    this.slots[index] = slot;
    this.columns.heapIndex[slot] = index;
  }

  private up(index: number): void {
    const slot = this.slots[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = this.slots[parent]!;
      if (!this.columns.before(slot, above)) break;
      this.place(index, above);
      index = parent;
    }
    this.place(index, slot);
  }

  private down(index: number): void {
    const slot = this.slots[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child =
        right < this.size && this.columns.before(this.slots[right]!, this.slots[left]!) ? right : left;
      const below = this.slots[child]!;
      if (!this.columns.before(below, slot)) break;
      this.place(index, below);
      index = child;
    }
    this.place(index, slot);
  }
}

export class DeliveryState {
  private readonly columns: Columns;
  /** Slots used, holes included; slots are in seq order. */
  private used = 0;
  private present = 0;
  private readonly visible: SlotHeap;
  private readonly hidden: SlotHeap;
  /** Hidden messages that were received: in flight. */
  private hiddenReceived = 0;
  /** The time the heaps are split at: visible means visible_at <= splitAt. */
  private splitAt = Number.NEGATIVE_INFINITY;
  /**
   * Slots put in the visible heap lately, for a clock step back: every slot of the visible heap whose visible_at
   * is after `recentFrom` is in the list (others may be too, stale: they are checked when used).
   */
  private recent: number[] = [];
  private recentFrom = Number.NEGATIVE_INFINITY;
  private pruneRecentAt = MIN_RECENT_TO_PRUNE;
  /**
   * While the state is read from the table in parts (`load`), the highest seq read so far; infinite once it
   * holds the whole queue. A change to a message above it is left to the parts still to be read, which read the
   * row as it is then: `add` skips it, and `claim`, `remove` and `setVisibleAt` find no slot for it.
   */
  private loadedThrough = Number.POSITIVE_INFINITY;

  constructor(capacity = 64) {
    this.columns = new Columns(capacity);
    this.visible = new SlotHeap(this.columns, capacity);
    this.hidden = new SlotHeap(this.columns, capacity);
  }

  /** A state to be read from the table in parts, in seq order (`load`), until `loadedAll`. */
  static loading(): DeliveryState {
    const state = new DeliveryState();
    state.loadedThrough = 0;
    return state;
  }

  /** Whether the state holds the whole queue; only then may it answer receives, counts and wakes. */
  get complete(): boolean {
    return this.loadedThrough === Number.POSITIVE_INFINITY;
  }

  /** The highest seq read from the table while loading (0 before the first); infinite once complete. */
  get loadedUpTo(): number {
    return this.loadedThrough;
  }

  /** A row read from the table while loading; rows come in seq order. */
  load(seq: number, visibleAt: number, expiresAt: number, sentAt: number, received: boolean): void {
    this.put(seq, visibleAt, expiresAt, sentAt, received);
    this.loadedThrough = seq;
  }

  /** Every row has been read. */
  loadedAll(): void {
    this.loadedThrough = Number.POSITIVE_INFINITY;
  }

  /** Messages held. */
  get size(): number {
    return this.present;
  }

  /**
   * Adds a message not held. A new row's seq is the newest, and its slot is the next;
   * an older one (a dead-lettered row keeps its seq) takes its place in seq order, the slots after it moved up.
   */
  add(seq: number, visibleAt: number, expiresAt: number, sentAt: number, received: boolean): void {
    if (seq > this.loadedThrough) return;
    this.put(seq, visibleAt, expiresAt, sentAt, received);
  }

  private put(seq: number, visibleAt: number, expiresAt: number, sentAt: number, received: boolean): void {
    if (this.used === this.columns.capacity) this.makeRoom();
    const columns = this.columns;
    const slot = this.used > 0 && seq <= columns.seq[this.used - 1]! ? this.slotInOrder(seq) : this.used++;
    columns.seq[slot] = seq;
    columns.visibleAt[slot] = visibleAt;
    columns.expiresAt[slot] = expiresAt;
    columns.sentAt[slot] = sentAt;
    columns.flags[slot] = PRESENT | (received ? RECEIVED : 0);
    this.present++;
    this.enter(slot);
  }

  /** Takes the message out; returns whether it was held. */
  remove(seq: number): boolean {
    const slot = this.slotOf(seq);
    if (slot < 0) return false;
    this.leave(slot);
    this.columns.flags[slot] = 0;
    this.present--;
    const holes = this.used - this.present;
    if (holes >= MIN_HOLES_TO_COMPACT && holes > this.present) this.compact();
    return true;
  }

  /** A receive took the message: received, and hidden until `visibleUntil` (visible at once when that is now). */
  claim(seq: number, visibleUntil: number): void {
    const slot = this.slotOf(seq);
    if (slot < 0) return;
    this.leave(slot);
    this.columns.flags[slot]! |= RECEIVED;
    this.columns.visibleAt[slot] = visibleUntil;
    this.enter(slot);
  }

  setVisibleAt(seq: number, visibleAt: number): void {
    const slot = this.slotOf(seq);
    if (slot < 0) return;
    this.leave(slot);
    this.columns.visibleAt[slot] = visibleAt;
    this.enter(slot);
  }

  /** Up to `limit` seqs of visible unexpired messages, oldest visibility first, then seq; nothing is taken. */
  visibleSeqs(now: number, limit: number): number[] {
    this.moveSplit(now);
    const { expiresAt, seq } = this.columns;
    return this.visible.first(limit, (slot) => expiresAt[slot]! <= now).map((slot) => seq[slot]!);
  }

  /** Messages in flight: received and hidden at `now`. */
  inFlight(now: number): number {
    this.moveSplit(now);
    return this.hiddenReceived;
  }

  /** When the next hidden message becomes visible, if any. */
  nextVisibleAt(now: number): number | undefined {
    this.moveSplit(now);
    const next = this.hidden.peek();
    return next === undefined ? undefined : this.columns.visibleAt[next];
  }

  /** The counts of unexpired messages at `now`, and the oldest one's send time: one pass over the columns. */
  counts(now: number): DeliveryCounts {
    const { flags, visibleAt, expiresAt, sentAt } = this.columns;
    const counts: DeliveryCounts = { visible: 0, notVisible: 0, delayed: 0, oldestSentAt: undefined };
    let oldest = Number.POSITIVE_INFINITY;
    for (let slot = 0; slot < this.used; slot++) {
      const flag = flags[slot]!;
      if (flag === 0 || expiresAt[slot]! <= now) continue;
      if (visibleAt[slot]! <= now) counts.visible++;
      else if (flag & RECEIVED) counts.notVisible++;
      else counts.delayed++;
      if (sentAt[slot]! < oldest) oldest = sentAt[slot]!;
    }
    if (oldest !== Number.POSITIVE_INFINITY) counts.oldestSentAt = oldest;
    return counts;
  }

  /** The seqs held, in order. */
  seqs(): number[] {
    const { flags, seq } = this.columns;
    const seqs: number[] = [];
    for (let slot = 0; slot < this.used; slot++) if (flags[slot] !== 0) seqs.push(seq[slot]!);
    return seqs;
  }

  /** Up to `limit` seqs of messages expired at `now`, in seq order. */
  expiredSeqs(now: number, limit: number): number[] {
    const { flags, seq, expiresAt } = this.columns;
    const seqs: number[] = [];
    for (let slot = 0; slot < this.used && seqs.length < limit; slot++)
      if (flags[slot] !== 0 && expiresAt[slot]! <= now) seqs.push(seq[slot]!);
    return seqs;
  }

  /** When the next message to expire after `now` does so, if any: one pass over the columns. */
  nextExpiryAt(now: number): number | undefined {
    const { flags, expiresAt } = this.columns;
    let next = Number.POSITIVE_INFINITY;
    for (let slot = 0; slot < this.used; slot++)
      if (flags[slot] !== 0 && expiresAt[slot]! > now && expiresAt[slot]! < next) next = expiresAt[slot]!;
    return next === Number.POSITIVE_INFINITY ? undefined : next;
  }

  /** The highest seq held, 0 when none. */
  lastSeq(): number {
    const { flags, seq } = this.columns;
    for (let slot = this.used - 1; slot >= 0; slot--) if (flags[slot] !== 0) return seq[slot]!;
    return 0;
  }

  /** The slot of a held message, or -1. */
  private slotOf(seq: number): number {
    const at = this.firstSlotFrom(seq);
    return at < this.used && this.columns.seq[at] === seq && this.columns.flags[at]! & PRESENT ? at : -1;
  }

  /** The first slot whose seq is `seq` or more (holes included), or `used`. */
  private firstSlotFrom(seq: number): number {
    const seqs = this.columns.seq;
    let low = 0;
    let high = this.used;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (seqs[middle]! < seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * A slot for `seq`, older than the newest, at its place in seq order, made by moving the slots after it up
   * (before a hole of the same seq, if any, so the search finds the new one). There is room for one.
   */
  private slotInOrder(seq: number): number {
    const at = this.firstSlotFrom(seq);
    this.columns.shiftUp(at, this.used);
    this.visible.renumberFrom(at);
    this.hidden.renumberFrom(at);
    for (let index = 0; index < this.recent.length; index++)
      if (this.recent[index]! >= at) this.recent[index]!++;
    this.used++;
    return at;
  }

  /** Puts a present slot in the heap its visible_at belongs to at the split time. */
  private enter(slot: number): void {
    const { flags, visibleAt } = this.columns;
    if (visibleAt[slot]! <= this.splitAt) {
      this.makeVisible(slot);
    } else {
      flags[slot]! &= ~IN_VISIBLE;
      this.hidden.push(slot);
      if (flags[slot]! & RECEIVED) this.hiddenReceived++;
    }
  }

  private leave(slot: number): void {
    const flag = this.columns.flags[slot]!;
    if (flag & IN_VISIBLE) {
      this.visible.remove(slot);
    } else {
      this.hidden.remove(slot);
      if (flag & RECEIVED) this.hiddenReceived--;
    }
  }

  /**
   * Moves the split to `now`: hidden messages due by then become visible. A clock that went back (a test's,
   * or the system's) splits every message again.
   */
  private moveSplit(now: number): void {
    if (now < this.splitAt) {
      this.stepBack(now);
      return;
    }
    if (this.splitAt === Number.NEGATIVE_INFINITY) {
      // The first split after the state was built from the table may make every message visible: one pass
      // and two heaps built bottom-up, not a pop and a push each (0.3 s for a million).
      this.splitAt = now;
      this.compact();
      return;
    }
    this.splitAt = now;
    const { flags, visibleAt } = this.columns;
    for (
      let next = this.hidden.peek();
      next !== undefined && visibleAt[next]! <= now;
      next = this.hidden.peek()
    ) {
      this.hidden.pop();
      if (flags[next]! & RECEIVED) this.hiddenReceived--;
      this.makeVisible(next);
    }
    if (this.recent.length >= this.pruneRecentAt) this.pruneRecent();
  }

  private makeVisible(slot: number): void {
    this.columns.flags[slot]! |= IN_VISIBLE;
    this.visible.push(slot);
    this.recent.push(slot);
  }

  /** The split goes back to `now`: messages of the visible heap visible only after it are hidden again. */
  private stepBack(now: number): void {
    this.splitAt = now;
    if (now < this.recentFrom) {
      this.compact();
      return;
    }
    const { flags, visibleAt } = this.columns;
    for (const slot of this.recent) {
      if (!(flags[slot]! & IN_VISIBLE) || visibleAt[slot]! <= now) continue;
      this.visible.remove(slot);
      this.enter(slot);
    }
  }

  /** Keeps of the recent list what a step back within STEP_BACK_MS of the split may need. */
  private pruneRecent(): void {
    this.recentFrom = Math.max(this.recentFrom, this.splitAt - STEP_BACK_MS);
    const { flags, visibleAt } = this.columns;
    this.recent = this.recent.filter(
      (slot) => flags[slot]! & IN_VISIBLE && visibleAt[slot]! > this.recentFrom,
    );
    this.pruneRecentAt = Math.max(MIN_RECENT_TO_PRUNE, 2 * this.recent.length);
  }

  /** Grows the columns, or compacts them when holes take much of them. */
  private makeRoom(): void {
    if (this.used - this.present > this.used >> 2) this.compact();
    else this.columns.grow(Math.max(64, Math.ceil(this.columns.capacity * 1.5)), this.used);
  }

  /** Moves the present slots to the front, in order, and builds both heaps again at the split time. */
  private compact(): void {
    const used = this.used;
    const columns = this.columns;
    const { seq, visibleAt, expiresAt, sentAt, flags } = columns;
    const visibleSlots = new Int32Array(this.present);
    const hiddenSlots = new Int32Array(this.present);
    let visibleCount = 0;
    let hiddenCount = 0;
    let to = 0;
    this.hiddenReceived = 0;
    this.recent = [];
    this.recentFrom = this.splitAt - STEP_BACK_MS;
    for (let from = 0; from < used; from++) {
      if (flags[from] === 0) continue;
      seq[to] = seq[from]!;
      visibleAt[to] = visibleAt[from]!;
      expiresAt[to] = expiresAt[from]!;
      sentAt[to] = sentAt[from]!;
      if (visibleAt[to]! <= this.splitAt) {
        flags[to] = flags[from]! | IN_VISIBLE;
        visibleSlots[visibleCount++] = to;
        if (visibleAt[to]! > this.recentFrom) this.recent.push(to);
      } else {
        flags[to] = flags[from]! & ~IN_VISIBLE;
        hiddenSlots[hiddenCount++] = to;
        if (flags[to]! & RECEIVED) this.hiddenReceived++;
      }
      to++;
    }
    flags.fill(0, to, used);
    this.used = to;
    this.visible.rebuild(visibleSlots, visibleCount);
    this.hidden.rebuild(hiddenSlots, hiddenCount);
  }
}
