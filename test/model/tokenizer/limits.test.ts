import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResourceLimit, TokenizerError } from '../../../src/errors/index.js';
import { gv } from '../../../src/model/gguf/types.js';
import { jsonTextDepth } from '../../../src/ir/jsonText.js';
import { loadTokenizer, tokenizerFromGguf, tokenizerFromHf } from '../../../src/model/tokenizer/index.js';
import { tempDir } from '../../jobs/helpers.js';
import { tinyTokenizerJson, tinyTokenizerMetadata } from './helpers.js';
import { syntheticTokenizerJson, syntheticTokenizerText } from './synthetic.js';

/** A normalizer Sequence nested `n` deep, as a value. */
function deepNormalizer(n: number): unknown {
  let v: unknown = { type: 'NFC' };
  for (let i = 0; i < n; i++) v = { type: 'Sequence', normalizers: [v] };
  return v;
}

function refused(f: () => unknown): ResourceLimit {
  try { f(); } catch (e) {
    if (e instanceof ResourceLimit) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('tokenizer files: the json-depth limit', () => {
  it('measures depth on the text, ignoring brackets inside strings', () => {
    expect(jsonTextDepth('{"a": [1, {"b": "[[[{{{\\"]]"}]}')).to.equal(3);
    expect(jsonTextDepth('"[[["')).to.equal(0);
    expect(jsonTextDepth(String.raw`["a\\", ["b\"]"]]`)).to.equal(2);
    expect(jsonTextDepth(String.raw`["\\\"[[["]`)).to.equal(1);
    expect(jsonTextDepth('['.repeat(1_000_000))).to.equal(1_000_000);
  });

  it('a tokenizer.json with a 5000-deep normalizer Sequence is ResourceLimit json-depth naming the file', () => {
    const { dir } = tempDir();
    const file = join(dir, 'tokenizer.json');
    const deep = `${'{"type": "Sequence", "normalizers": ['.repeat(5000)}{"type": "NFC"}${']}'.repeat(5000)}`;
    writeFileSync(file, JSON.stringify(tinyTokenizerJson({ normalizer: 'DEEP' })).replace('"DEEP"', deep));
    const e = refused(() => loadTokenizer(file));
    expect([e.what, e.max, e.place]).to.deep.equal(['json-depth', 64, file]);
    expect(e.needed).to.be.greaterThan(10_000);
  });

  it('a config.json beside the tokenizer.json nested past the limit is refused naming config.json', () => {
    const { dir } = tempDir();
    mkdirSync(join(dir, 'm'));
    writeFileSync(join(dir, 'm', 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    writeFileSync(join(dir, 'm', 'config.json'), `{"x": ${'['.repeat(100)}${']'.repeat(100)}}`);
    const e = refused(() => loadTokenizer(join(dir, 'm')));
    expect([e.what, e.needed, e.place]).to.deep.equal(['json-depth', 101, join(dir, 'm', 'config.json')]);
  });

  it('a parsed value handed to tokenizerFromHf with a 5000-deep Sequence is refused, not a stack overflow', () => {
    const e = refused(() => tokenizerFromHf({ tokenizer: tinyTokenizerJson({ normalizer: deepNormalizer(5000) }) }, 'deep.json'));
    expect(e.what).to.equal('json-depth');
    expect(e.place.startsWith('deep.json/normalizer/normalizers/0')).to.equal(true);
  });

  it('a pre-tokenizer Sequence 40 deep (within the limit) still loads', () => {
    let p: unknown = { type: 'ByteLevel', add_prefix_space: false, use_regex: true };
    for (let i = 0; i < 30; i++) p = { type: 'Sequence', pretokenizers: [p] };
    const tok = tokenizerFromHf({ tokenizer: tinyTokenizerJson({ pre_tokenizer: p }) });
    expect(tok.encode('hello')).to.deep.equal([259]);
  });
});

describe('GGUF tokenizers: special ids outside the vocabulary', () => {
  const size = (tinyTokenizerMetadata().get('tokenizer.ggml.tokens') as { value: readonly string[] }).value.length;
  for (const key of ['eos_token_id', 'bos_token_id', 'padding_token_id', 'eot_token_id', 'unknown_token_id']) {
    it(`tokenizer.ggml.${key} one past the last token is a TokenizerError naming the key`, () => {
      const meta = tinyTokenizerMetadata();
      meta.set(`tokenizer.ggml.${key}`, gv.u32(size));
      expect(() => tokenizerFromGguf({ metadata: meta }, 'm.gguf')).to.throw(TokenizerError, `tokenizer.ggml.${key}: id ${size} is outside the vocabulary (0 to ${size - 1})`);
    });
  }

  it('-1 and 2^32 - 1 still mean "none"', () => {
    const meta = tinyTokenizerMetadata();
    meta.set('tokenizer.ggml.bos_token_id', gv.i32(-1));
    meta.set('tokenizer.ggml.padding_token_id', gv.u32(0xffffffff));
    const tok = tokenizerFromGguf({ metadata: meta });
    expect([tok.bosId, tok.padId]).to.deep.equal([null, null]);
  });
});

describe('tokenizer files: a 2M-token vocabulary', function () {
  // A hang bound, not a speed claim: before, 400k tokens took 18 s and 2M never finished.
  this.timeout(300_000);
  it('loads, and encodes and decodes with its merges', () => {
    const { dir } = tempDir();
    const file = join(dir, 'tokenizer.json');
    writeFileSync(file, syntheticTokenizerText(2_000_000));
    const tok = loadTokenizer(file);
    expect(tok.vocabSize).to.equal(2_000_001);
    const ids = tok.encode('Hello World', { addSpecial: false });
    expect(ids.length).to.be.lessThan(11);
    expect(tok.decode(ids)).to.equal('Hello World');
  });

  it('(the file above is the synthetic document, written as text directly)', () => {
    expect(JSON.parse(syntheticTokenizerText(5000))).to.deep.equal(syntheticTokenizerJson(5000));
  });
});
