/**
 * The tokenizer a GGUF carries in its `tokenizer.ggml.*` metadata, so a GGUF alone can be served. The
 * token types decide each token's part, as llama.cpp reads them: NORMAL tokens are the BPE vocabulary;
 * CONTROL, USER_DEFINED and UNKNOWN tokens are found whole in the text first (CONTROL and UNKNOWN only
 * when special tokens are parsed) and decode to their own text; UNUSED ids decode to nothing.
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
import { QWEN2_PATTERN } from './pattern.js';
import { compilePattern } from './regex.js';
import { byteLevel, sequence, splitPattern, type PreTokenizer } from './pretokenize.js';

/** llama.cpp's token types (gguf-py's TokenType). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

const utf8 = new TextEncoder();

/** The pre-tokenizers this reader knows, by `tokenizer.ggml.pre`. */
const PRE: Readonly<Record<string, () => { normalize: ((s: string) => string) | null; pre: PreTokenizer }>> = {
  qwen2: () => ({
    normalize: (s) => s.normalize('NFC'),
    pre: sequence([splitPattern(compilePattern(QWEN2_PATTERN), 'Isolated'), byteLevel(false, false)]),
  }),
};

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
  const flag = (k: string): boolean => { const v = get(k); return v !== undefined && v.type === 'bool' && v.value; };

  const modelKind = get('model');
  if (modelKind === undefined) fail('tokenizer.ggml.model', 'missing: the GGUF carries no tokenizer');
  if (modelKind!.type !== 'string' || modelKind!.value !== 'gpt2') {
    fail('tokenizer.ggml.model', `${JSON.stringify(modelKind!.value)} is not supported (only "gpt2", byte-level BPE)`);
  }
  const preName = get('pre');
  const preKey = preName?.type === 'string' ? preName.value : undefined;
  const pre = preKey === undefined ? undefined : PRE[preKey];
  if (pre === undefined) fail('tokenizer.ggml.pre', `${JSON.stringify(preKey ?? null)} is not supported (only ${Object.keys(PRE).map((k) => JSON.stringify(k)).join(', ')})`);
  const tokens = strings('tokens', true)!;
  if (tokens.length === 0 || tokens.length > ID_LIMIT) fail('tokenizer.ggml.tokens', `${tokens.length} tokens: must be 1 to ${ID_LIMIT}`);
  const size = tokens.length;
  const tt = get('token_type');
  let types: readonly number[];
  if (tt === undefined) types = new Array<number>(size).fill(TOKEN_TYPE.normal);
  else if (tt.type !== 'array' || tt.itemType === 'string' || tt.itemType === 'array' || tt.itemType === 'bool' || tt.value.length !== size) {
    return fail('tokenizer.ggml.token_type', `must be an integer array of one type per token (${size})`);
  } else types = (tt.value as readonly (number | bigint)[]).map((x) => Number(x));

  const vocab = new Map<string, number>();
  const added: AddedToken[] = [];
  const special = new Set<number>();
  const bytes: Uint8Array[] = [];
  tokens.forEach((t, i) => {
    const type = types[i]!;
    if (type === TOKEN_TYPE.normal || type === TOKEN_TYPE.byte) {
      if (!vocab.has(t)) vocab.set(t, i);
      bytes.push(tokenBytes(t));
    } else if (type === TOKEN_TYPE.control || type === TOKEN_TYPE.userDefined || type === TOKEN_TYPE.unknown) {
      const isSpecial = type !== TOKEN_TYPE.userDefined;
      if (isSpecial) special.add(i);
      if (t !== '') added.push({ id: i, content: t, special: isSpecial, normalized: false, lstrip: false, rstrip: false, singleWord: false });
      bytes.push(utf8.encode(t));
    } else if (type === TOKEN_TYPE.unused) {
      bytes.push(new Uint8Array(0));
    } else fail('tokenizer.ggml.token_type', `token ${i} has type ${type}, not one of llama.cpp's types 1 to 6`);
  });
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

  const bosId = id('bos_token_id', size);
  const padId = id('padding_token_id', size);
  const eos = new Set<number>();
  for (const k of ['eos_token_id', 'eot_token_id', 'eom_token_id']) { const e = id(k, size); if (e !== null) eos.add(e); }
  const byText = new Map(added.map((t) => [t.content, t.id]));
  for (const t of END_OF_TURN) { const e = byText.get(t); if (e !== undefined && special.has(e)) eos.add(e); }
  const template = meta.get('tokenizer.chat_template');
  if (template !== undefined && template.type !== 'string') fail('tokenizer.chat_template', 'must be a string');
  const textOf = (i: number | null): string | undefined => (i === null ? undefined : tokens[i]);
  const chatTokens: Record<string, string> = {};
  for (const [k, v] of [['bos_token', textOf(bosId)], ['eos_token', textOf(id('eos_token_id', size))], ['pad_token', textOf(padId)], ['unk_token', textOf(id('unknown_token_id', size))]] as const) {
    if (v !== undefined) chatTokens[k] = v;
  }
  const { normalize, pre: preTokenize } = pre!();
  return {
    source, kind: 'gguf', model: { vocab, merges, ignoreMerges: false }, added, normalize, preTokenize,
    tokens: tokens.map((t, i) => (types[i] === TOKEN_TYPE.unused ? null : t)), bytes: (i) => bytes[i]!, special,
    prefix: flag('add_bos_token') && bosId !== null ? [bosId] : [],
    suffix: flag('add_eos_token') && id('eos_token_id', size) !== null ? [id('eos_token_id', size)!] : [],
    bosId, eosIds: [...eos].sort((a, b) => a - b), padId,
    chat: { template: template?.type === 'string' ? template.value : null, tokens: chatTokens },
  };
}
