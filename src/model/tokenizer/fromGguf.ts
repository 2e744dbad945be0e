/**
 * The tokenizer a GGUF carries in its `tokenizer.ggml.*` metadata, so a GGUF alone can be served:
 * byte-level BPE (`model = "gpt2"`) split by the pattern llama.cpp runs for its `pre`, or
 * SentencePiece-style (`model = "llama"`, spm.ts) with scores, byte fallback and the `▁` space marker. The
 * token types decide each token's part, as llama.cpp reads them: NORMAL tokens are the BPE vocabulary;
 * CONTROL, USER_DEFINED and UNKNOWN tokens are found whole in the text first (CONTROL and UNKNOWN only
 * when special tokens are parsed) and decode to their own text; UNUSED ids decode to nothing; BYTE tokens `<0xNN>` of a SentencePiece file decode to their byte.
 * For `pre = "qwen2"` the text is NFC-normalized first, as the tokenizer.json the file was converted
 * from does (llama.cpp skips this, and so differs from Hugging Face on text that is not NFC).
 * @internal
 */
import { TokenizerError } from '../../errors/index.js';
import type { GgufMetadata, GgufValue } from '../gguf/types.js';
import type { AddedToken } from './added.js';
import { ID_LIMIT, buildMerges } from './bpe.js';
import { BYTE_TO_CHAR, tokenBytes } from './byteLevel.js';
import { END_OF_TURN, type TokenizerSpec } from './core.js';
import { DEFAULT_PATTERNS, GPT2_SPLIT_PATTERN, GPT4O_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN } from './pattern.js';
import { SPACE_MARK, type SpmModel } from './spm.js';
import { compilePattern } from './regex.js';
import { byteLevel, sequence, splitPattern, type PreTokenizer } from './pretokenize.js';
import { ByteTable, StringTable, TokenIndex } from './table.js';

/** llama.cpp's token types (gguf-py's TokenType). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

const utf8 = new TextEncoder();

/** How a byte-level BPE file splits its text, by `tokenizer.ggml.pre`, as llama.cpp's llama-vocab.cpp maps the names. */
interface PreSpec {
  readonly normalize: ((s: string) => string) | null;
  readonly pre: PreTokenizer;
  /** Llama 3's rule: a piece that is a token is that token, merges or not. */
  readonly ignoreMerges: boolean;
  /** Whether a BOS is added when the file has no add_bos_token. */
  readonly addBos: boolean;
}

const split = (patterns: readonly string[]): PreTokenizer =>
  sequence([...patterns.map((p) => splitPattern(compilePattern(p), 'Isolated')), byteLevel(false, false)]);

const PRE_KINDS: Readonly<Record<string, () => PreSpec>> = {
  qwen2: () => ({ normalize: (s) => s.normalize('NFC'), pre: split([QWEN2_PATTERN]), ignoreMerges: false, addBos: false }),
  llama3: () => ({ normalize: null, pre: split([LLAMA3_PATTERN]), ignoreMerges: true, addBos: true }),
  dbrx: () => ({ normalize: null, pre: split([LLAMA3_PATTERN]), ignoreMerges: false, addBos: false }),
  gpt2: () => ({ normalize: null, pre: split([GPT2_SPLIT_PATTERN]), ignoreMerges: false, addBos: false }),
  gpt4o: () => ({ normalize: null, pre: split([GPT4O_PATTERN]), ignoreMerges: false, addBos: false }),
  default: () => ({ normalize: null, pre: split(DEFAULT_PATTERNS), ignoreMerges: false, addBos: false }),
};

