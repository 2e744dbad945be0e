/** Checks of what callers hand the tokenizer: well-formed strings, ids in range. @internal */
import { InvalidInput } from '../../errors/index.js';

// With the u flag a paired surrogate is one code point, so only a lone half matches.
const LONE = /\p{Surrogate}/u;

/** Throws InvalidInput at `path` when `s` holds a lone surrogate (text that is not Unicode). */
export function checkText(s: string, path: string): void {
  const m = LONE.exec(s);
  if (m !== null) {
    const hex = m[0].charCodeAt(0).toString(16).toUpperCase();
    throw new InvalidInput(path, `a lone surrogate U+${hex} at index ${m.index}: the text is not valid Unicode`);
  }
}

/** Throws InvalidInput at `path/i` for the first entry that is not an id below `vocabSize`. */
export function checkIds(ids: readonly unknown[], vocabSize: number, path: string): asserts ids is readonly number[] {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      throw new InvalidInput(`${path}/${i}`, `${JSON.stringify(id) ?? String(id)} is not a token id (a whole number)`);
    }
    if (id < 0 || id >= vocabSize) throw new InvalidInput(`${path}/${i}`, `token id ${id} is outside the vocabulary (0 to ${vocabSize - 1})`);
  }
}
