/**
 * A message as event-ruler sees it: its leaves by dot-joined path (`{"a": {"b": 1}}` and `{"a.b": 1}` both have
 * a leaf at `a.b`), each with the array elements it sits in, so that a match can keep to one element of each
 * array (AWS's "array-consistent" matching). Empty arrays and objects have no leaves. A path's leaves are
 * found when a pattern first asks for them, by walking only the parts of the message on that path (without
 * recursion, so no nesting depth can exhaust the stack), and kept for every other pattern the message meets.
 */
import type { JsonObjectValue, JsonPrimitive, JsonValue } from './json-value.ts';

export interface Leaf {
  readonly value: JsonPrimitive;
  /** The innermost array element the leaf sits in; undefined outside arrays. */
  readonly position: ArrayPosition | undefined;
}

/** An element of an array, linked to the element its array sits in (shared, so deep nesting stays linear). */
export interface ArrayPosition {
  readonly arrayId: number;
  readonly element: number;
  readonly outer: ArrayPosition | undefined;
}

/** Which array elements a partial match has kept to: array id to element index. */
export type Constraints = ReadonlyMap<number, number>;

interface PathLeaves {
  readonly leaves: Leaf[];
  arrays?: ReadonlySet<number>;
  byElement?: Map<number, Map<number, Leaf[]>>;
}

/** Past this many leaves at a path, finding those of one array element goes through an index. */
const SCAN_LIMIT = 16;

/** The message's top-level values by key: an object, or a function that reads them when first asked. */
export type MessageRoot = JsonObjectValue | ((key: string) => JsonValue | undefined);

export class MessageIndex {
  private readonly byPath = new Map<string, PathLeaves>();
  private readonly arrayIds = new Map<readonly JsonValue[], number>();
  private readonly topLevel: (key: string) => JsonValue | undefined;

  constructor(root: MessageRoot) {
    this.topLevel =
      typeof root === 'function' ? root : (key) => (Object.hasOwn(root, key) ? root[key] : undefined);
  }

  /** The leaves at `path` that sit in the elements `constraints` kept to (and in any element of other arrays). */
  consistentLeaves(path: string, constraints: Constraints): readonly Leaf[] {
    const found = this.at(path);
    if (constraints.size === 0) return found.leaves;
    if (found.leaves.length <= SCAN_LIMIT)
      return found.leaves.filter((leaf) => isConsistent(leaf, constraints));
    const byArray = elementIndex(found);
    for (const [arrayId, element] of constraints) {
      const byIndex = byArray.get(arrayId);
      if (!byIndex) continue;
      const leaves = byIndex.get(element) ?? NO_LEAVES;
      return constraints.size === 1 ? leaves : leaves.filter((leaf) => isConsistent(leaf, constraints));
    }
    return found.leaves;
  }

  /** The arrays any leaf at `path` sits in. */
  arraysOf(path: string): ReadonlySet<number> {
    const found = this.at(path);
    if (!found.arrays) {
      const arrays = new Set<number>();
      for (const leaf of found.leaves) for (let at = leaf.position; at; at = at.outer) arrays.add(at.arrayId);
      found.arrays = arrays;
    }
    return found.arrays;
  }

  private at(path: string): PathLeaves {
    let found = this.byPath.get(path);
    if (!found) {
      found = { leaves: this.collect(path) };
      this.byPath.set(path, found);
    }
    return found;
  }

  /** The leaves at `path`: every way of splitting it at dots into keys that lead from the top level. */
  private collect(path: string): Leaf[] {
    const leaves: Leaf[] = [];
    // `from`: where the rest of the path starts; the path's length once a key ended it.
    const pending: { value: JsonValue; from: number; position: ArrayPosition | undefined }[] = [];
    for (let dot = path.indexOf('.'); ; dot = path.indexOf('.', dot + 1)) {
      const value = this.topLevel(dot < 0 ? path : path.slice(0, dot));
      if (value !== undefined)
        pending.push({ value, from: dot < 0 ? path.length : dot + 1, position: undefined });
      if (dot < 0) break;
    }
    for (let next = pending.pop(); next; next = pending.pop()) {
      const { value, from, position } = next;
      if (Array.isArray(value)) {
        const arrayId = this.arrayId(value);
        for (let element = value.length - 1; element >= 0; element--) {
          pending.push({
            value: value[element] ?? null,
            from,
            position: { arrayId, element, outer: position },
          });
        }
      } else if (from === path.length) {
        if (typeof value !== 'object' || value === null) leaves.push({ value, position });
      } else if (typeof value === 'object' && value !== null) {
        const object = value as JsonObjectValue;
        for (let dot = path.indexOf('.', from); ; dot = path.indexOf('.', dot + 1)) {
          const key = path.slice(from, dot < 0 ? path.length : dot);
          if (Object.hasOwn(object, key)) {
            pending.push({ value: object[key] ?? null, from: dot < 0 ? path.length : dot + 1, position });
          }
          if (dot < 0) break;
        }
      }
    }
    return leaves;
  }

  private arrayId(array: readonly JsonValue[]): number {
    let id = this.arrayIds.get(array);
    if (id === undefined) {
      id = this.arrayIds.size;
      this.arrayIds.set(array, id);
    }
    return id;
  }
}

const NO_LEAVES: readonly Leaf[] = [];

function elementIndex(found: PathLeaves): Map<number, Map<number, Leaf[]>> {
  if (!found.byElement) {
    const byArray = new Map<number, Map<number, Leaf[]>>();
    for (const leaf of found.leaves) {
      for (let at = leaf.position; at; at = at.outer) {
        let byIndex = byArray.get(at.arrayId);
        if (!byIndex) {
          byIndex = new Map();
          byArray.set(at.arrayId, byIndex);
        }
        const leaves = byIndex.get(at.element);
        if (leaves) leaves.push(leaf);
        else byIndex.set(at.element, [leaf]);
      }
    }
    found.byElement = byArray;
  }
  return found.byElement;
}

function isConsistent(leaf: Leaf, constraints: Constraints): boolean {
  for (let at = leaf.position; at; at = at.outer) {
    const kept = constraints.get(at.arrayId);
    if (kept !== undefined && kept !== at.element) return false;
  }
  return true;
}

/** The constraints with the leaf's elements added (the same object when the leaf adds none). */
export function withLeaf(constraints: Constraints, leaf: Leaf): Constraints {
  let merged: Map<number, number> | undefined;
  for (let at = leaf.position; at; at = at.outer) {
    if (constraints.has(at.arrayId)) continue;
    merged ??= new Map(constraints);
    merged.set(at.arrayId, at.element);
  }
  return merged ?? constraints;
}