/** The names this reader knows, each to its kind (a missing `tokenizer.ggml.pre` is "default", as in llama.cpp). */
const PRE: Readonly<Record<string, keyof typeof PRE_KINDS>> = {
  'qwen2': 'qwen2', 'deepseek-r1-qwen': 'qwen2', 'megrez': 'qwen2', 'stablelm2': 'qwen2',
  'llama-bpe': 'llama3', 'llama3': 'llama3', 'llama-v3': 'llama3', 'falcon3': 'llama3', 'pixtral': 'llama3',
  'dbrx': 'dbrx', 'smaug-bpe': 'dbrx',
  'gpt-2': 'gpt2', 'phi-2': 'gpt2', 'mpt': 'gpt2', 'olmo': 'gpt2',
  'gpt-4o': 'gpt4o', 'llama4': 'gpt4o',
  'default': 'default',
};

/** Strings per id as llama.cpp keys them: an empty text is `[EMPTY_<id>]`, and a repeated text names its last id. */
function textToToken(tokens: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  tokens.forEach((t, i) => m.set(t === '' ? `[EMPTY_${i}]` : t, i));
  return m;
}

// Made outside specFromGguf: a closure made in it would keep its scope (the metadata, every token's string) alive.
const spacesMarked: PreTokenizer = (piece, emit) => emit(piece.replaceAll(' ', SPACE_MARK));

