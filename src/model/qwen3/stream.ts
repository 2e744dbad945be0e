/**
 * Generated ids to text as it is made: only whole UTF-8 characters are given out (a character split
 * across ids waits for its last byte), and text that may be the start of a stop string is held back
 * until it is known not to be one. A stop string ends the text before it.
 */
import type { Tokenizer } from '../tokenizer/types.js';

const utf8 = new TextDecoder('utf-8');

/** How many bytes at the end of `b` are an unfinished UTF-8 character (0 when it ends whole). */
function unfinished(b: Uint8Array): number {
  for (let k = 1; k <= Math.min(3, b.length); k++) {
    const x = b[b.length - k]!;
    if ((x & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = x >= 0xf0 ? 4 : x >= 0xe0 ? 3 : x >= 0xc0 ? 2 : 1;
    return need > k ? k : 0;
  }
  return 0;
}

/** The text of one generation, fed one id at a time. */
export class TextStream {
  readonly #ids: number[] = [];
  #given = 0;
  #text = '';
  #stopped = false;

  constructor(private readonly tokenizer: Tokenizer | null, private readonly stops: readonly string[]) {}

  /** True once a stop string has been met. */
  get stopped(): boolean { return this.#stopped; }

  /** Adds an id; returns the text that is now certain (possibly ''). */
  push(id: number): string {
    if (this.tokenizer === null || this.#stopped) return '';
    this.#ids.push(id);
    const bytes = this.tokenizer.decodeBytes(this.#ids);
    this.#text = utf8.decode(bytes.subarray(0, bytes.length - unfinished(bytes)));
    for (const s of this.stops) {
      const at = this.#text.indexOf(s);
      if (at >= 0 && s !== '') {
        this.#text = this.#text.slice(0, at);
        this.#stopped = true;
      }
    }
    return this.#take(this.#stopped ? this.#text.length : this.#safeEnd());
  }

  /** The text still held back, at the end of the generation. */
  end(): string {
    if (this.tokenizer === null) return '';
    if (!this.#stopped) {
      // A dangling partial character is written as U+FFFD, as decode() writes it.
      this.#text = this.tokenizer.decode(this.#ids);
    }
    return this.#take(this.#text.length);
  }

  /** The whole text so far (given out or held). */
  get text(): string { return this.#text; }

  // The end of what can be given out: before any suffix that could begin a stop string.
  #safeEnd(): number {
    let end = this.#text.length;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, this.#text.length); k > 0; k--) {
        if (this.#text.endsWith(s.slice(0, k))) { end = Math.min(end, this.#text.length - k); break; }
      }
    }
    return Math.max(end, this.#given);
  }

  #take(end: number): string {
    const out = this.#text.slice(this.#given, end);
    this.#given = Math.max(this.#given, end);
    return out;
  }
}
