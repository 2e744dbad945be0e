/**
 * Slips the tokenizer tests let through (issue 27 item 11): added tokens that prefix one another, a
 * refused match searched again, single-word tokens, and each pre-tokenizer pattern's own rule (digit
 * runs, contraction case, a digit's leading space, GPT-4o's letter classes). Every expected split is
 * written out by hand from the pattern's definition (Hugging Face tokenizers / llama.cpp), not computed
 * by our code. scripts/mutants.mjs plants one slip for each (`kind: 'tokenizer'`) and shows it fails here.
 */
import { expect } from 'chai';
import { AddedMatcher, type AddedToken } from '../../../src/model/tokenizer/added.js';
import { GPT2_SPLIT_PATTERN, GPT4O_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN } from '../../../src/model/tokenizer/pattern.js';
import { byteLevel, preTokenizeAll, splitPattern } from '../../../src/model/tokenizer/pretokenize.js';
import { compilePattern } from '../../../src/model/tokenizer/regex.js';

const token = (id: number, content: string, o: Partial<AddedToken> = {}): AddedToken =>
  ({ id, content, special: false, normalized: false, lstrip: false, rstrip: false, singleWord: false, ...o });

describe('tokenizer slips: added tokens', () => {
  it('of added tokens that prefix one another, the longest match wins, whatever their order', () => {
    const tokens = [token(1, '<|im'), token(2, '<|im_start|>'), token(3, '<|im_start|>assistant')];
    for (const list of [tokens, [...tokens].reverse()]) {
      const m = new AddedMatcher(list);
      expect(m.split('<|im_start|>user', true)).to.deep.equal([{ id: 2 }, { text: 'user' }]);
      expect(m.split('x<|im_start|>assistant', true)).to.deep.equal([{ text: 'x' }, { id: 3 }]);
      expect(m.split('<|im<|im_', true)).to.deep.equal([{ id: 1 }, { id: 1 }, { text: '_' }]);
    }
  });

  it('a special token refused (special tokens not parsed) stays whole text: no shorter token is found inside it', () => {
    const m = new AddedMatcher([token(1, '<|a|>', { special: true }), token(2, 'a|>')]);
    expect(m.split('<|a|>', false)).to.deep.equal([{ text: '<|a|>' }]);
    expect(m.split('<|a|>', true)).to.deep.equal([{ id: 1 }]);
    // Negative control of the fixture: the shorter token alone is found.
    expect(m.split('xa|>', false)).to.deep.equal([{ text: 'x' }, { id: 2 }]);
  });

  it('a single-word token inside a word, on either side, stays text', () => {
    const m = new AddedMatcher([token(1, 'ab', { singleWord: true })]);
    expect(m.split('ab', true)).to.deep.equal([{ id: 1 }]);
    expect(m.split('abc', true)).to.deep.equal([{ text: 'abc' }]);
    expect(m.split('cab', true)).to.deep.equal([{ text: 'cab' }]);
    expect(m.split('c ab!', true)).to.deep.equal([{ text: 'c ' }, { id: 1 }, { text: '!' }]);
  });
});

describe('tokenizer slips: pre-tokenizer patterns, split by hand', () => {
  const split = (pattern: string, text: string): string[] => preTokenizeAll(splitPattern(compilePattern(pattern), 'Isolated'), [text]);

  it('Llama 3 splits digits in runs of at most three', () => {
    expect(split(LLAMA3_PATTERN, '1234567 ab')).to.deep.equal(['123', '456', '7', ' ab']);
  });

  it('Qwen2 splits digits one by one', () => {
    expect(split(QWEN2_PATTERN, 'x 2024')).to.deep.equal(['x', ' ', '2', '0', '2', '4']);
  });

  it("Qwen2's contractions are case-insensitive", () => {
    expect(split(QWEN2_PATTERN, "HE'S IT'LL")).to.deep.equal(['HE', "'S", ' IT', "'LL"]);
    // A contraction followed by letters: 'S alone, not 'SAID (which the letters' own rule would take).
    expect(split(QWEN2_PATTERN, "HE'SAID she'sat")).to.deep.equal(['HE', "'S", 'AID', ' she', "'s", 'at']);
  });

  it("GPT-2 keeps a number's leading space and its contractions lower-case only", () => {
    expect(split(GPT2_SPLIT_PATTERN, 'a 12 b')).to.deep.equal(['a', ' 12', ' b']);
    expect(split(GPT2_SPLIT_PATTERN, "it's IT'S")).to.deep.equal(['it', "'s", ' IT', "'", 'S']);
  });

  it('GPT-4o (as llama.cpp runs it) takes a non-ASCII letter as upper-case-like: 中Ab is one piece', () => {
    expect(split(GPT4O_PATTERN, '中Ab')).to.deep.equal(['中Ab']);
    expect(split(GPT4O_PATTERN, 'HELLOworld 12345')).to.deep.equal(['HELLOworld', ' ', '123', '45']);
  });

  it('a byte-level prefix space is added once, not to a piece that has one', () => {
    expect(preTokenizeAll(byteLevel(true, false), ['a', ' b'])).to.deep.equal(['Ġa', 'Ġb']);
  });
});
