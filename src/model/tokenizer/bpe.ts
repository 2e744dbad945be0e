/**
 * Byte-pair encoding of one pre-tokenized piece: start from its characters, then merge the adjacent
 * pair of lowest rank again and again, the leftmost first among equals (as Hugging Face tokenizers and
 * llama.cpp both do). A heap keeps a piece of n characters at O(n log n), so a megabyte of spaces is
 * no slower per byte than a word.
 * @internal
 */

/** Ids are below this, so a pair of ids packs into one number key. */
export const ID_LIMIT = 1 << 21;

/** The merge table: pair key (left * ID_LIMIT + right) to rank, and the id each rank makes. */
export interface Merges {
  readonly rank: ReadonlyMap<number, number>;
  readonly result: Int32Array;
}

/** A BPE model: the vocabulary the merges work in, and how a piece is looked up. */
export interface BpeModel {
  readonly vocab: ReadonlyMap<string, number>;
  readonly merges: Merges;
  /** Llama 3's rule: a piece that is itself a token is that token, merges or not. */
  readonly ignoreMerges: boolean;
}

/** Builds the merge table from [left, right] string pairs in rank order; the failing index if one does not fit. */
export function buildMerges(pairs: readonly (readonly [string, string])[], vocab: ReadonlyMap<string, number>):
  Merges | { bad: number; why: string } {
  const rank = new Map<number, number>();
  const result = new Int32Array(pairs.length);
  for (let r = 0; r < pairs.length; r++) {
    const [a, b] = pairs[r]!;
    const ia = vocab.get(a);
    const ib = vocab.get(b);
    const ir = vocab.get(a + b);
    if (ia === undefined || ib === undefined) return { bad: r, why: `${JSON.stringify(ia === undefined ? a : b)} is not a token` };
    if (ir === undefined) return { bad: r, why: `it makes ${JSON.stringify(a + b)}, which is not a token` };
    const key = ia * ID_LIMIT + ib;
    // A repeated pair keeps its first (best) rank, as a dictionary built in order would.
    if (!rank.has(key)) rank.set(key, r);
    result[r] = ir;
  }
  return { rank, result };
}

const POS_LIMIT = 2 ** 31;

class Heap {
  private readonly a: number[] = [];
  get size(): number { return this.a.length; }
  push(v: number): void {
    const a = this.a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }
  pop(): number {
    const a = this.a;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/** The ids of one piece's characters after every merge; a character missing from the vocabulary is `undefined`. */
export function bpeIds(model: BpeModel, piece: string): number[] {
  if (model.ignoreMerges) {
    const whole = model.vocab.get(piece);
    if (whole !== undefined) return [whole];
  }
  const chars = Array.from(piece);
  const n = chars.length;
  const id = new Int32Array(n);
  for (let i = 0; i < n; i++) id[i] = model.vocab.get(chars[i]!) ?? -1;
  if (n < 2) return Array.from(id);
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  for (let i = 0; i < n; i++) { next[i] = i + 1 < n ? i + 1 : -1; prev[i] = i - 1; }
  const { rank, result } = model.merges;
  const heap = new Heap();
  const consider = (l: number): void => {
    const r = next[l]!;
    if (l < 0 || r < 0 || id[l]! < 0 || id[r]! < 0) return;
    const k = rank.get(id[l]! * ID_LIMIT + id[r]!);
    if (k !== undefined) heap.push(k * POS_LIMIT + l);
  };
  for (let i = 0; i + 1 < n; i++) consider(i);
  while (heap.size > 0) {
    const top = heap.pop();
    const k = Math.floor(top / POS_LIMIT);
    const l = top - k * POS_LIMIT;
    const r = next[l]!;
    // A stale entry: its left symbol was merged away or now pairs with something else.
    if (!alive[l] || r < 0 || id[l]! < 0 || id[r]! < 0 || rank.get(id[l]! * ID_LIMIT + id[r]!) !== k) continue;
    id[l] = result[k]!;
    alive[r] = 0;
    next[l] = next[r]!;
    if (next[l]! >= 0) prev[next[l]!] = l;
    if (prev[l]! >= 0) consider(prev[l]!);
    consider(l);
  }
  const out: number[] = [];
  for (let i = 0; i >= 0 && i < n; i = next[i]!) out.push(id[i]!);
  return out;
}
