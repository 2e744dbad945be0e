/**
 * Locates a JSON syntax error. Node's JSON.parse names a position for some errors and not for others
 * (and quotes the whole text in its message), so a small scanner finds the first offending character
 * and the message names its line and column instead.
 */
import { ResourceLimit } from '../errors/index.js';
import { escapeControl, quote } from '../io/escape.js';
import { DEFAULT_LIMITS, LIMIT_NAMES } from './limits.js';

/** The scanner's early exit (an Error, so that whatever catches it gets one): the offset where JSON stops. */
class Stop extends Error {
  constructor(readonly at: number) {
    super(`not JSON from offset ${at}`);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = '"\\/bfnrt';

/** The offset of the first character at which `text` stops being JSON, or undefined if it is JSON. */
function jsonErrorOffset(text: string): number | undefined {
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
function lineColumn(text: string, offset: number): { line: number; column: number } {
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

/**
 * The nesting depth of JSON text (objects and arrays; `{}` is 1), measured on the text in one pass
 * without recursion, so a file nested a million deep is measured before anything parses or walks it.
 * Brackets inside strings do not count; text that is not JSON is measured as far as its brackets go.
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to the next quote not escaped (an even run of backslashes before it).
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return deepest;
        let k = q - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        i = q;
        if ((q - 1 - k) % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

/** Refuses JSON text nested deeper than `max` (the `json-depth` limit, default 64) with ResourceLimit naming `place`. */
export function checkJsonTextDepth(text: string, place: string, max: number = DEFAULT_LIMITS.jsonDepth): void {
  const d = jsonTextDepth(text);
  if (d > max) throw new ResourceLimit(LIMIT_NAMES.jsonDepth, d, max, place);
}

/** JSON.parse of a file's text after the `json-depth` check (ResourceLimit naming `place`); JSON.parse's own SyntaxError otherwise. */
export function parseJsonFile(text: string, place: string, max: number = DEFAULT_LIMITS.jsonDepth): unknown {
  checkJsonTextDepth(text, place, max);
  return JSON.parse(text) as unknown;
}
