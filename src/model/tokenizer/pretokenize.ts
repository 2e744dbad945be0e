/**
 * Pre-tokenizers: functions from pieces of text to finer pieces, each later encoded on its own. The
 * split behaviours are Hugging Face's (tokenizers' `SplitDelimiterBehavior`), read from its docs.
 * @internal
 */
import { toByteLevel } from './byteLevel.js';
import { compilePattern } from './pattern.js';
import { Pattern } from './regex.js';

/** Pieces in, pieces out. */
export type PreTokenizer = (pieces: readonly string[]) => string[];

/** What a split does with the matches of its pattern. */
export type SplitBehavior = 'Isolated' | 'Removed' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

interface Segment { text: string; isMatch: boolean }

/** What a split matches with: a compiled pattern (linear time), or a JavaScript RegExp with the g flag. */
export type Matcher = Pattern | RegExp;

function segments(s: string, re: Matcher, invert: boolean): Segment[] {
  const out: Segment[] = [];
  let at = 0;
  const push = (start: number, end: number): void => {
    if (start > at) out.push({ text: s.slice(at, start), isMatch: invert });
    out.push({ text: s.slice(start, end), isMatch: !invert });
    at = end;
  };
  if (re instanceof Pattern) {
    const span = new Int32Array(2);
    for (let from = 0; from <= s.length && re.exec(s, from, span);) {
      const [start, end] = span as unknown as [number, number];
      if (end > start) { push(start, end); from = end; } else from = end + (s.codePointAt(end)! > 0xffff ? 2 : 1);
    }
  } else {
    for (const m of s.matchAll(re)) if (m[0] !== '') push(m.index, m.index + m[0].length);
  }
  if (at < s.length) out.push({ text: s.slice(at), isMatch: invert });
  return out;
}

function applyBehavior(segs: Segment[], behavior: SplitBehavior): string[] {
  switch (behavior) {
    case 'Isolated': return segs.map((g) => g.text);
    case 'Removed': return segs.filter((g) => !g.isMatch).map((g) => g.text);
    case 'MergedWithPrevious': {
      // A match joins the piece before it, unless that piece is itself a match.
      const out: string[] = [];
      let prevMatch = false;
      for (const g of segs) {
        if (g.isMatch && !prevMatch && out.length > 0) out[out.length - 1] += g.text;
        else out.push(g.text);
        prevMatch = g.isMatch;
      }
      return out;
    }
    case 'MergedWithNext': {
      const out: string[] = [];
      let nextMatch = false;
      for (let i = segs.length - 1; i >= 0; i--) {
        const g = segs[i]!;
        if (g.isMatch && !nextMatch && out.length > 0) out[out.length - 1] = g.text + out[out.length - 1]!;
        else out.push(g.text);
        nextMatch = g.isMatch;
      }
      return out.reverse();
    }
    case 'Contiguous': {
      // Runs of matches, and runs of the rest, each become one piece.
      const out: string[] = [];
      let prev: boolean | null = null;
      for (const g of segs) {
        if (g.isMatch === prev) out[out.length - 1] += g.text;
        else out.push(g.text);
        prev = g.isMatch;
      }
      return out;
    }
  }
}

/** Splits every piece at the matches of a compiled pattern. */
export function splitPattern(re: Matcher, behavior: SplitBehavior, invert = false): PreTokenizer {
  return (pieces) => pieces.flatMap((p) => applyBehavior(segments(p, re, invert), behavior).filter((t) => t !== ''));
}

/** GPT-2's own split, run by a ByteLevel pre-tokenizer with `use_regex`. */
const GPT2_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
let gpt2: Pattern | undefined;

/** Maps every piece to the byte-level alphabet, first adding a space and splitting GPT-2's way if asked. */
export function byteLevel(addPrefixSpace: boolean, useRegex: boolean): PreTokenizer {
  return (pieces) => {
    let out = addPrefixSpace ? pieces.map((p) => (p.startsWith(' ') ? p : ` ${p}`)) : [...pieces];
    if (useRegex) out = splitPattern(gpt2 ??= compilePattern(GPT2_PATTERN), 'Isolated')(out);
    return out.map(toByteLevel);
  };
}

/** Runs pre-tokenizers one after the other. */
export function sequence(steps: readonly PreTokenizer[]): PreTokenizer {
  return (pieces) => steps.reduce<string[]>((acc, f) => f(acc), [...pieces]);
}
