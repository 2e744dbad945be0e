import { expect } from 'chai';
import { TokenizerError } from '../../../src/errors/index.js';
import { tokenizerFromHf } from '../../../src/model/tokenizer/index.js';
import { PatternError, translatePattern } from '../../../src/model/tokenizer/pattern.js';
import { Pattern, compilePattern, regexWork } from '../../../src/model/tokenizer/regex.js';
import { bpeWork } from '../../../src/model/tokenizer/bpe.js';
import { tinyTokenizerJson } from './helpers.js';
import { syntheticTokenizerJson } from './synthetic.js';

/** The matcher's instruction count over every match of `p` in `s`. */
function work(p: Pattern, s: string): number {
  const before = regexWork.steps;
  for (const m of p[Symbol.matchAll](s)) m;
  return regexWork.steps - before;
}

const split = (regex: string) => ({ type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false }, { type: 'ByteLevel', add_prefix_space: false, use_regex: false }] });

describe('pre-tokenizer patterns: the linear-time matcher', () => {
  it('(a+)+$ on 50 000 characters is matched, with work linear in the length (steps(2n) <= 2.2 steps(n))', () => {
    const p = compilePattern('(a+)+$');
    expect(p).to.be.instanceOf(Pattern);
    const n = 25_000;
    const w1 = work(p, `${'a'.repeat(n)}b`);
    const w2 = work(p, `${'a'.repeat(2 * n)}b`);
    expect(w2).to.be.at.most(2.2 * w1);
    expect([...p[Symbol.matchAll]('a'.repeat(50_000))].map((m) => [m.index, m[0].length])).to.deep.equal([[0, 50_000]]);
  });

  it('a tokenizer.json whose Split is (a+)+$ tokenizes 50 000 a\'s and a b (the backtracking RegExp would not end)', () => {
    const tok = tokenizerFromHf({ tokenizer: tinyTokenizerJson({ pre_tokenizer: split('(a+)+$') }) });
    const before = regexWork.steps;
    const ids = tok.encode(`${'a'.repeat(50_000)}b`);
    expect(ids.length).to.equal(50_001);
    expect(regexWork.steps - before).to.be.greaterThan(0); // the pattern ran on our matcher, not a RegExp
  });

  it('Qwen3\'s pattern does work linear in the text on spaces, newlines and words', () => {
    const p = compilePattern(String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`);
    for (const unit of [' ', '\n', ' \n', 'word ', "it's 12 ", '!?']) {
      const w1 = work(p, unit.repeat(20_000));
      const w2 = work(p, unit.repeat(40_000));
      expect(w2, JSON.stringify(unit)).to.be.at.most(2.2 * w1);
    }
  });

  it('matches as the backtracking engine does (leftmost, then first alternative, greedy or lazy)', () => {
    const all = (p: string, s: string) => [...compilePattern(p)[Symbol.matchAll](s)].map((m) => m[0]);
    expect(all('a*?b|a', 'aab a')).to.deep.equal(['aab', 'a']);
    expect(all('(?:a|ab)(?:c|bcd)', 'abcd')).to.deep.equal(['abcd']);
    expect(all('a{2,3}', 'aaaaaaa')).to.deep.equal(['aaa', 'aaa']);
    expect(all(String.raw`\s+(?!\S)|\s+`, 'a   b  ')).to.deep.equal(['  ', ' ', '  ']);
    expect(all('^x|y$', 'x\nxy\ny')).to.deep.equal(['x', 'x', 'y', 'y']);
    // The same as the JavaScript translation, which backtracks.
    const s = "Hello  world!!\n\n  it's 2024 — 中文 😀\t";
    const js = [...s.matchAll(new RegExp(translatePattern(String.raw`(?i:'s|'ll)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`), 'gu'))].map((m) => m[0]);
    expect(all(String.raw`(?i:'s|'ll)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, s)).to.deep.equal(js);
  });

  it('refuses what it cannot match in linear time: backreferences, look-behinds, look-aheads of more than one character', () => {
    for (const p of [String.raw`(a)\1`, '(?<=a)b', '(?!ab)a', '(?=a+)a', '((((a))))'.replace('a', '(?<!x)a')]) expect(() => compilePattern(p), p).to.throw(PatternError);
    expect(() => tokenizerFromHf({ tokenizer: tinyTokenizerJson({ pre_tokenizer: split(String.raw`(a)\1`) }) }, 'b.json')).to.throw(TokenizerError, 'b.json: /pre_tokenizer/pretokenizers/0/pattern/Regex: a backreference');
  });

  it('a pattern used for billions of characters keeps matching the same (its generation counter is reset, not wrapped)', () => {
    const p = compilePattern(String.raw`\s+(?!\S)|\s+|\p{L}+`);
    const text = 'ab   cd  \n e';
    const want = [...p[Symbol.matchAll](text)].map((m) => m[0]);
    (p as unknown as { gen: number }).gen = 2 ** 31 - 3;
    expect([...p[Symbol.matchAll](text)].map((m) => m[0])).to.deep.equal(want);
    expect([...p[Symbol.matchAll](text)].map((m) => m[0])).to.deep.equal(want);
    // Past the wrap, a stale mark would stop threads being merged, and (a|a)+ doubles them each character.
    const twice = compilePattern('(?:a|a)+b');
    const fresh = work(twice, 'a'.repeat(20));
    (twice as unknown as { gen: number }).gen = 2 ** 31 - 3;
    expect(work(twice, 'a'.repeat(20))).to.equal(fresh);
  });

  it('refuses groups nested past 256 and programs past 100 000 instructions', () => {
    expect(() => compilePattern(`${'('.repeat(300)}a${')'.repeat(300)}`)).to.throw(PatternError, 'nested deeper than 256');
    expect(() => compilePattern('(a{1000}){1000}')).to.throw(PatternError, 'more than 100000 instructions');
  });
});

describe('BPE of one long word', () => {
  it('does O(n log n) heap work: a word twice as long costs at most 2.3 times as much', () => {
    const tok = tokenizerFromHf({ tokenizer: syntheticTokenizerJson(5000) });
    const cost = (n: number): number => {
      const before = bpeWork.steps;
      const ids = tok.encode('Ab'.repeat(n / 2), { addSpecial: false });
      expect(tok.decode(ids)).to.equal('Ab'.repeat(n / 2));
      return bpeWork.steps - before;
    };
    const w1 = cost(100_000);
    const w2 = cost(200_000);
    expect(w1).to.be.greaterThan(100_000);
    expect(w2).to.be.at.most(2.3 * w1);
  });
});
