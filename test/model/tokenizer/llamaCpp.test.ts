/**
 * The tokenizers a GGUF carries, against llama.cpp's (node-llama-cpp 3.21.1) on the same files: tiny
 * random Llama models with small synthetic vocabularies of each kind (byte-level BPE under each
 * `tokenizer.ggml.pre` the supported families use, and SentencePiece-style), tokenizing the same texts.
 * Each kind has a negative control: the same vocabulary read the wrong way must disagree somewhere.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TokenizerError } from '../../../src/errors/index.js';
import { bpeWork } from '../../../src/model/tokenizer/bpe.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';
import { loadTokenizer, tokenizerFromGguf, type Tokenizer } from '../../../src/model/tokenizer/index.js';
import { TextWorker } from '../../../src/model/tokenizer/textWorker.js';
import { tempDir } from '../../jobs/helpers.js';
import { loadLlamaCpp, type Llama, type LlamaModel } from '../../llamaCpp.js';
import { SPECIAL_TEXTS, TEXTS, bpeVocabulary, spmVocabulary, tinyLlamaGguf } from './vocabs.js';

/** Per text, our ids and llama.cpp's, for the texts where they differ. */
function differences(ours: Tokenizer, theirs: LlamaModel, texts: readonly string[], special: boolean): { text: string; ours: number[]; theirs: number[] }[] {
  const out: { text: string; ours: number[]; theirs: number[] }[] = [];
  for (const text of texts) {
    let a: number[];
    try { a = ours.encode(text, { addSpecial: false, parseSpecial: special }); } catch (e) { a = [-1, e instanceof Error ? e.message.length : 0]; }
    const b = Array.from(theirs.tokenize(text, special));
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ text, ours: a, theirs: b });
  }
  return out;
}

