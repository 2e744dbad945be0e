/**
 * Pre-tokenizers: functions from pieces of text to finer pieces, each later encoded on its own. The
 * split behaviours are Hugging Face's (tokenizers' `SplitDelimiterBehavior`), read from its docs.
 * @internal
 */
import { toByteLevel } from './byteLevel.js';
import { Pattern, compilePattern } from './regex.js';

/**
 * One piece in, finer pieces out through `emit`, one at a time: a text of any length is pre-tokenized
 * without holding all of its pieces at once.
 */
export type PreTokenizer = (piece: string, emit: (p: string) => void) => void;

/** What a split does with the matches of its pattern. */
export type SplitBehavior = 'Isolated' | 'Removed' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

/** What a split matches with: a compiled pattern (linear time), or a JavaScript RegExp with the g flag. */
export type Matcher = Pattern | RegExp;

/** Calls `seg` for each run of text between matches and each match, in order. */
function segments(s: string, re: Matcher, invert: boolean, seg: (text: string, isMatch: boolean) => void): void {
  let at = 0;
  const push = (start: number, end: number): void => {
    if (start > at) seg(s.slice(at, start), invert);
    seg(s.slice(start, end), !invert);
    at = end;
  };
  if (re instanceof Pattern) {
    const span = new Int32Array(2);
    for (let from = 0; from <= s.length && re.exec(s, from, span);) {
      const start = span[0]!;
      const end = span[1]!;
      if (end > start) { push(start, end); from = end; } else from = end + (s.codePointAt(end)! > 0xffff ? 2 : 1);
    }
  } else {
    for (const m of s.matchAll(re)) if (m[0] !== '') push(m.index, m.index + m[0].length);
  }
  if (at < s.length) seg(s.slice(at), invert);
}

/**
 * Hugging Face's behaviours, applied as the segments come, holding at most one piece back: with
 * MergedWithPrevious a match joins the piece before it unless that piece is itself a match; with
 * MergedWithNext a match joins the piece after it unless that one is a match; Contiguous joins runs.
 */
function behave(behavior: SplitBehavior, emit: (p: string) => void): { seg: (text: string, isMatch: boolean) => void; end: () => void } {
  let held: string | null = null;
  let heldMatch = false;
  const flush = (): void => { if (held !== null && held !== '') emit(held); held = null; };
  switch (behavior) {
    case 'Isolated': return { seg: (t) => { if (t !== '') emit(t); }, end: () => undefined };
    case 'Removed': return { seg: (t, m) => { if (!m && t !== '') emit(t); }, end: () => undefined };
    case 'MergedWithPrevious': return {
      seg: (t, m) => {
        if (m && held !== null && !heldMatch) held += t;
        else { flush(); held = t; }
        heldMatch = m;
      },
      end: flush,
    };
    case 'MergedWithNext': return {
      seg: (t, m) => {
        if (!m && held !== null && heldMatch) { held += t; heldMatch = false; emit(held); held = null; return; }
        flush();
        held = t;
        heldMatch = m;
      },
      end: flush,
    };
    case 'Contiguous': return {
      seg: (t, m) => {
        if (held !== null && heldMatch === m) held += t;
        else { flush(); held = t; heldMatch = m; }
      },
      end: flush,
    };
  }
}

/** Splits every piece at the matches of a compiled pattern. */
export function splitPattern(re: Matcher, behavior: SplitBehavior, invert = false): PreTokenizer {
  return (piece, emit) => {
    const b = behave(behavior, emit);
    segments(piece, re, invert, b.seg);
    b.end();
  };
}

/** GPT-2's own split, run by a ByteLevel pre-tokenizer with `use_regex`. */
const GPT2_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
let gpt2: Pattern | undefined;

/** Maps every piece to the byte-level alphabet, first adding a space and splitting GPT-2's way if asked. */
export function byteLevel(addPrefixSpace: boolean, useRegex: boolean): PreTokenizer {
  return (piece, emit) => {
    const p = addPrefixSpace && !piece.startsWith(' ') ? ` ${piece}` : piece;
    if (useRegex) splitPattern(gpt2 ??= compilePattern(GPT2_PATTERN), 'Isolated')(p, (q) => emit(toByteLevel(q)));
    else emit(toByteLevel(p));
  };
}

/** Runs pre-tokenizers one after the other. */
export function sequence(steps: readonly PreTokenizer[]): PreTokenizer {
  return steps.reduceRight<PreTokenizer>((after, f) => (piece, emit) => f(piece, (q) => after(q, emit)), (piece, emit) => emit(piece));
}

/** The pieces of one text, as an array (for tests and small texts). */
export function preTokenizeAll(pre: PreTokenizer, pieces: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of pieces) pre(p, (q) => out.push(q));
  return out;
}
