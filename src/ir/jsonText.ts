/**
 * Locates a JSON syntax error. Node's JSON.parse names a position for some errors and not for others
 * (and quotes the whole text in its message), so a small scanner finds the first offending character
 * and the message names its line and column instead.
 */
import { escapeControl, quote } from '../io/escape.js';

class Stop {
  constructor(readonly at: number) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = '"\\/bfnrt';

/** The offset of the first character at which `text` stops being JSON, or undefined if it is JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const expect = (c: string): void => {
    ws();
    if (text[i] !== c) throw new Stop(i);
    i++;
  };
  const str = (): void => {
    i++;
    for (;;) {
      if (i >= n) throw new Stop(n);
      const c = text.charCodeAt(i);
      if (c === 0x22) { i++; return; }
      if (c < 0x20) throw new Stop(i);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Stop(i);
          i += 6;
        } else if (e !== undefined && ESCAPES.includes(e)) {
          i += 2;
        } else {
          throw new Stop(i);
        }
      } else {
        i++;
      }
    }
  };
  const seq = (close: string, item: () => void): void => {
    i++;
    ws();
    if (text[i] === close) { i++; return; }
    for (;;) {
      item();
      ws();
      if (text[i] === ',') { i++; continue; }
      if (text[i] === close) { i++; return; }
      throw new Stop(i);
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      seq('}', () => { ws(); if (text[i] !== '"') throw new Stop(i); str(); expect(':'); value(); });
    } else if (c === '[') {
      seq(']', value);
    } else if (c === '"') {
      str();
    } else {
      for (const word of ['true', 'false', 'null']) {
        if (text.startsWith(word, i)) { i += word.length; return; }
      }
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text)) throw new Stop(i);
      i = NUMBER.lastIndex;
    }
  };
  try {
    value();
    ws();
    return i < n ? i : undefined;
  } catch (e) {
    if (e instanceof Stop) return e.at;
    return undefined; // nesting too deep for the scanner: fall back to JSON.parse's own message
  }
}

/** The 1-based line and column of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') { line++; start = k + 1; }
  }
  return { line, column: offset - start + 1 };
}

/** A reason for a JSON syntax error naming its line and column, given JSON.parse's own message. */
export function jsonErrorAt(text: string, parseMessage: string): string {
  const at = jsonErrorOffset(text);
  // JSON.parse quotes the text it stopped at, which may hold control characters.
  if (at === undefined) return `not valid JSON: ${escapeControl(parseMessage.slice(0, 200))}`;
  const { line, column } = lineColumn(text, at);
  const what = at >= text.length ? 'the text ends early' : `unexpected ${quote(text[at]!)}`;
  return `not valid JSON at line ${line}, column ${column}: ${what}`;
}