/** Reads the tokenizer of a GGUF's metadata; `source` names the file in errors. */
export function specFromGguf(meta: GgufMetadata, source: string): TokenizerSpec {
  const fail = (key: string, reason: string): never => { throw new TokenizerError(source, `${key}: ${reason}`); };
  const get = (k: string): GgufValue | undefined => meta.get(`tokenizer.ggml.${k}`);
  const strings = (k: string, required: boolean): readonly string[] | null => {
    const v = get(k);
    if (v === undefined) return required ? fail(`tokenizer.ggml.${k}`, 'missing: the GGUF carries no tokenizer') : null;
    if (v.type !== 'array' || v.itemType !== 'string') return fail(`tokenizer.ggml.${k}`, 'must be an array of strings');
    return v.value;
  };
  const id = (k: string, size: number): number | null => {
    const v = get(k);
    if (v === undefined) return null;
    if (v.type === 'array' || v.type === 'string' || v.type === 'bool' || v.type === 'f32' || v.type === 'f64') return fail(`tokenizer.ggml.${k}`, 'must be an integer');
    const n = Number(v.value);
    // -1 (as a signed value, or the largest unsigned one) means "none"; any other id must name a token.
    if (n === -1 || (v.type === 'u32' && n === 0xffffffff) || (v.type === 'u64' && v.value === 0xffffffffffffffffn)) return null;
    if (!Number.isSafeInteger(n) || n < 0 || n >= size) return fail(`tokenizer.ggml.${k}`, `id ${String(v.value)} is outside the vocabulary (0 to ${size - 1})`);
    return n;
  };
  const flag = (k: string, otherwise: boolean): boolean => {
    const v = get(k);
    if (v === undefined) return otherwise;
    if (v.type !== 'bool') return fail(`tokenizer.ggml.${k}`, 'must be a bool');
    return v.value;
  };

  const modelKind = get('model');
  if (modelKind === undefined) fail('tokenizer.ggml.model', 'missing: the GGUF carries no tokenizer');
  const kind = modelKind!.type === 'string' ? modelKind!.value : undefined;
  if (kind !== 'gpt2' && kind !== 'llama') {
    fail('tokenizer.ggml.model', `${JSON.stringify(modelKind!.value)} is not supported (only "gpt2", byte-level BPE, and "llama", SentencePiece-style)`);
  }
  const spm = kind === 'llama';
  let pre: PreSpec | undefined;
  if (!spm) {
    const preName = get('pre');
    if (preName !== undefined && preName.type !== 'string') fail('tokenizer.ggml.pre', 'must be a string');
    const preKey = preName?.type === 'string' ? preName.value : 'default';
    const preKind = Object.hasOwn(PRE, preKey) ? PRE[preKey] : undefined;
    if (preKind === undefined) fail('tokenizer.ggml.pre', `${JSON.stringify(preKey)} is not supported (only ${Object.keys(PRE).map((k) => JSON.stringify(k)).join(', ')})`);
    pre = PRE_KINDS[preKind!]!();
  }
  const tokens = strings('tokens', true)!;
  if (tokens.length === 0 || tokens.length > ID_LIMIT) fail('tokenizer.ggml.tokens', `${tokens.length} tokens: must be 1 to ${ID_LIMIT}`);
  const size = tokens.length;
  const tt = get('token_type');
  let types: readonly number[];
  if (tt === undefined) types = new Array<number>(size).fill(TOKEN_TYPE.normal);
  else if (tt.type !== 'array' || tt.itemType === 'string' || tt.itemType === 'array' || tt.itemType === 'bool' || tt.value.length !== size) {
    return fail('tokenizer.ggml.token_type', `must be an integer array of one type per token (${size})`);
  } else types = (tt.value as readonly (number | bigint)[]).map((x) => Number(x));

  // The texts, bytes and lookup are packed in typed arrays (table.ts): per-token strings and arrays
  // kept on the JS heap cost about 45 MB for a 151,936-token vocabulary.
  const texts = StringTable.from(tokens.map((t, i) => (types[i] === TOKEN_TYPE.unused ? null : t)));
  const vocabIds: number[] = [];
  const added: AddedToken[] = [];
  const special = new Set<number>();
  const bytes = new ByteTable();
  tokens.forEach((t, i) => {
    const type = types[i]!;
    if (type === TOKEN_TYPE.normal || type === TOKEN_TYPE.byte) {
      vocabIds.push(i);
      if (!spm) bytes.push(tokenBytes(t));
      else if (type === TOKEN_TYPE.byte && /^<0x[0-9A-Fa-f]{2}>$/.test(t)) bytes.push(Uint8Array.of(parseInt(t.slice(3, 5), 16)));
      else bytes.push(utf8.encode(t.replaceAll(SPACE_MARK, ' ')));
    } else if (type === TOKEN_TYPE.control || type === TOKEN_TYPE.userDefined || type === TOKEN_TYPE.unknown) {
      const isSpecial = type !== TOKEN_TYPE.userDefined;
      if (isSpecial) special.add(i);
      if (t !== '') added.push({ id: i, content: t, special: isSpecial, normalized: false, lstrip: false, rstrip: false, singleWord: false });
      bytes.push(utf8.encode(t));
    } else if (type === TOKEN_TYPE.unused) {
      bytes.push(new Uint8Array(0));
    } else fail('tokenizer.ggml.token_type', `token ${i} has type ${type}, not one of llama.cpp's types 1 to 6`);
  });

  let model: TokenizerSpec['model'];
  if (spm) {
    const sv = get('scores');
    const scores = new Float32Array(size);
    if (sv !== undefined) {
      if (sv.type !== 'array' || (sv.itemType !== 'f32' && sv.itemType !== 'f64') || sv.value.length !== size) {
        fail('tokenizer.ggml.scores', `must be a float array of one score per token (${size})`);
      }
      (sv as { value: readonly number[] }).value.forEach((x, i) => {
        if (!Number.isFinite(x)) fail('tokenizer.ggml.scores', `token ${i} has score ${x}, not a finite number`);
        scores[i] = x;
      });
    }
    const lookup = textToToken(tokens);
    let maxLength = 0;
    for (const t of lookup.keys()) maxLength = Math.max(maxLength, t.length);
    const byteIds = new Int32Array(256).fill(-1);
    for (let b = 0; b < 256; b++) {
      byteIds[b] = lookup.get(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`) ?? (b < 0x80 ? lookup.get(String.fromCharCode(b)) : undefined) ?? -1;
    }
    model = { type: 'spm', lookup, scores, maxLength, byteIds } satisfies SpmModel;
  } else {
    // The NORMAL and BYTE tokens, a repeated text naming its first id.
    const vocab = new TokenIndex(texts, vocabIds, vocabIds.length);
    for (let b = 0; b < 256; b++) {
      if (!vocab.has(BYTE_TO_CHAR[b]!)) fail('tokenizer.ggml.tokens', `byte 0x${b.toString(16).padStart(2, '0')} has no NORMAL token: not a byte-level vocabulary`);
    }
    const mergeLines = strings('merges', true)!;
    const pairs = mergeLines.map((m, i): [string, string] => {
      const sp = m.indexOf(' ', 1);
      return sp < 0 ? fail(`tokenizer.ggml.merges[${i}]`, `${JSON.stringify(m)} is not two tokens separated by a space`) : [m.slice(0, sp), m.slice(sp + 1)];
    });
    const merges = buildMerges(pairs, vocab);
    if ('bad' in merges) return fail(`tokenizer.ggml.merges[${merges.bad}]`, merges.why);
    model = { vocab, merges, ignoreMerges: pre!.ignoreMerges };
  }

  // llama.cpp's defaults where the file names no id: a SentencePiece vocabulary's <unk>, <s>, </s> are 0, 1, 2.
  const idOr = (k: string, otherwise: number): number | null => (get(k) === undefined ? (otherwise < size ? otherwise : null) : id(k, size));
  const bosId = spm ? idOr('bos_token_id', 1) : id('bos_token_id', size);
  const eosId = spm ? idOr('eos_token_id', 2) : id('eos_token_id', size);
  const unkId = spm ? idOr('unknown_token_id', 0) : id('unknown_token_id', size);
  const padId = id('padding_token_id', size);
  const eos = new Set<number>();
  if (eosId !== null) eos.add(eosId);
  for (const k of ['eot_token_id', 'eom_token_id']) { const e = id(k, size); if (e !== null) eos.add(e); }
  // llama.cpp's rule keyed on the model's name: in a Phi-3 (general.name holding "phi-3" or "phi3"), the
  // whitespace after a special token found in the text is dropped, but after <unk>, <s> and <|endoftext|>.
  const name = meta.get('general.name');
  if (name?.type === 'string' && /phi-3|phi3/.test(name.value.toLowerCase())) {
    added.forEach((t, i) => { if (!['<unk>', '<s>', '<|endoftext|>'].includes(t.content)) added[i] = { ...t, rstrip: true }; });
  }
  const byText = new Map(added.map((t) => [t.content, t.id]));
  for (const t of END_OF_TURN) { const e = byText.get(t); if (e !== undefined && special.has(e)) eos.add(e); }
  const template = meta.get('tokenizer.chat_template');
  if (template !== undefined && template.type !== 'string') fail('tokenizer.chat_template', 'must be a string');
  const textOf = (i: number | null): string | undefined => (i === null ? undefined : tokens[i]);
  const chatTokens: Record<string, string> = {};
  for (const [k, v] of [['bos_token', textOf(bosId)], ['eos_token', textOf(eosId)], ['pad_token', textOf(padId)], ['unk_token', textOf(unkId)]] as const) {
    if (v !== undefined) chatTokens[k] = v;
  }
  const addBos = flag('add_bos_token', spm ? true : pre!.addBos);
  const addEos = flag('add_eos_token', false);
  const spacePrefix = spm && flag('add_space_prefix', true);
  return {
    source, kind: 'gguf', model, added,
    normalize: spm ? null : pre!.normalize,
    preTokenize: spm ? spacesMarked : pre!.pre,
    spacePrefix,
    tokens: texts, bytes: bytes.seal(), special,
    prefix: addBos && bosId !== null ? [bosId] : [],
    suffix: addEos && eosId !== null ? [eosId] : [],
    bosId, eosIds: [...eos].sort((a, b) => a - b), padId,
    chat: { template: template?.type === 'string' ? template.value : null, tokens: chatTokens },
  };
}
