import { expect } from 'chai';
import { loadTokenizer } from '../../../src/model/tokenizer/index.js';
import type { Tokenizer } from '../../../src/model/tokenizer/index.js';
import { QWEN3_TOKENIZER, fixtures } from './helpers.js';

describe('tokenizer: Qwen3 tokenizer.json against Hugging Face tokenizers', function () {
  this.timeout(60_000);
  const fx = fixtures();
  let tok: Tokenizer;
  before(() => { tok = loadTokenizer(QWEN3_TOKENIZER); });

  it('the fixtures are the few hundred cases of every kind the issue names, checked by HF\'s Rust library too', () => {
    expect(fx.cases.length).to.be.greaterThan(400);
    const groups = new Set(fx.cases.map((c) => c.group));
    for (const g of ['ascii', 'contractions', 'numbers', 'whitespace', 'longRuns', 'cjk', 'emoji', 'scripts', 'code', 'special', 'mixed', 'combined', 'random']) expect(groups).to.include(g);
    expect(fx.checkedWith).to.match(/^tokenizers /);
  });

  it('encodes every case to Hugging Face\'s ids', () => {
    const wrong = fx.cases.filter((c) => JSON.stringify(tok.encode(c.text)) !== JSON.stringify(c.ids));
    expect(wrong.map((c) => c.text)).to.deep.equal([]);
  });

  it('decodes every case to Hugging Face\'s text, with and without special tokens', () => {
    for (const c of fx.cases) {
      expect(tok.decode(c.ids), JSON.stringify(c.text)).to.equal(c.decoded);
      expect(tok.decode(c.ids, { skipSpecial: true }), JSON.stringify(c.text)).to.equal(c.decodedSkipSpecial);
    }
  });

  it('round trip: decode(encode(text)) is the text, NFC-normalized as the tokenizer normalizes it', () => {
    for (const c of fx.cases) expect(tok.decode(tok.encode(c.text)), JSON.stringify(c.text)).to.equal(c.text.normalize('NFC'));
  });

  it('decodes id sequences that split characters as Hugging Face does (U+FFFD for a broken UTF-8 sequence)', () => {
    for (const d of fx.decodes) expect(tok.decode(d.ids), JSON.stringify(d.ids)).to.equal(d.decoded);
    expect(fx.decodes.some((d) => d.decoded.includes('\ufffd'))).to.equal(true);
  });

  it('keeps added tokens whole, <think> (special: false) included, and knows which are special', () => {
    expect(tok.encode('<think>\n\n</think>')).to.deep.equal([151667, 271, 151668]);
    expect(tok.isSpecial(151667)).to.equal(false);
    expect(tok.isSpecial(151644)).to.equal(true);
    expect(tok.decode([151644, 872, 151645], { skipSpecial: true })).to.equal('user');
    expect(tok.tokenText(151667)).to.equal('<think>');
  });

  it('parseSpecial: false reads special-token text as text, but <think> stays whole', () => {
    const ids = tok.encode('<|im_start|><think>', { parseSpecial: false });
    expect(ids).to.not.include(151644);
    expect(ids[ids.length - 1]).to.equal(151667);
    expect(tok.decode(ids)).to.equal('<|im_start|><think>');
  });

  it('reads the end-of-sequence ids, the pad id and no BOS from the files', () => {
    expect(tok.eosIds).to.deep.equal([151643, 151645]);
    expect(tok.padId).to.equal(151643);
    expect(tok.bosId).to.equal(null);
    expect(tok.vocabSize).to.equal(151669);
    expect(tok.kind).to.equal('tokenizer.json');
  });

  it('encodes a megabyte of spaces and newlines without stalling, and back', () => {
    const text = ' '.repeat(500_000) + '\n'.repeat(500_000);
    const ids = tok.encode(text);
    expect(tok.decode(ids)).to.equal(text);
    expect(ids.length).to.be.lessThan(text.length / 10);
  });
});
