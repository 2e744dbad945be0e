import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TokenizerError } from '../../../src/errors/index.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { gv, plainValue, type GgufValue } from '../../../src/model/gguf/types.js';
import { ggufTokenizerMetadata, loadTokenizer, tokenizerFromGguf, type Tokenizer } from '../../../src/model/tokenizer/index.js';
import { tempDir } from '../../jobs/helpers.js';
import { QWEN3_TOKENIZER, QWEN3_VOCAB_ROWS, fixtures, qwen3Files, qwen3Gguf, qwen3TokenizerMetadata, tinyTokenizerMetadata } from './helpers.js';

describe('tokenizer: the one a GGUF carries (Qwen3\'s real vocabulary and merges)', function () {
  this.timeout(120_000);
  const fx = fixtures();
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  let gguf: Tokenizer;
  let hf: Tokenizer;
  before(() => {
    tmp = tempDir('npuo-tok-');
    file = join(tmp.dir, 'qwen3-tokenizer.gguf');
    writeFileSync(file, qwen3Gguf());
    gguf = loadTokenizer(file);
    hf = loadTokenizer(QWEN3_TOKENIZER);
  });
  after(() => tmp.remove());

  it('is read from the GGUF alone, no tokenizer.json beside it', () => {
    expect(gguf.kind).to.equal('gguf');
    expect(gguf.source).to.equal(file);
    expect(gguf.vocabSize).to.equal(QWEN3_VOCAB_ROWS);
  });

  it('encodes every fixture case to Hugging Face\'s ids, as the tokenizer.json does', () => {
    const wrong = fx.cases.filter((c) => JSON.stringify(gguf.encode(c.text)) !== JSON.stringify(c.ids));
    expect(wrong.map((c) => c.text)).to.deep.equal([]);
  });

  it('decodes every fixture case and id sequence to Hugging Face\'s text', () => {
    for (const c of fx.cases) expect(gguf.decode(c.ids), JSON.stringify(c.text)).to.equal(c.decoded);
    for (const d of fx.decodes) expect(gguf.decode(d.ids), JSON.stringify(d.ids)).to.equal(d.decoded);
  });

  it('agrees with the tokenizer.json on the ids that end a generation, the pad id and the chat prompt', () => {
    expect(gguf.eosIds).to.deep.equal(hf.eosIds);
    expect(gguf.padId).to.equal(hf.padId);
    expect(gguf.chatTemplate).to.equal(hf.chatTemplate);
    const chat = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi <think> 你好' }];
    expect(gguf.encodeChat(chat, { enableThinking: false })).to.deep.equal(hf.encodeChat(chat, { enableThinking: false }));
  });

  it('skips CONTROL tokens when asked and keeps USER_DEFINED ones (<think>)', () => {
    expect(gguf.decode([151644, 872, 151667, 151645], { skipSpecial: true })).to.equal('user<think>');
    expect(gguf.isSpecial(151644)).to.equal(true);
    expect(gguf.isSpecial(151667)).to.equal(false);
  });

  it('padding rows past the tokenizer ([PADn], UNUSED) decode to nothing; past the rows is refused naming the id', () => {
    expect(gguf.decode([9707, 151700, 151935])).to.equal('Hello');
    expect(gguf.tokenText(151700)).to.equal(undefined);
    expect(() => gguf.decode([9707, 151936])).to.throw(/token id 151936 is outside the vocabulary \(0 to 151935\)/);
  });

  it('adds the BOS when the file says add_bos_token, and only with addSpecial', () => {
    const meta = tinyTokenizerMetadata();
    const end = (meta.get('tokenizer.ggml.eos_token_id') as { value: number }).value;
    meta.set('tokenizer.ggml.bos_token_id', gv.u32(end));
    meta.set('tokenizer.ggml.add_bos_token', gv.bool(true));
    const t = tokenizerFromGguf(readGguf(qwen3Gguf(meta)));
    expect(t.encode('hello')).to.deep.equal([end, 259]);
    expect(t.encode('hello', { addSpecial: false })).to.deep.equal([259]);
  });

  it('ggufTokenizerMetadata writes what llama.cpp\'s converter writes for the same files', () => {
    const ours = ggufTokenizerMetadata({ ...qwen3Files(), config: { vocab_size: QWEN3_VOCAB_ROWS } }, QWEN3_TOKENIZER);
    const theirs = qwen3TokenizerMetadata();
    for (const k of ['tokenizer.ggml.model', 'tokenizer.ggml.pre', 'tokenizer.ggml.tokens', 'tokenizer.ggml.token_type', 'tokenizer.ggml.merges', 'tokenizer.ggml.eos_token_id', 'tokenizer.ggml.padding_token_id', 'tokenizer.chat_template']) {
      expect(plainValue(ours.get(k)!), k).to.deep.equal(plainValue(theirs.get(k)!));
    }
  });

  it('a GGUF without tokenizer metadata, or with a kind it cannot read, is a TokenizerError naming the key', () => {
    const none = readGguf(qwen3Gguf(new Map()));
    expect(() => tokenizerFromGguf(none, 'x.gguf')).to.throw(TokenizerError, /x\.gguf: tokenizer\.ggml\.model: missing: the GGUF carries no tokenizer/);
    const kind = tinyTokenizerMetadata();
    kind.set('tokenizer.ggml.model', gv.str('t5'));
    expect(() => tokenizerFromGguf(readGguf(qwen3Gguf(kind)))).to.throw(TokenizerError, /tokenizer\.ggml\.model: "t5" is not supported/);
    const pre = tinyTokenizerMetadata();
    pre.set('tokenizer.ggml.pre', gv.str('chatglm-bpe'));
    expect(() => tokenizerFromGguf(readGguf(qwen3Gguf(pre)))).to.throw(TokenizerError, /tokenizer\.ggml\.pre: "chatglm-bpe" is not supported/);
    const scores = tinyTokenizerMetadata();
    scores.set('tokenizer.ggml.model', gv.str('llama'));
    scores.set('tokenizer.ggml.scores', gv.numbers('f32', [1, 2]));
    expect(() => tokenizerFromGguf(readGguf(qwen3Gguf(scores)))).to.throw(TokenizerError, /tokenizer\.ggml\.scores: must be a float array of one score per token/);
    const flag = tinyTokenizerMetadata();
    flag.set('tokenizer.ggml.add_bos_token', gv.u32(1));
    expect(() => tokenizerFromGguf(readGguf(qwen3Gguf(flag)))).to.throw(TokenizerError, /tokenizer\.ggml\.add_bos_token: must be a bool/);
  });

  it('a merge that names no token, or token types of the wrong length, are refused at load', () => {
    const bad = (k: string, v: GgufValue) => { const m = tinyTokenizerMetadata(); m.set(k, v); return () => tokenizerFromGguf(readGguf(qwen3Gguf(m))); };
    expect(bad('tokenizer.ggml.merges', gv.strings(['h e', 'zzzq ww']))).to.throw(TokenizerError, /merges\[1\]: "zzzq" is not a token/);
    expect(bad('tokenizer.ggml.token_type', gv.numbers('i32', [1, 1]))).to.throw(TokenizerError, /token_type: must be an integer array of one type per token/);
    expect(bad('tokenizer.ggml.tokens', gv.strings(['a', 'b']))).to.throw(TokenizerError);
  });
});
