/**
 * The token masks of a constrained string at its length bounds (issue 27 item 11): with minLength 2 and
 * maxLength 3, which of a small vocabulary's tokens may come next, worked out by hand. A token may carry
 * the opening quote and part of the body (the trie walk), or lie wholly in the body (counted by length),
 * or close the string; each is checked exactly at the bound and one past it.
 */
import { expect } from 'chai';
import { compileJsonSchema } from '../../../src/model/grammar/index.js';
import { advanceBytes, initialState } from '../../../src/model/grammar/grammar.js';
import { allowedIds, VocabularyTrie } from '../../../src/model/grammar/decoder.js';

const VOCAB = ['"', 'a', 'aa', 'aaa', 'aaaa', 'aaaaaa', 'a"', 'aa"', 'aaa"', '"a', '"aa', '"aaa', '"aaaa', '"a"', '"aa"', '"aaa"', '"aaaa"'];
const enc = new TextEncoder();

function allowedAfter(prefix: string): string[] {
  const trie = new VocabularyTrie(VOCAB.length, (id) => enc.encode(VOCAB[id]));
  const state = advanceBytes(initialState(compileJsonSchema({ type: 'string', minLength: 2, maxLength: 3 })), enc.encode(prefix));
  const allowed = new Uint8Array(VOCAB.length);
  allowedIds(trie, state, allowed);
  return VOCAB.filter((_, i) => allowed[i] === 1).sort();
}

describe('grammar slips: a string of 2 to 3 characters, token by token', () => {
  it('before the string: tokens that open it and stay within the bounds', () => {
    expect(allowedAfter('')).to.deep.equal(['"', '"a', '"aa', '"aa"', '"aaa', '"aaa"'].sort());
  });

  it('in the body, 0 written: plain tokens up to 3 characters, none that closes it short', () => {
    expect(allowedAfter('"')).to.deep.equal(['a', 'aa', 'aa"', 'aaa', 'aaa"'].sort());
  });

  it('2 written: one more character or the close', () => {
    expect(allowedAfter('"aa')).to.deep.equal(['"', 'a', 'a"'].sort());
  });

  it('3 written: only the close', () => {
    expect(allowedAfter('"aaa')).to.deep.equal(['"']);
  });
});
