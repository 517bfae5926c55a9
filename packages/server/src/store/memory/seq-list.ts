/**
 * A FIFO group's messages in memory: their seqs in ascending order. A group is sent to at its end and received
 * and deleted from its head, so both are constant time (the head is an offset, the array compacted once it
 * is mostly spent); a message leaving from elsewhere (expiry, a console delete, a dead-letter move of an
 * older message in) costs a search and a shift.
 */
export class SeqList {
  private seqs: number[] = [];
  private start = 0;

  get size(): number {
    return this.seqs.length - this.start;
  }

  /** The lowest seq, if any. */
  head(): number | undefined {
    return this.start < this.seqs.length ? this.seqs[this.start] : undefined;
  }

  /** The lowest `limit` seqs, in order. */
  first(limit: number): number[] {
    return this.seqs.slice(this.start, this.start + limit);
  }

  insert(seq: number): void {
    const last = this.seqs.length - 1;
    if (last < this.start || this.seqs[last]! < seq) this.seqs.push(seq);
    else this.seqs.splice(this.indexFrom(seq), 0, seq);
  }

  remove(seq: number): void {
    const at = this.indexFrom(seq);
    if (this.seqs[at] !== seq) return;
    if (at === this.start) this.start++;
    else this.seqs.splice(at, 1);
    if (this.start >= 1024 && this.start * 2 >= this.seqs.length) {
      this.seqs = this.seqs.slice(this.start);
      this.start = 0;
    }
  }

  /** The index of the first seq at or above `seq` (the array's length when none). */
  private indexFrom(seq: number): number {
    let low = this.start;
    let high = this.seqs.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.seqs[middle]! < seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
