import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidInput, TokenizerError, UsageError } from '../../../src/errors/index.js';
import { PatternError, QWEN2_PATTERN } from '../../../src/model/tokenizer/pattern.js';
import { compilePattern } from '../../../src/model/tokenizer/regex.js';
import { bpeIds, buildMerges } from '../../../src/model/tokenizer/bpe.js';
import { ByteTable, StringTable, TokenIndex } from '../../../src/model/tokenizer/table.js';
import { preTokenizeAll, splitPattern, type SplitBehavior } from '../../../src/model/tokenizer/pretokenize.js';
import { loadTokenizer, tokenizerFromHf } from '../../../src/model/tokenizer/index.js';
import { tempDir } from '../../jobs/helpers.js';
import { fixtures, qwen3Files, tinyTokenizerJson } from './helpers.js';

const matches = (p: string, s: string): string[] => [...compilePattern(p)[Symbol.matchAll](s)].map((m) => m[0]).filter((m) => m !== '');
const tiny = (over: Record<string, unknown> = {}) => tokenizerFromHf({ tokenizer: tinyTokenizerJson(over) }, 'tiny.json');
const model = () => (tinyTokenizerJson() as { model: Record<string, unknown> }).model;
// Ids of the tiny tokenizer: bytes are their own ids; the merges made 256 he ... 263 Ġworld, 265 ĠĠ.
const HELLO = 259;
const WORLD = 263;
const END = 266;
const THINK = 267;

