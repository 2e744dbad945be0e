/**
 * Small synthetic vocabularies of the kinds llama.cpp reads from a GGUF, and a tiny random Llama model
 * to carry them, so node-llama-cpp can load the same file and tokenize the same texts.
 */
import { quantize } from '../../../src/model/gguf/quantize.js';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';
import { writeGguf } from '../../../src/model/gguf/writer.js';
import { mulberry32 } from '../../../src/numerics/random.js';
import { BYTE_TO_CHAR, toByteLevel } from '../../../src/model/tokenizer/byteLevel.js';
import { GPT2_SPLIT_PATTERN } from '../../../src/model/tokenizer/pattern.js';
import { compilePattern } from '../../../src/model/tokenizer/regex.js';
import { preTokenizeAll, splitPattern } from '../../../src/model/tokenizer/pretokenize.js';

/** Texts the vocabularies are learnt from and the comparisons tokenize: spaces, newlines, digits, unicode, emoji. */
export const TEXTS: readonly string[] = [
  'Hello world', 'the quick brown fox jumps over the lazy dog', '  two leading spaces', 'trailing spaces   ',
  'line one\nline two\n\nafter a blank line\n', 'tabs\tand\r\nCRLF\r\n', 'a    run    of    spaces',
  'digits 1234567 and 12 and 123456789012', 'version 3.14159, 2,048 items', "don't I'LL we've they're it's",
  'café naïve Ünïcödé résumé', '你好世界，你好！', 'Здравствуй мир', 'emoji 😀👍🏽 and 🇫🇷 flags',
  'mixed: a+b=c; x<y>z | ^~ $5 @home #tag', 'HelloWorld CamelCase XMLHttpRequest iPhone', 'HelloWorld HelloWorld', 'zebra zebras Zebra',
  '\u00a0non-breaking\u3000ideographic space', 'control \u0007 bell and \u0000 nul', '', ' ', '\n', '   \n  \n',
];

/** Texts with special tokens written in them (parsed when asked). */
export const SPECIAL_TEXTS: readonly string[] = ['<s>Hello</s> world', 'a<start_of_turn>user\nhi<end_of_turn>', '<|begin_of_text|>x<|eot_id|> y<think>z'];

const TOKEN = { normal: 1, unknown: 2, control: 3, userDefined: 4, byte: 6 } as const;

/** Learns `count` merges from the texts (GPT-2's split, byte-level), most frequent pair first, ties by text. */
function learnMerges(count: number): { tokens: string[]; merges: string[] } {
  const split = splitPattern(compilePattern(GPT2_SPLIT_PATTERN), 'Isolated');
  const words = new Map<string, number>();
  for (const t of TEXTS) for (const p of preTokenizeAll(split, [t])) { const w = toByteLevel(p); words.set(w, (words.get(w) ?? 0) + 1); }
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- a word's symbols are its code points
  const seqs = [...words].map(([w, n]) => ({ sym: [...w], n }));
  const tokens: string[] = [];
  const merges: string[] = [];
  for (let k = 0; k < count; k++) {
    const pairs = new Map<string, number>();
    for (const { sym, n } of seqs) for (let i = 0; i + 1 < sym.length; i++) { const key = `${sym[i]} ${sym[i + 1]}`; pairs.set(key, (pairs.get(key) ?? 0) + n); }
    let best = '';
    let bestN = 0;
    for (const [key, n] of pairs) if (n > bestN || (n === bestN && key < best)) { best = key; bestN = n; }
    if (bestN < 2) break;
    const [a, b] = best.split(' ') as [string, string];
    merges.push(best);
    tokens.push(a + b);
    for (const s of seqs) {
      for (let i = 0; i + 1 < s.sym.length; i++) if (s.sym[i] === a && s.sym[i + 1] === b) s.sym.splice(i, 2, a + b);
    }
  }
  return { tokens, merges };
}

/** A byte-level BPE vocabulary: the 256 byte tokens, learnt merges, whole words no merge reaches (` bell`) and specials. */
export function bpeVocabulary(pre: string | null): Map<string, GgufValue> {
  const { tokens: learnt, merges } = learnMerges(300);
  const tokens = [...BYTE_TO_CHAR, ...learnt.filter((t) => !BYTE_TO_CHAR.includes(t))];
  const types: number[] = tokens.map(() => TOKEN.normal);
  for (const w of [' zebra', ' bell']) {
    const t = toByteLevel(w);
    if (!tokens.includes(t)) { tokens.push(t); types.push(TOKEN.normal); }
  }
  const specials: [string, number][] = [['<|begin_of_text|>', TOKEN.control], ['<|end_of_text|>', TOKEN.control], ['<|eot_id|>', TOKEN.control], ['<think>', TOKEN.userDefined]];
  for (const [t, ty] of specials) { tokens.push(t); types.push(ty); }
  const meta = new Map<string, GgufValue>([
    ['tokenizer.ggml.model', gv.str('gpt2')],
    ['tokenizer.ggml.tokens', gv.strings(tokens)],
    ['tokenizer.ggml.token_type', gv.numbers('i32', types)],
    ['tokenizer.ggml.merges', gv.strings(merges)],
    ['tokenizer.ggml.bos_token_id', gv.u32(tokens.indexOf('<|begin_of_text|>'))],
    ['tokenizer.ggml.eos_token_id', gv.u32(tokens.indexOf('<|end_of_text|>'))],
  ]);
  if (pre !== null) meta.set('tokenizer.ggml.pre', gv.str(pre));
  return meta;
}

