/**
 * SentencePiece-style encoding of a GGUF whose `tokenizer.ggml.model` is "llama" (Llama 2, Gemma,
 * Phi-3, MiniCPM), as llama.cpp does it: the text (spaces already written `▁`) starts as its
 * characters; the adjacent pair whose joined text is a token of the highest score is joined, the
 * leftmost first among equal scores, again and again; a character that is no token becomes the tokens
 * of its UTF-8 bytes (`<0xNN>`). A heap keeps a text of n characters at O(n log n), and a pair longer
 * than the longest token is never looked up, so each step costs at most one bounded lookup.
 * @internal
 */
import { bpeWork } from './bpe.js';

/** What the SentencePiece encoder reads. */
export interface SpmModel {
  readonly type: 'spm';
  /** Every token's text to its id (llama.cpp's text_to_token: every type, the last id of a repeated text). */
  readonly lookup: ReadonlyMap<string, number>;
  /** Per id, its score (0 where the file has none). */
  readonly scores: Float32Array;
  /** The longest token, in UTF-16 units. */
  readonly maxLength: number;
  /** Per byte, its `<0xNN>` token (else the token of that one ASCII character), or -1. */
  readonly byteIds: Int32Array;
}

/** The space marker SentencePiece writes for ' '. */
export const SPACE_MARK = '\u2581';

/** A max-heap of bigrams by score, then by leftmost position. */
class BigramHeap {
  private score = new Float64Array(64);
  private left = new Int32Array(64);
  private right = new Int32Array(64);
  private len = new Int32Array(64);
  size = 0;
  private above(i: number, j: number): boolean {
    return this.score[i]! > this.score[j]! || (this.score[i] === this.score[j] && this.left[i]! < this.left[j]!);
  }
  private swap(i: number, j: number): void {
    const s = this.score[i]!; this.score[i] = this.score[j]!; this.score[j] = s;
    const l = this.left[i]!; this.left[i] = this.left[j]!; this.left[j] = l;
    const r = this.right[i]!; this.right[i] = this.right[j]!; this.right[j] = r;
    const n = this.len[i]!; this.len[i] = this.len[j]!; this.len[j] = n;
  }
  push(score: number, left: number, right: number, len: number): void {
    if (this.size === this.score.length) {
      const grow = <T extends Float64Array | Int32Array>(a: T): T => { const b = new (a.constructor as new (n: number) => T)(a.length * 2); b.set(a); return b; };
      this.score = grow(this.score); this.left = grow(this.left); this.right = grow(this.right); this.len = grow(this.len);
    }
    let i = this.size++;
    this.score[i] = score; this.left[i] = left; this.right[i] = right; this.len[i] = len;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  /** Moves the top to the slot past the end (read with top()) and restores the heap. */
  pop(): void {
    const n = --this.size;
    this.swap(0, n);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const c = l + 1 < n && this.above(l + 1, l) ? l + 1 : l;
      if (!this.above(c, i)) break;
      this.swap(c, i);
      i = c;
    }
  }
  /** The entry pop() just removed. */
  popped(): { left: number; right: number; len: number } {
    return { left: this.left[this.size]!, right: this.right[this.size]!, len: this.len[this.size]! };
  }
}

const utf8 = new TextEncoder();

/**
 * The ids of a text (spaces already `▁`); a byte with no token is -1, which the caller refuses.
 * Every joined symbol is a token (a pair is only joined when its text is one), so no symbol needs
 * splitting again afterwards.
 */
export function spmIds(model: SpmModel, text: string): number[] {
  // Symbols: start (UTF-16 index) and length of each character, linked as a list.
  let n = 0;
  for (let i = 0; i < text.length; i++, n++) if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  const start = new Int32Array(n);
  const len = new Int32Array(n);
  for (let i = 0, k = 0; i < text.length; k++) {
    const w = text.codePointAt(i)! > 0xffff ? 2 : 1;
    start[k] = i; len[k] = w;
    i += w;
  }
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  for (let i = 0; i < n; i++) { next[i] = i + 1 < n ? i + 1 : -1; prev[i] = i - 1; }
  const heap = new BigramHeap();
  let steps = 0;
  const consider = (l: number, r: number): void => {
    if (l < 0 || r < 0) return;
    const size = len[l]! + len[r]!;
    if (size > model.maxLength) return;
    const id = model.lookup.get(text.slice(start[l], start[l]! + size));
    if (id === undefined) return;
    heap.push(model.scores[id]!, l, r, size);
    steps += 1 + Math.ceil(Math.log2(heap.size + 1));
  };
  for (let i = 1; i < n; i++) consider(i - 1, i);
  while (heap.size > 0) {
    steps += 1 + Math.ceil(Math.log2(heap.size + 1));
    heap.pop();
    const { left: l, right: r, len: size } = heap.popped();
    // A stale pair: one side was joined to something else since (lengths are fixed by the start indices).
    if (len[l] === 0 || len[r] === 0 || len[l]! + len[r]! !== size) continue;
    len[l] = size;
    len[r] = 0;
    next[l] = next[r]!;
    if (next[l] >= 0) prev[next[l]] = l;
    consider(prev[l]!, l);
    consider(l, next[l]);
  }
  bpeWork.steps += steps;
  const out: number[] = [];
  for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]!) {
    const piece = text.slice(start[i], start[i]! + len[i]!);
    const id = model.lookup.get(piece);
    if (id !== undefined) { out.push(id); continue; }
    for (const b of utf8.encode(piece)) out.push(model.byteIds[b]!);
  }
  return out;
}
