/**
 * Oniguruma patterns (what Hugging Face tokenizers compiles a tokenizer.json's `Split` regex with): their
 * character sets as JavaScript `u` classes, for the linear-time matcher of regex.ts, and (translatePattern)
 * whole patterns as JavaScript regular expressions. Node 20's RegExp has no inline `(?i:...)` group and its `\s`,
 * `\d`, `.`, `^` and `$` mean other sets than Oniguruma's, so those are rewritten; a construct whose
 * meaning cannot be kept (possessive and atomic groups, `\G`, `\K`, class intersections) is refused.
 * @internal
 */

/** Why a pattern cannot be translated; the loader turns it into a TokenizerError naming the file. */
export class PatternError extends Error {}

const SYNTAX = '^$\\.*+?()[]{}|/';
const WORD = String.raw`\p{L}\p{M}\p{Nd}\p{Pc}`;
/** Escapes outside a class whose Oniguruma meaning is a set or an anchor JavaScript spells otherwise. */
export const OUTSIDE: Readonly<Record<string, string>> = {
  s: String.raw`\p{White_Space}`, S: String.raw`\P{White_Space}`, d: String.raw`\p{Nd}`, D: String.raw`\P{Nd}`,
  w: `[${WORD}]`, W: `[^${WORD}]`, h: '[0-9a-fA-F]', H: '[^0-9a-fA-F]', A: '^', z: '$', Z: String.raw`(?=\n?$)`,
  n: String.raw`\n`, r: String.raw`\r`, t: String.raw`\t`, f: String.raw`\f`, v: String.raw`\v`, a: String.raw`\x07`, e: String.raw`\x1b`,
};
/** The same inside a class, where only a union can be written. */
const INSIDE: Readonly<Record<string, string>> = {
  s: String.raw`\p{White_Space}`, S: String.raw`\P{White_Space}`, d: String.raw`\p{Nd}`, D: String.raw`\P{Nd}`, w: WORD, h: '0-9a-fA-F',
  n: String.raw`\n`, r: String.raw`\r`, t: String.raw`\t`, f: String.raw`\f`, v: String.raw`\v`, a: String.raw`\x07`, e: String.raw`\x1b`,
};

const esc = (c: string): string => (SYNTAX.includes(c) || c === '-' ? `\\${c}` : c);

/** A character under case-insensitive matching: every case of it, as a class, or itself. */
export function folded(c: string, inClass: boolean): string {
  const lo = c.toLowerCase();
  const up = c.toUpperCase();
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points are what is counted here
  if (lo === up || [...lo].length !== 1 || [...up].length !== 1) return inClass ? esc(c) : escOutside(c);
  const set = lo === c || up === c ? `${esc(lo)}${esc(up)}` : `${esc(c)}${esc(lo)}${esc(up)}`;
  return inClass ? set : `[${set}]`;
}

export function escOutside(c: string): string {
  return SYNTAX.includes(c) ? `\\${c}` : c;
}

/** Reads a braced or single-letter property or a code point escape at `p[i] === '\\'`; null if not one. */
export function braced(p: string, i: number): { text: string; end: number } | null {
  const m = /^\\([pPx])\{([^}]*)\}/.exec(p.slice(i));
  if (m !== null) return { text: m[1] === 'x' ? `\\u{${m[2]!}}` : m[0], end: i + m[0].length };
  const one = /^\\([pP])([A-Za-z])/.exec(p.slice(i));
  if (one !== null) return { text: `\\${one[1]!}{${one[2]!}}`, end: i + 3 };
  const fixed = /^\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|0(?![0-9]))/.exec(p.slice(i));
  if (fixed !== null) return { text: fixed[0], end: i + fixed[0].length };
  return null;
}

export function charClass(p: string, start: number, ci: boolean): { text: string; end: number } {
  let i = start + 1;
  let out = '[';
  if (p[i] === '^') { out += '^'; i++; }
  const first = i;
  while (i < p.length) {
    const c = String.fromCodePoint(p.codePointAt(i)!);
    if (c === ']' && i > first) return { text: out + ']', end: i + 1 };
    if (c === '[') throw new PatternError(`nested character class at ${i}`);
    if (p.startsWith('&&', i)) throw new PatternError(`character class intersection at ${i}`);
    if (c === '\\') {
      const b = braced(p, i);
      if (b !== null) { out += b.text; i = b.end; continue; }
      const e = p[i + 1];
      if (e === undefined) throw new PatternError('the pattern ends inside an escape');
      if (INSIDE[e] !== undefined) out += INSIDE[e];
      else if (/[A-Za-z0-9]/.test(e)) throw new PatternError(`unsupported escape \\${e} in a class at ${i}`);
      else out += esc(e);
      i += 2;
      continue;
    }
    if (c === '-') {
      // Between two items it makes a range (JavaScript refuses one it cannot read); first or last it is literal.
      if (i === first || p[i + 1] === ']') out += '\\-';
      else if (ci) throw new PatternError(`a case-insensitive range written with escapes at ${i}`);
      else out += '-';
      i++;
      continue;
    }
    const range = /^(.)-([^\]\\])/u.exec(p.slice(i));
    if (range !== null) {
      const [, a, b] = range as unknown as [string, string, string];
      out += `${esc(a)}-${esc(b)}`;
      if (ci) {
        const asciiPair = /^[a-z]$/.test(a) && /^[a-z]$/.test(b) ? [a.toUpperCase(), b.toUpperCase()]
          : /^[A-Z]$/.test(a) && /^[A-Z]$/.test(b) ? [a.toLowerCase(), b.toLowerCase()] : null;
        if (asciiPair === null) throw new PatternError(`a case-insensitive range that is not of ASCII letters at ${i}`);
        out += `${asciiPair[0]!}-${asciiPair[1]!}`;
      }
      i += range[0].length;
      continue;
    }
    out += ci ? folded(c, true) : esc(c);
    i += c.length;
  }
  throw new PatternError(`unterminated character class at ${start}`);
}

