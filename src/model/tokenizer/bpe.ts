// Above the file's doc, which is marked internal: stripInternal drops the declaration that doc attaches to.
import type { TokenLookup } from './table.js';

/**
 * Byte-pair encoding of one pre-tokenized piece: start from its characters, then merge the adjacent
 * pair of lowest rank again and again, the leftmost first among equals (as Hugging Face tokenizers and
 * llama.cpp both do). A heap keeps a piece of n characters at O(n log n), so a megabyte of spaces is
 * no slower per byte than a word.
 * @internal
 */

/** Ids are below this (2^21). */
export const ID_LIMIT = 1 << 21;

/**
 * Pairs of ids to merge ranks, in an open-addressing table of typed arrays: no boxed key per pair, so
 * building it and looking pairs up cost the same per merge however many merges there are.
 */
class PairTable {
  private readonly left: Int32Array;
  private readonly right: Int32Array;
  private readonly value: Int32Array;
  private readonly mask: number;
  constructor(expected: number) {
    let cap = 16;
    while (cap < expected * 1.5) cap *= 2;
    this.mask = cap - 1;
    this.left = new Int32Array(cap).fill(-1);
    this.right = new Int32Array(cap);
    this.value = new Int32Array(cap);
  }
  private slot(l: number, r: number): number {
    let h = (Math.imul(l, 0x9e3779b1) ^ Math.imul(r + 0x7f4a7c15, 0x85ebca77)) & this.mask;
    while (this.left[h] !== -1 && (this.left[h] !== l || this.right[h] !== r)) h = (h + 1) & this.mask;
    return h;
  }
  /** The rank of the pair, or -1. */
  get(l: number, r: number): number {
    const h = this.slot(l, r);
    return this.left[h] === -1 ? -1 : this.value[h]!;
  }
  /** Sets the pair's rank unless it has one (a repeated pair keeps its first, best rank). */
  setFirst(l: number, r: number, v: number): void {
    const h = this.slot(l, r);
    if (this.left[h] !== -1) return;
    this.left[h] = l; this.right[h] = r; this.value[h] = v;
  }
}

/** The merge table: pair of ids to rank, and the id each rank makes. */
export interface Merges {
  readonly rank: PairTable;
  readonly result: Int32Array;
}

/** A BPE model: the vocabulary the merges work in, and how a piece is looked up. */
export interface BpeModel {
  readonly vocab: TokenLookup;
  readonly merges: Merges;
  /** Llama 3's rule: a piece that is itself a token is that token, merges or not. */
  readonly ignoreMerges: boolean;
}

/** Builds the merge table from [left, right] string pairs in rank order; the failing index if one does not fit. */
export function buildMerges(pairs: readonly (readonly [string, string])[], vocab: TokenLookup):
  Merges | { bad: number; why: string } {
  const rank = new PairTable(pairs.length);
  const result = new Int32Array(pairs.length);
  for (let r = 0; r < pairs.length; r++) {
    const [a, b] = pairs[r]!;
    const ia = vocab.get(a);
    const ib = vocab.get(b);
    const ir = vocab.get(a + b);
    if (ia === undefined || ib === undefined) return { bad: r, why: `${JSON.stringify(ia === undefined ? a : b)} is not a token` };
    if (ir === undefined) return { bad: r, why: `it makes ${JSON.stringify(a + b)}, which is not a token` };
    // A repeated pair keeps its first (best) rank, as a dictionary built in order would.
    rank.setFirst(ia, ib, r);
    result[r] = ir;
  }
  return { rank, result };
}

const POS_LIMIT = 2 ** 31;

/** A binary min-heap of numbers in a growable Float64Array (outside the JS heap, 8 bytes an entry). */
class Heap {
  private a = new Float64Array(64);
  size = 0;
  push(v: number): void {
    if (this.size === this.a.length) { const b = new Float64Array(this.a.length * 2); b.set(this.a); this.a = b; }
    const a = this.a;
    let i = this.size++;
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
    const last = a[--this.size]!;
    const n = this.size;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const c = l + 1 < n && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/** Heap operations over every BPE run: the tests read it to show a piece costs O(n log n). */
export const bpeWork = { steps: 0 };

/** The ids of one piece's characters after every merge; a character missing from the vocabulary is `undefined`. */
export function bpeIds(model: BpeModel, piece: string): number[] {
  if (model.ignoreMerges) {
    const whole = model.vocab.get(piece);
    if (whole !== undefined) return [whole];
  }
  // Code points, read without an array of one string each (a piece may be megabytes long).
  let n = 0;
  // A high surrogate makes one code point with a low one after it only (as codePointAt reads it).
  for (let i = 0; i < piece.length; i++, n++) if ((piece.charCodeAt(i) & 0xfc00) === 0xd800 && (piece.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  const id = new Int32Array(n);
  for (let i = 0, k = 0; i < piece.length; k++) {
    const w = piece.codePointAt(i)! > 0xffff ? 2 : 1;
    id[k] = model.vocab.get(piece.slice(i, i + w)) ?? -1;
    i += w;
  }
  if (n < 2) return Array.from(id);
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  for (let i = 0; i < n; i++) { next[i] = i + 1 < n ? i + 1 : -1; prev[i] = i - 1; }
  const { rank, result } = model.merges;
  const heap = new Heap();
  let steps = 0;
  const consider = (l: number): void => {
    const r = next[l]!;
    if (l < 0 || r < 0 || id[l]! < 0 || id[r]! < 0) return;
    const k = rank.get(id[l]!, id[r]!);
    if (k >= 0) { heap.push(k * POS_LIMIT + l); steps += 1 + Math.ceil(Math.log2(heap.size + 1)); }
  };
  for (let i = 0; i + 1 < n; i++) consider(i);
  while (heap.size > 0) {
    steps += 1 + Math.ceil(Math.log2(heap.size + 1));
    const top = heap.pop();
    const k = Math.floor(top / POS_LIMIT);
    const l = top - k * POS_LIMIT;
    const r = next[l]!;
    // A stale entry: its left symbol was merged away or now pairs with something else.
    if (!alive[l] || r < 0 || id[l]! < 0 || id[r]! < 0 || rank.get(id[l]!, id[r]!) !== k) continue;
    id[l] = result[k]!;
    alive[r] = 0;
    next[l] = next[r]!;
    if (next[l] >= 0) prev[next[l]] = l;
    if (prev[l]! >= 0) consider(prev[l]!);
    consider(l);
  }
  bpeWork.steps += steps;
  const out: number[] = [];
  for (let i = 0; i >= 0 && i < n; i = next[i]!) out.push(id[i]!);
  return out;
}
