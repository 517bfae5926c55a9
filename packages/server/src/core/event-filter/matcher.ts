/**
 * Whether a message matches a compiled pattern, as event-ruler's structured matcher decides: some branch
 * matches when each of its fields, in path order, finds a leaf it accepts (or, for `{"exists": false}`, finds
 * none) among the leaves consistent with the array elements the fields before it kept to. Which elements those
 * are can change the answer for later fields, so the search tries each accepted leaf; what it learns is
 * remembered by field and by the elements kept in the arrays the remaining fields can reach, so no state is
 * explored twice and sibling arrays never multiply (an array of N records with K fields costs about N x K).
 */
import type { CompiledPattern, FieldRule, PatternBranch } from './compiler.ts';
import { type Constraints, type MessageIndex, withLeaf } from './message-index.ts';

export function matchesPattern(pattern: CompiledPattern, index: MessageIndex): boolean {
  return pattern.branches.some((branch) => matchesBranch(branch, index));
}

export function matchesBranch(branch: PatternBranch, index: MessageIndex): boolean {
  return new BranchSearch(branch.fields, index).matches();
}

const NO_CONSTRAINTS: Constraints = new Map();
const REMEMBER_AFTER_STEPS = 32;

class BranchSearch {
  private readonly failed = new Map<number, Set<string>>();
  private reachable: ReadonlySet<number>[] | undefined;
  private steps = 0;

  constructor(
    private readonly fields: readonly FieldRule[],
    private readonly index: MessageIndex,
  ) {}

  matches(): boolean {
    return this.from(0, NO_CONSTRAINTS);
  }

  private from(position: number, constraints: Constraints): boolean {
    const field = this.fields[position];
    if (!field) return true;
    // Small searches end before remembering would pay for itself.
    const state = ++this.steps > REMEMBER_AFTER_STEPS ? this.stateKey(position, constraints) : undefined;
    const failed = this.failed.get(position);
    if (state !== undefined && failed?.has(state)) return false;
    const leaves = this.index.consistentLeaves(field.path, constraints);
    if (field.absenceAllowed && leaves.length === 0 && this.from(position + 1, constraints)) return true;
    for (const leaf of leaves) {
      if (field.accepts(leaf.value) && this.from(position + 1, withLeaf(constraints, leaf))) return true;
    }
    if (state === undefined) return false;
    if (failed) failed.add(state);
    else this.failed.set(position, new Set([state]));
    return false;
  }

  /** The kept elements that can still matter: those of arrays the fields from `position` on sit in. */
  private stateKey(position: number, constraints: Constraints): string {
    if (constraints.size === 0) return '';
    const reachable = this.reachableArrays(position);
    let key = '';
    for (const [arrayId, element] of constraints) if (reachable.has(arrayId)) key += `${arrayId}:${element},`;
    return key;
  }

  private reachableArrays(position: number): ReadonlySet<number> {
    if (!this.reachable) {
      const reachable: ReadonlySet<number>[] = [];
      let union = new Set<number>();
      for (let at = this.fields.length - 1; at >= 0; at--) {
        const arrays = this.index.arraysOf(this.fields[at]?.path ?? '');
        if (arrays.size > 0) union = new Set([...union, ...arrays]);
        reachable[at] = union;
      }
      this.reachable = reachable;
    }
    return this.reachable[position] ?? NO_ARRAYS;
  }
}

const NO_ARRAYS: ReadonlySet<number> = new Set();
