/**
 * A Hugging Face tokenizer as GGUF `tokenizer.*` metadata, by the rules of llama.cpp's converter
 * (convert_hf_to_gguf.py, gpt2 vocabularies): ids without a token become `[PADn]` of type UNUSED;
 * added tokens are CONTROL when special or when they look it (`<|...|>`), else USER_DEFINED; merges
 * are "left right" strings. The tests build GGUFs from a real tokenizer.json with it.
 */
import { TokenizerError } from '../../errors/index.js';
import { gv, type GgufValue } from '../gguf/types.js';
import { TOKEN_TYPE } from './fromGguf.js';
import { specFromHf, type HfTokenizerFiles } from './fromJson.js';

/** What to write besides the vocabulary. */
export interface GgufTokenizerOptions {
  /** `tokenizer.ggml.pre`; default "qwen2". */
  readonly pre?: string;
}

const looksSpecial = (t: string): boolean => t.startsWith('<|') && t.endsWith('|>');

/** The `tokenizer.*` metadata of a GGUF holding this Hugging Face tokenizer. */
export function ggufTokenizerMetadata(files: HfTokenizerFiles, source: string, options: GgufTokenizerOptions = {}): Map<string, GgufValue> {
  const spec = specFromHf(files, source);
  const root = files.tokenizer as { model: { merges: unknown[] }; added_tokens?: { id: number; special?: boolean }[] };
  const addedIds = new Set((root.added_tokens ?? []).map((t) => t.id));
  const cfg = (typeof files.tokenizerConfig === 'object' && files.tokenizerConfig !== null ? files.tokenizerConfig : {}) as Record<string, unknown>;
  const tokens: string[] = [];
  const types: number[] = [];
  for (let i = 0; i < spec.tokens.length; i++) {
    const t = spec.tokens.get(i);
    if (t === null) { tokens.push(`[PAD${i}]`); types.push(TOKEN_TYPE.unused); continue; }
    tokens.push(t);
    types.push(!addedIds.has(i) ? TOKEN_TYPE.normal : spec.special.has(i) || looksSpecial(t) ? TOKEN_TYPE.control : TOKEN_TYPE.userDefined);
  }
  const merges = root.model.merges.map((m) => (typeof m === 'string' ? m : (m as string[]).join(' ')));
  if (merges.some((m) => m.indexOf(' ', 1) < 0)) throw new TokenizerError(source, 'a merge is not two tokens');
  const out = new Map<string, GgufValue>([
    ['tokenizer.ggml.model', gv.str('gpt2')],
    ['tokenizer.ggml.pre', gv.str(options.pre ?? 'qwen2')],
    ['tokenizer.ggml.tokens', gv.strings(tokens)],
    ['tokenizer.ggml.token_type', gv.numbers('i32', types)],
    ['tokenizer.ggml.merges', gv.strings(merges)],
  ]);
  const eosName = spec.chat.tokens.eos_token;
  const eos = eosName === undefined ? -1 : tokens.indexOf(eosName);
  if (eos >= 0) out.set('tokenizer.ggml.eos_token_id', gv.u32(eos));
  if (spec.bosId !== null) out.set('tokenizer.ggml.bos_token_id', gv.u32(spec.bosId));
  if (spec.padId !== null) out.set('tokenizer.ggml.padding_token_id', gv.u32(spec.padId));
  for (const k of ['add_bos_token', 'add_eos_token'] as const) {
    if (typeof cfg[k] === 'boolean') out.set(`tokenizer.ggml.${k}`, gv.bool(cfg[k]));
  }
  if (spec.chat.template !== null) out.set('tokenizer.chat_template', gv.str(spec.chat.template));
  return out;
}
