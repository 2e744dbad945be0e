/**
 * A chat answer's thinking apart from its content: a `<think>...</think>` block at the start of the
 * generated text (Qwen3 and the templates like it) becomes `reasoning_content`, the text after it
 * `content`. Fed the text piece by piece as it streams, it gives out only what is certain: a piece that
 * may be the start of a tag, and whitespace that may end the reasoning, wait for the text after them,
 * so the streamed deltas concatenate to the answer given whole.
 */

const OPEN = '<think>';
const CLOSE = '</think>';

/** Text parted into reasoning and content. */
export interface Parted {
  readonly reasoning: string;
  readonly content: string;
}

/** The length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialTag(s: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, s.length); k > 0; k--) if (s.endsWith(tag.slice(0, k))) return k;
  return 0;
}

/** One answer's text, parted as it comes. */
export class ReasoningSplitter {
  // start: before any text but whitespace; afterOpen/afterClose: whitespace after a tag is dropped.
  #state: 'start' | 'afterOpen' | 'reasoning' | 'afterClose' | 'content' = 'start';
  #held = '';

  /** Adds a piece of text; returns what is now certain of each part. */
  push(text: string): Parted {
    this.#held += text;
    let reasoning = '';
    let content = '';
    for (;;) {
      const state = this.#state;
      if (state === 'start') {
        const s = this.#held.trimStart();
        if (s.startsWith(OPEN)) { this.#state = 'afterOpen'; this.#held = s.slice(OPEN.length); continue; }
        // Leading whitespace, or the start of the tag: not yet known.
        if (OPEN.startsWith(s)) break;
        this.#state = 'content';
      } else if (state === 'afterOpen' || state === 'afterClose') {
        this.#held = this.#held.trimStart();
        if (this.#held === '') break;
        this.#state = state === 'afterOpen' ? 'reasoning' : 'content';
      } else if (state === 'reasoning') {
        const at = this.#held.indexOf(CLOSE);
        if (at >= 0) {
          reasoning += this.#held.slice(0, at).trimEnd();
          this.#held = this.#held.slice(at + CLOSE.length);
          this.#state = 'afterClose';
          continue;
        }
        // Give out all but a possible start of the closing tag and the whitespace before it.
        const sure = this.#held.slice(0, this.#held.length - partialTag(this.#held, CLOSE)).trimEnd();
        reasoning += sure;
        this.#held = this.#held.slice(sure.length);
        break;
      } else {
        content += this.#held;
        this.#held = '';
        break;
      }
    }
    return { reasoning, content };
  }

  /** What is still held, at the end of the answer: an unfinished reasoning stays reasoning. */
  end(): Parted {
    const held = this.#held;
    this.#held = '';
    switch (this.#state) {
      case 'reasoning': return { reasoning: held.trimEnd(), content: '' };
      case 'start': case 'content': return { reasoning: '', content: held };
      default: return { reasoning: '', content: '' };
    }
  }
}

/** A whole answer parted. */
export function splitReasoning(text: string): Parted {
  const s = new ReasoningSplitter();
  const a = s.push(text);
  const b = s.end();
  return { reasoning: a.reasoning + b.reasoning, content: a.content + b.content };
}