/**
 * A SentencePiece-style vocabulary as Llama 2, Gemma and Phi-3 files carry it: <unk>, <s>, </s>, the 256
 * byte tokens <0xNN>, then pieces with `▁` for a space and falling scores (some equal, to test ties).
 * `bytes: false` leaves the byte tokens out but for a few (a text needing another byte cannot be encoded).
 */
export function spmVocabulary(o: { spacePrefix?: boolean; bytes?: boolean } = {}): Map<string, GgufValue> {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types: number[] = [TOKEN.unknown, TOKEN.control, TOKEN.control];
  const scores: number[] = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    if (o.bytes === false && b !== 0x0a && b !== 0x20) continue;
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`); types.push(TOKEN.byte); scores.push(0);
  }
  for (const t of ['<start_of_turn>', '<end_of_turn>', '<|endoftext|>']) { tokens.push(t); types.push(TOKEN.control); scores.push(0); }
  // Pieces by frequency in the texts' words (▁-prefixed), and every character seen: enough to merge often.
  const counts = new Map<string, number>();
  const chars = new Set<string>();
  for (const t of TEXTS) {
    const s = `▁${t.replaceAll(' ', '▁')}`;
    for (const c of s) chars.add(c);
    for (let i = 0; i < s.length; i++) for (let n = 2; n <= 6 && i + n <= s.length; n++) {
      const p = s.slice(i, i + n);
      // eslint-disable-next-line @typescript-eslint/no-misused-spread -- comparing code points with UTF-16 units finds astral text
      if ([...p].length === p.length && !/[\n\r\t]/.test(p)) counts.set(p, (counts.get(p) ?? 0) + 1);
    }
  }
  // Keep every prefix of a kept piece so joins can reach it, as a trained vocabulary does.
  const pieces = [...counts].filter(([, n]) => n >= 3).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 400).map(([p]) => p);
  const kept = new Set<string>();
  for (const p of pieces) for (let n = 2; n <= p.length; n++) kept.add(p.slice(0, n));
  // Characters: 你 and 😀 deliberately left out, so they fall back to bytes.
  const single = [...chars].filter((c) => c !== '你' && c !== '😀' && !/[\n\r\t\u0000\u0007]/.test(c)).sort();
  let score = -1;
  single.forEach((c, i) => { tokens.push(c); types.push(TOKEN.normal); scores.push(-1000 - i); });
  [...kept].sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).forEach((p, i) => {
    tokens.push(p); types.push(TOKEN.normal);
    // Pairs of pieces share a score, so ties are decided by position.
    scores.push(score - Math.floor(i / 2) * 0.5);
  });
  score = 0;
  const meta = new Map<string, GgufValue>([
    ['tokenizer.ggml.model', gv.str('llama')],
    ['tokenizer.ggml.tokens', gv.strings(tokens)],
    ['tokenizer.ggml.scores', gv.numbers('f32', scores)],
    ['tokenizer.ggml.token_type', gv.numbers('i32', types)],
    ['tokenizer.ggml.bos_token_id', gv.u32(1)],
    ['tokenizer.ggml.eos_token_id', gv.u32(2)],
    ['tokenizer.ggml.unknown_token_id', gv.u32(0)],
  ]);
  if (o.spacePrefix !== undefined) meta.set('tokenizer.ggml.add_space_prefix', gv.bool(o.spacePrefix));
  return meta;
}

/** A tiny random Llama (1 layer, hidden 32) in F32 with the given tokenizer metadata. */
export function tinyLlamaGguf(tokenizer: ReadonlyMap<string, GgufValue>, name = 'tiny-llama'): Uint8Array {
  const tokens = tokenizer.get('tokenizer.ggml.tokens') as { value: readonly string[] };
  const vocab = tokens.value.length;
  const hidden = 32; const ffn = 64; const heads = 2; const kvHeads = 1; const headDim = 16;
  const rand = mulberry32(7);
  const t = (n: string, dims: number[], norm = false) => {
    const len = dims.reduce((a, b) => a * b, 1);
    const values = Float32Array.from({ length: len }, () => (norm ? 1 : 0) + (rand() * 2 - 1) * 0.1);
    return { name: n, dims, type: 'F32' as const, data: quantize('F32', values) };
  };
  const tensors = [
    t('token_embd.weight', [hidden, vocab]), t('output_norm.weight', [hidden], true), t('output.weight', [hidden, vocab]),
    t('blk.0.attn_norm.weight', [hidden], true), t('blk.0.attn_q.weight', [hidden, heads * headDim]),
    t('blk.0.attn_k.weight', [hidden, kvHeads * headDim]), t('blk.0.attn_v.weight', [hidden, kvHeads * headDim]),
    t('blk.0.attn_output.weight', [heads * headDim, hidden]), t('blk.0.ffn_norm.weight', [hidden], true),
    t('blk.0.ffn_gate.weight', [hidden, ffn]), t('blk.0.ffn_up.weight', [hidden, ffn]), t('blk.0.ffn_down.weight', [ffn, hidden]),
  ];
  const meta = new Map<string, GgufValue>([
    ['general.architecture', gv.str('llama')], ['general.name', gv.str(name)], ['general.file_type', gv.u32(0)],
    ['llama.block_count', gv.u32(1)], ['llama.context_length', gv.u32(256)], ['llama.embedding_length', gv.u32(hidden)],
    ['llama.feed_forward_length', gv.u32(ffn)], ['llama.attention.head_count', gv.u32(heads)],
    ['llama.attention.head_count_kv', gv.u32(kvHeads)], ['llama.rope.dimension_count', gv.u32(headDim)],
    ['llama.attention.layer_norm_rms_epsilon', gv.f32(1e-5)], ['llama.vocab_size', gv.u32(vocab)],
    ...tokenizer,
  ]);
  return writeGguf({ version: 3, metadata: meta, tensors });
}