describe('tokenizer components: Oniguruma patterns, splits, BPE, added tokens, refusals', () => {
  describe('patterns', () => {
    it('an inline case-insensitive group matches either case, and only there', () => {
      expect(matches("(?i:'s|'ll)|x", "'S 's 'Ll 'LL X x 'y")).to.deep.equal(["'S", "'s", "'Ll", "'LL", 'x']);
    });

    it('\\s and \\S are Unicode White_Space as Oniguruma has it (U+0085 is, U+FEFF is not)', () => {
      expect(matches(String.raw`\s+`, 'a\u0085\u00a0b\ufeffc')).to.deep.equal(['\u0085\u00a0']);
      expect(matches(String.raw`[^\s]+`, 'a\u3000b')).to.deep.equal(['a', 'b']);
    });

    it('. stops only at \\n, \\d is any decimal digit, \\x{..} and {,n} are read', () => {
      expect(matches('.+', 'a\rb\nc')).to.deep.equal(['a\rb', 'c']);
      expect(matches(String.raw`\d+`, '12٣४x')).to.deep.equal(['12٣४']);
      expect(matches(String.raw`\x{41}{,2}`, 'AAA')).to.deep.equal(['AA', 'A']);
    });

    it('class ranges: of plain characters, of escapes, and a literal - first or last', () => {
      expect(matches(String.raw`[\x41-\x43]+`, 'ABCD')).to.deep.equal(['ABC']);
      expect(matches('[a-c]+', 'abcd')).to.deep.equal(['abc']);
      expect(matches('[-a]+|[b-]+', 'a-b-')).to.deep.equal(['a-', 'b-']);
      expect(matches('(?i:[a-c]+)', 'aBCd')).to.deep.equal(['aBC']);
      expect(() => compilePattern(String.raw`[\p{L}-z]`)).to.throw(PatternError);
    });

    it('constructs whose meaning JavaScript cannot keep are refused, not approximated', () => {
      for (const p of ['(?>a)', 'a++', String.raw`\Ga`, '[a&&b]', '[[a]]', '(?i)a', 'a{2}+']) expect(() => compilePattern(p), p).to.throw(PatternError);
    });

    it('llama.cpp\'s qwen2 pattern splits every fixture text as Qwen3\'s own tokenizer.json pattern does', () => {
      const pre = (qwen3Files().tokenizer as unknown as { pre_tokenizer: { pretokenizers: { pattern: { Regex: string } }[] } }).pre_tokenizer;
      const hf = compilePattern(pre.pretokenizers[0]!.pattern.Regex);
      const ll = compilePattern(QWEN2_PATTERN);
      for (const c of fixtures().cases) expect([...ll[Symbol.matchAll](c.text)].map((m) => m[0]), JSON.stringify(c.text)).to.deep.equal([...hf[Symbol.matchAll](c.text)].map((m) => m[0]));
    });
  });

  describe('splits', () => {
    // The example of Hugging Face's docs for SplitDelimiterBehavior.
    const cases: Record<SplitBehavior, string[]> = {
      Isolated: ['the', '-', 'final', '-', '-', 'countdown'],
      Removed: ['the', 'final', 'countdown'],
      MergedWithPrevious: ['the-', 'final-', '-', 'countdown'],
      MergedWithNext: ['the', '-final', '-', '-countdown'],
      Contiguous: ['the', '-', 'final', '--', 'countdown'],
    };
    for (const [b, want] of Object.entries(cases)) {
      it(b, () => expect(preTokenizeAll(splitPattern(/-/gu, b as SplitBehavior), ['the-final--countdown'])).to.deep.equal(want));
    }
    it('invert swaps what counts as a match', () => {
      expect(preTokenizeAll(splitPattern(/-/gu, 'Removed', true), ['the-final--countdown'])).to.deep.equal(['-', '-', '-']);
    });
  });

  describe('BPE', () => {
    it('merges by rank, through intermediate tokens', () => {
      expect(tiny().encode('hello world')).to.deep.equal([HELLO, WORLD]);
    });

    it('among equal ranks the leftmost pair merges first', () => {
      expect(tiny().encode('   ')).to.deep.equal([265, 32]);
    });

    it('ignore_merges takes a piece that is itself a token whole', () => {
      const m = model();
      const vocab = { ...(m['vocab'] as Record<string, number>), wd: 300 };
      expect(tiny({ model: { ...m, vocab } }).encode('wd')).to.deep.equal([119, 100]);
      expect(tiny({ model: { ...m, vocab, ignore_merges: true } }).encode('wd')).to.deep.equal([300]);
    });

    it('a TemplateProcessing post-processor adds its tokens with addSpecial only', () => {
      const t = tiny({
        post_processor: {
          type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: '<|end|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<|end|>', type_id: 0 } }],
          special_tokens: { '<|end|>': { id: '<|end|>', ids: [END], tokens: ['<|end|>'] } },
        },
      });
      expect(t.encode('hello')).to.deep.equal([END, HELLO, END]);
      expect(t.encode('hello', { addSpecial: false })).to.deep.equal([HELLO]);
    });

    it('a normalizer runs before the pre-tokenizer (Lowercase, NFC in a Sequence)', () => {
      expect(tiny({ normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Lowercase' }] } }).encode('HELLO')).to.deep.equal([HELLO]);
    });
  });

  describe('added tokens', () => {
    const added = (flags: Record<string, boolean>) => {
      const j = tinyTokenizerJson() as { added_tokens: Record<string, unknown>[] };
      return tiny({ added_tokens: [j.added_tokens[0], { ...j.added_tokens[1], ...flags }] });
    };

    it('are found whole anywhere, the special one only when special tokens are parsed', () => {
      const t = tiny();
      expect(t.encode('hello<think>hello<|end|>')).to.deep.equal([HELLO, THINK, HELLO, END]);
      expect(t.encode('<|end|>', { parseSpecial: false })).to.not.include(END);
      expect(t.decode([HELLO, END, THINK], { skipSpecial: true })).to.equal('hello<think>');
    });

    it('lstrip and rstrip take the spaces beside the token', () => {
      expect(added({ lstrip: true, rstrip: true }).encode('hello <think> hello')).to.deep.equal([HELLO, THINK, HELLO]);
      expect(tiny().encode('hello <think> hello')).to.deep.equal([HELLO, 32, THINK, 32, HELLO]);
    });

    it('single_word matches only outside a word', () => {
      const t = added({ single_word: true });
      expect(t.encode('a<think>b')).to.not.include(THINK);
      expect(t.encode('a <think> b')).to.include(THINK);
    });
  });

  describe('refusals', () => {
    const refuses = (over: Record<string, unknown>, re: RegExp) => expect(() => tiny(over)).to.throw(TokenizerError, re);

    it('components other than byte-level BPE are refused by name and JSON pointer', () => {
      refuses({ model: { ...model(), type: 'WordPiece' } }, /\/model\/type: the model "WordPiece" is not supported/);
      refuses({ model: { ...model(), byte_fallback: true } }, /\/model\/byte_fallback/);
      refuses({ normalizer: { type: 'Prepend', prepend: '▁' } }, /\/normalizer\/type: the normalizer "Prepend"/);
      refuses({ pre_tokenizer: { type: 'Metaspace' } }, /\/pre_tokenizer\/type: the pre-tokenizer "Metaspace"/);
      refuses({ pre_tokenizer: { type: 'Split', pattern: { Regex: 'a++' }, behavior: 'Isolated' } }, /\/pre_tokenizer\/pattern\/Regex: possessive/);
      refuses({ decoder: { type: 'WordPiece' } }, /\/decoder\/type: the decoder "WordPiece"/);
    });

    it('a vocabulary that is not byte-level, or a merge that makes no token, is refused', () => {
      const m = model();
      const vocab = { ...(m['vocab'] as Record<string, number>) };
      delete vocab['Ā'];
      refuses({ model: { ...m, vocab } }, /byte 0x00 .* has no token/);
      refuses({ model: { ...m, merges: [['h', 'e'], ['q', 'z']] } }, /\/model\/merges\/1: it makes "qz", which is not a token/);
      expect(() => tokenizerFromHf({ tokenizer: [1, 2] })).to.throw(TokenizerError, /not a tokenizer\.json/);
      expect(() => tokenizerFromHf({ tokenizer: { hello: 1 } })).to.throw(TokenizerError, /\/model: missing/);
    });

    it('text and ids that are not valid are InvalidInput naming the place', () => {
      const t = tiny();
      expect(() => t.encode('ok \udc00')).to.throw(InvalidInput, /lone surrogate U\+DC00 at index 3/);
      expect(() => t.decode([HELLO, 1.5])).to.throw(InvalidInput, /at \/1: 1\.5 is not a token id/);
      expect(() => t.decode([-1])).to.throw(InvalidInput, /token id -1 is outside the vocabulary \(0 to 267\)/);
    });

    it('loadTokenizer: a missing path is a usage error; a file or folder that is not a tokenizer is a TokenizerError', () => {
      const tmp = tempDir('npuo-tokload-');
      try {
        expect(() => loadTokenizer(join(tmp.dir, 'nope.json'))).to.throw(UsageError, /no such file/);
        mkdirSync(join(tmp.dir, 'model'));
        expect(() => loadTokenizer(join(tmp.dir, 'model'))).to.throw(TokenizerError, /the directory has no tokenizer\.json/);
        writeFileSync(join(tmp.dir, 'a.json'), '{"model": ');
        expect(() => loadTokenizer(join(tmp.dir, 'a.json'))).to.throw(TokenizerError, /is not JSON/);
        writeFileSync(join(tmp.dir, 'b.json'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
        expect(() => loadTokenizer(join(tmp.dir, 'b.json'))).to.throw(TokenizerError, /is not UTF-8 text/);
        writeFileSync(join(tmp.dir, 'model', 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
        writeFileSync(join(tmp.dir, 'model', 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|end|>', chat_template: '{{ messages[0].content }}!' }));
        writeFileSync(join(tmp.dir, 'model', 'config.json'), JSON.stringify({ vocab_size: 300, eos_token_id: 7 }));
        const t = loadTokenizer(join(tmp.dir, 'model'));
        expect(t.vocabSize).to.equal(300);
        expect(t.eosIds).to.deep.equal([7, END]);
        expect(t.applyChatTemplate([{ role: 'user', content: 'hi' }])).to.equal('hi!');
        expect(loadTokenizer(join(tmp.dir, 'model', 'tokenizer.json')).chatTemplate).to.equal('{{ messages[0].content }}!');
      } finally {
        tmp.remove();
      }
    });
  });
});

describe('tokenizer: BPE over code points', () => {
  it('a lone high surrogate is one symbol and the character after it is kept', () => {
    const vocab = new Map([['\uD800', 0], ['a', 1], ['\uD83D\uDE00', 2]]);
    const merges = buildMerges([], vocab);
    if ('bad' in merges) throw new Error(merges.why);
    const model = { vocab, merges, ignoreMerges: false };
    expect(bpeIds(model, '\uD800a')).to.deep.equal([0, 1]);
    expect(bpeIds(model, 'a\uD83D\uDE00\uD800')).to.deep.equal([1, 2, 0]);
  });
});

describe('tokenizer: the packed vocabulary (table.ts)', () => {
  // Texts with repeats (the first id keeps the text), an empty one, surrogates, look-alikes and one past a string chunk.
  const texts = ['a', 'ab', 'ba', '', 'ab', '\uD800', '\uD83D\uDE00', 'Ġworld', 'x'.repeat(20000), 'b', 'a'];
  const table = StringTable.from([...texts, null]);
  const index = new TokenIndex(table, texts.map((_, i) => i), texts.length);

  it('gives each id its text back, null for an id with none or out of range', () => {
    texts.forEach((t, i) => expect(table.get(i)).to.equal(t));
    expect(table.length).to.equal(texts.length + 1);
    expect(table.get(texts.length)).to.equal(null);
    expect(table.get(-1)).to.equal(null);
    expect(table.get(99)).to.equal(null);
  });

  it('looks texts up as a Map filled first-id-wins does, and finds no text it lacks', () => {
    const map = new Map<string, number>();
    texts.forEach((t, i) => { if (!map.has(t)) map.set(t, i); });
    for (const [t, id] of map) expect(index.get(t), JSON.stringify(t.slice(0, 20))).to.equal(id);
    // Negative control: texts of the same length or a shared prefix are not found.
    for (const t of ['c', 'aa', 'abc', 'Ġworlds', '\uDE00', 'x'.repeat(19999), 'x'.repeat(20001)]) expect(index.get(t)).to.equal(undefined);
    expect(index.has('ba')).to.equal(true);
    expect(index.has('bb')).to.equal(false);
  });

  it('copies each id\'s bytes out whole', () => {
    const bytes = new ByteTable();
    const parts = [Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.from({ length: 40 }, (_, i) => i)];
    for (const p of parts) bytes.push(p);
    bytes.seal();
    parts.forEach((p, i) => {
      expect(bytes.size(i)).to.equal(p.length);
      const out = new Uint8Array(p.length + 2).fill(9);
      bytes.copy(i, out, 1);
      expect([...out]).to.deep.equal([9, ...p, 9]);
    });
  });
});