/** Translates an Oniguruma (Ruby syntax) pattern into a JavaScript `u` pattern of the same matches. */
export function translatePattern(p: string): string {
  let out = '';
  const groups: boolean[] = [];
  let ci = false;
  let quantified: boolean = false;
  for (let i = 0; i < p.length;) {
    const c = String.fromCodePoint(p.codePointAt(i)!);
    const wasQuantified: boolean = quantified;
    quantified = false;
    if (c === '\\') {
      const b = braced(p, i);
      if (b !== null) { out += b.text; i = b.end; continue; }
      const e = p[i + 1];
      if (e === undefined) throw new PatternError('the pattern ends inside an escape');
      if (OUTSIDE[e] !== undefined) out += OUTSIDE[e];
      else if (/[1-9]/.test(e)) out += `\\${e}`;
      else if (/[A-Za-z0-9]/.test(e)) throw new PatternError(`unsupported escape \\${e} at ${i}`);
      else out += ci ? folded(e, false) : escOutside(e);
      i += 2;
      continue;
    }
    if (c === '[') { const k = charClass(p, i, ci); out += k.text; i = k.end; continue; }
    if (c === '(') {
      const head = /^\((\?(?:i:|-i:|:|=|!|<=|<!|<[A-Za-z_]\w*>|#[^)]*\)|[^)]*))?/.exec(p.slice(i))![0];
      groups.push(ci);
      if (head === '(?i:') { ci = true; out += '(?:'; } else if (head === '(?-i:') { ci = false; out += '(?:'; } else if (head.startsWith('(?#')) { groups.pop(); } else if (head === '(' || /^\(\?(?::|=|!|<=|<!|<[A-Za-z_]\w*>)$/.test(head)) out += head;
      else throw new PatternError(`unsupported group ${head} at ${i}`);
      i += head.length;
      continue;
    }
    if (c === ')') {
      if (groups.length === 0) throw new PatternError(`unbalanced ) at ${i}`);
      ci = groups.pop()!;
      out += ')';
      quantified = false;
      i++;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      if (wasQuantified && c === '+') throw new PatternError(`possessive quantifier at ${i}`);
      out += c;
      quantified = c !== '?' || !wasQuantified;
      i++;
      continue;
    }
    if (c === '{') {
      const q = /^\{(\d*),?(\d*)\}/.exec(p.slice(i));
      if (q !== null && (q[1] !== '' || q[2] !== '')) {
        if (wasQuantified) throw new PatternError(`a quantifier of a quantifier at ${i}`);
        out += q[1] === '' ? `{0,${q[2]!}}` : q[0];
        quantified = true;
        i += q[0].length;
        continue;
      }
      out += '\\{';
      i++;
      continue;
    }
    if (c === '.') out += String.raw`[^\n]`;
    else if (c === '^') out += String.raw`(?:^|(?<=\n))`;
    else if (c === '$') out += String.raw`(?:$|(?=\n))`;
    else if (c === '|') out += '|';
    else if (c === '}' || c === ']') out += `\\${c}`;
    else out += ci ? folded(c, false) : c;
    i += c.length;
  }
  if (groups.length > 0) throw new PatternError('unbalanced (');
  return out;
}

/**
 * The pre-tokenizer llama.cpp runs for `tokenizer.ggml.pre = "qwen2"` (src/llama-vocab.cpp): Qwen2's
 * tokenizer.json pattern with its `(?i:...)` contractions spelled out as classes.
 */
export const QWEN2_PATTERN = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** The contractions of the Llama 3 family's patterns, case-insensitive, spelled out as classes. */
const CONTRACTIONS = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`;

/** llama.cpp's LLAMA3 pre-tokenizer (`llama-bpe`, `llama3`, `dbrx`, `smaug-bpe`): Qwen2's with digits in runs of up to three. */
export const LLAMA3_PATTERN = String.raw`${CONTRACTIONS}|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** GPT-2's split, llama.cpp's GPT2 pre-tokenizer (`gpt-2`, `phi-2`) and the second step of its DEFAULT one. */
export const GPT2_SPLIT_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;

/**
 * llama.cpp's DEFAULT pre-tokenizer (`default`, or no `tokenizer.ggml.pre`): four splits one after the
 * other, each keeping the text between its matches as pieces too.
 */
export const DEFAULT_PATTERNS: readonly string[] = [
  String.raw`[\p{P}\$\+<=>\^~\|]+`, GPT2_SPLIT_PATTERN, String.raw`\p{N}+`, '[0-9][0-9][0-9]',
];

/**
 * llama.cpp's GPT4O pre-tokenizer (`gpt-4o`, `llama4`; Phi-4-mini's files): o200k's pattern as llama.cpp
 * runs it, where "an upper-case-like letter" is any letter but a-z and "a lower-case-like one" any letter
 * but A-Z (so a non-ASCII letter is both, and a combining mark is neither).
 */
const UPPERISH = String.raw`[^\P{L}a-z]`;
const LOWERISH = String.raw`[^\P{L}A-Z]`;
export const GPT4O_PATTERN = String.raw`[^\r\n\p{L}\p{N}]?${UPPERISH}*${LOWERISH}+${CONTRACTIONS}?|[^\r\n\p{L}\p{N}]?${UPPERISH}+${LOWERISH}*${CONTRACTIONS}?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
