/**
 * Added tokens (`<|im_start|>`, `<think>`, ...) are found in the text before anything else, so they
 * stay whole. The search is leftmost-longest and moves past every match it finds, as Hugging Face
 * tokenizers' Aho-Corasick does: a match refused (a special token while special tokens are not parsed,
 * a single-word token inside a word) stays plain text and is not searched again for shorter tokens.
 * Not part of the public API, though its AddedToken type is (a Tokenizer's `added`): this comment has no
 * internal tag, which stripInternal would apply to the declaration below and leave the public types dangling.
 */

/** One added token, with Hugging Face's flags (all false for tokens that come from a GGUF). */
export interface AddedToken {
  readonly id: number;
  readonly content: string;
  /** Matched only when special tokens are parsed, and skipped by decode's skipSpecial. */
  readonly special: boolean;
  /** Matched in the normalized text rather than the raw one. */
  readonly normalized: boolean;
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  readonly singleWord: boolean;
}

/** A run of plain text, or one added token. */
export type Part = { readonly text: string } | { readonly id: number };

const WORD_CHAR = /[\p{L}\p{N}_]/u;
const SPACE = /\p{White_Space}/u;

function lastChar(s: string, end: number): string | undefined {
  if (end <= 0) return undefined;
  const c = s.codePointAt(end - 1)!;
  // The low half of a pair: read the pair.
  if (c >= 0xdc00 && c <= 0xdfff && end >= 2) return String.fromCodePoint(s.codePointAt(end - 2)!);
  return String.fromCodePoint(c);
}

/** Finds one set of added tokens in text. */
export class AddedMatcher {
  /** By first UTF-16 unit, longest first. */
  private readonly byFirst = new Map<string, AddedToken[]>();

  constructor(tokens: readonly AddedToken[]) {
    for (const t of tokens) {
      if (t.content === '') continue;
      const k = t.content[0]!;
      const list = this.byFirst.get(k) ?? [];
      list.push(t);
      this.byFirst.set(k, list);
    }
    for (const list of this.byFirst.values()) list.sort((a, b) => b.content.length - a.content.length);
  }

  get empty(): boolean { return this.byFirst.size === 0; }

  private longestAt(s: string, i: number): AddedToken | undefined {
    const list = this.byFirst.get(s[i]!);
    if (list === undefined) return undefined;
    for (const t of list) if (s.startsWith(t.content, i)) return t;
    return undefined;
  }

  /** Splits text into plain runs and added tokens; `parseSpecial: false` leaves special tokens as text. */
  split(s: string, parseSpecial: boolean): Part[] {
    if (this.empty) return s === '' ? [] : [{ text: s }];
    const out: Part[] = [];
    let done = 0;
    let i = 0;
    while (i < s.length) {
      const t = this.longestAt(s, i);
      if (t === undefined) { i++; continue; }
      let start = i;
      let stop = i + t.content.length;
      i = stop;
      if (t.special && !parseSpecial) continue;
      if (t.singleWord) {
        const before = lastChar(s, start);
        const after = s.codePointAt(stop);
        if ((before !== undefined && WORD_CHAR.test(before)) || (after !== undefined && WORD_CHAR.test(String.fromCodePoint(after)))) continue;
      }
      if (t.lstrip) {
        for (let c = lastChar(s, start); c !== undefined && SPACE.test(c) && start > done; c = lastChar(s, start)) start -= c.length;
      }
      if (t.rstrip) {
        while (stop < s.length && SPACE.test(String.fromCodePoint(s.codePointAt(stop)!))) stop += String.fromCodePoint(s.codePointAt(stop)!).length;
        i = stop;
      }
      if (start > done) out.push({ text: s.slice(done, start) });
      out.push({ id: t.id });
      done = stop;
    }
    if (done < s.length) out.push({ text: s.slice(done) });
    return out;
  }
}