describe('tokenizer: GGUF vocabularies against llama.cpp (node-llama-cpp 3.21.1)', function () {
  this.timeout(120_000);
  let llama: Llama | undefined;
  let tmp: ReturnType<typeof tempDir>;
  const open: LlamaModel[] = [];
  before(async function () {
    tmp = tempDir('npuo-tokcpp-');
    llama = await loadLlamaCpp(this);
  });
  after(async () => { for (const m of open) await m.dispose(); tmp.remove(); });

  /** Writes the tiny model with this tokenizer; ours from the file, and llama.cpp's. */
  async function both(name: string, meta: Map<string, GgufValue>, modelName?: string): Promise<{ ours: Tokenizer; theirs: LlamaModel; meta: Map<string, GgufValue>; path: string }> {
    const path = join(tmp.dir, `${name}.gguf`);
    writeFileSync(path, tinyLlamaGguf(meta, modelName));
    const theirs = await llama!.loadModel({ modelPath: path });
    open.push(theirs);
    return { ours: loadTokenizer(path), theirs, meta, path };
  }
  const reread = (meta: Map<string, GgufValue>, change: (m: Map<string, GgufValue>) => void): Tokenizer => {
    const m = new Map(meta);
    change(m);
    return tokenizerFromGguf({ metadata: m });
  };

  // Each pre-tokenizer, and the one whose reading of the same vocabulary must disagree with llama.cpp's.
  const BPE: readonly [string | null, string, string][] = [
    ['llama-bpe', 'qwen2', 'Llama 3: digits in threes, a piece that is a token taken whole'],
    ['qwen2', 'llama-bpe', 'Qwen2: single digits'],
    ['dbrx', 'llama-bpe', 'Llama 3\'s split with the merges always applied (Phi-4\'s cl100k files)'],
    ['gpt-2', 'qwen2', 'GPT-2\'s split'],
    ['gpt-4o', 'llama-bpe', 'o200k\'s split, case runs apart (Phi-4-mini)'],
    ['default', 'gpt-2', 'llama.cpp\'s default: punctuation, GPT-2, digits, then threes of digits'],
    [null, 'gpt-2', 'no tokenizer.ggml.pre: the default'],
  ];
  for (const [pre, wrong, what] of BPE) {
    it(`byte-level BPE, pre = ${JSON.stringify(pre)} (${what}): the same ids as llama.cpp; read as ${wrong}, not`, async () => {
      const { ours, theirs, meta } = await both(`bpe-${pre ?? 'none'}`, bpeVocabulary(pre));
      expect(differences(ours, theirs, TEXTS, false)).to.deep.equal([]);
      expect(differences(ours, theirs, SPECIAL_TEXTS, true)).to.deep.equal([]);
      expect(differences(ours, theirs, SPECIAL_TEXTS, false)).to.deep.equal([]);
      expect(ours.encode('hi')[0] === theirs.tokens.bos, 'a BOS added as llama.cpp adds one').to.equal(theirs.tokens.shouldPrependBosToken);
      const control = reread(meta, (m) => m.set('tokenizer.ggml.pre', gv.str(wrong)));
      expect(differences(control, theirs, TEXTS, false), `read as ${wrong}`).to.not.deep.equal([]);
    });
  }

  it('every other name of these pre-tokenizers reads as llama.cpp reads it (the same ids, the same BOS rule)', async () => {
    const wrong: string[] = [];
    for (const pre of ['deepseek-r1-qwen', 'megrez', 'stablelm2', 'llama3', 'llama-v3', 'falcon3', 'pixtral', 'smaug-bpe', 'phi-2', 'mpt', 'olmo', 'llama4']) {
      const { ours, theirs } = await both(`bpe-alias-${pre}`, bpeVocabulary(pre));
      const d = differences(ours, theirs, [...TEXTS, ...SPECIAL_TEXTS], true);
      if (d.length > 0 || (ours.encode('hi')[0] === theirs.tokens.bos) !== theirs.tokens.shouldPrependBosToken) wrong.push(`${pre}: ${JSON.stringify(d[0] ?? 'the BOS')}`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it('a pre-tokenizer name llama.cpp does not know ("gpt2") is refused by both, ours naming the key', async () => {
    const path = join(tmp.dir, 'bpe-unknown.gguf');
    writeFileSync(path, tinyLlamaGguf(bpeVocabulary('gpt2')));
    let theirs: unknown;
    try { open.push(await llama!.loadModel({ modelPath: path })); } catch (e) { theirs = e; }
    expect(theirs, 'llama.cpp refuses it').to.be.instanceOf(Error);
    expect(() => loadTokenizer(path)).to.throw(TokenizerError, /tokenizer\.ggml\.pre: "gpt2" is not supported/);
  });

  for (const spacePrefix of [undefined, true, false]) {
    it(`SentencePiece-style (add_space_prefix ${String(spacePrefix)}): scores, byte fallback and ▁ as llama.cpp; without scores or with the other prefix flag, not`, async () => {
      const { ours, theirs, meta } = await both(`spm-${String(spacePrefix)}`, spmVocabulary({ spacePrefix }));
      expect(differences(ours, theirs, TEXTS, false)).to.deep.equal([]);
      expect(differences(ours, theirs, SPECIAL_TEXTS, true)).to.deep.equal([]);
      expect(differences(ours, theirs, SPECIAL_TEXTS, false)).to.deep.equal([]);
      expect(ours.encode('hi')[0], 'the BOS').to.equal(1);
      expect(theirs.tokens.shouldPrependBosToken).to.equal(true);
      // The byte tokens are used: 你 and 😀 are no pieces.
      expect(ours.encode('你', { addSpecial: false }).map((i) => ours.tokenText(i))).to.include.members(['<0xE4>', '<0xBD>', '<0xA0>']);
      expect(ours.decode(ours.encode('emoji 😀 你好\n', { addSpecial: false }))).to.equal(`${spacePrefix === false ? '' : ' '}emoji 😀 你好\n`);
      const noScores = reread(meta, (m) => m.delete('tokenizer.ggml.scores'));
      expect(differences(noScores, theirs, TEXTS, false), 'without scores').to.not.deep.equal([]);
      const flipped = reread(meta, (m) => m.set('tokenizer.ggml.add_space_prefix', gv.bool(spacePrefix === false)));
      expect(differences(flipped, theirs, TEXTS, false), 'the other prefix flag').to.not.deep.equal([]);
    });
  }

  it('a model named Phi-3: whitespace after a special token is dropped (but after <unk>, <s>), as llama.cpp keys it on general.name', async () => {
    const texts = ['<start_of_turn>user\nhi there<end_of_turn>\n<start_of_turn>  model\n', '<s> x</s>  y <unk>  z <|endoftext|>  w', 'plain text  with   spaces'];
    const { ours, theirs, meta, path } = await both('spm-phi3', spmVocabulary({ spacePrefix: true }), 'Phi-3-mini-4k tiny');
    expect(differences(ours, theirs, texts, true)).to.deep.equal([]);
    expect(differences(ours, theirs, TEXTS, false)).to.deep.equal([]);
    // Negative control: the same vocabulary without the name keeps the whitespace, unlike llama.cpp here.
    expect(differences(tokenizerFromGguf({ metadata: meta }), theirs, texts, true)).to.not.deep.equal([]);
    // The text worker (bounded in time and memory) reads the same file the same way.
    const worker = new TextWorker(path);
    try {
      for (const t of texts) expect(await worker.encode(t), JSON.stringify(t)).to.deep.equal(ours.encode(t));
    } finally {
      await worker.close();
    }
  });

  it('SentencePiece-style without byte tokens: a text needing one is refused naming the key, others encode', () => {
    const t = tokenizerFromGguf(readGguf(tinyLlamaGguf(spmVocabulary({ bytes: false }))));
    expect(t.encode('hello world', { addSpecial: false }).length).to.be.greaterThan(0);
    expect(() => t.encode('你好')).to.throw(TokenizerError, /tokenizer\.ggml\.tokens: a byte of .* has no <0xNN> token/);
  });
});

describe('tokenizer: SentencePiece-style encoding of one long text', () => {
  it('does O(n log n) heap work: a text twice as long costs at most 2.3 times as much, and decodes back', () => {
    const tok = tokenizerFromGguf({ metadata: spmVocabulary({ spacePrefix: false }) });
    const cost = (n: number, unit: string): number => {
      const text = unit.repeat(n / unit.length);
      const before = bpeWork.steps;
      const ids = tok.encode(text, { addSpecial: false });
      expect(tok.decode(ids)).to.equal(text);
      return bpeWork.steps - before;
    };
    for (const unit of ['the ', ' ', '你😀']) {
      const w1 = cost(100_000, unit);
      const w2 = cost(200_000, unit);
      expect(w2, JSON.stringify(unit)).to.be.at.most(2.3 * Math.max(w1, 1));
    }
  });
});
