/**
 * A tiny model as a GGUF, of any architecture that runs (`arch`, default qwen3: src/model/arch):
 * llama.cpp's tensor names and metadata keys as its converter writes them, random weights from a seed,
 * in any quantized type. Biases and llama3's rope_freqs are F32, as the converters keep 1-D tensors. Projections and the embedding take the chosen type; the 1-D norms stay F32, as
 * llama.cpp's converters keep them. Dims are ne[0] first, so a projection is [in, out].
 */
import { InvalidInput } from '../../errors/index.js';
import { QUANT_TYPES, quantTypeInfo, type QuantType } from '../gguf/ggmlTypes.js';
import { quantize } from '../gguf/quantize.js';
import { gv, type GgufValue } from '../gguf/types.js';
import { writeGguf } from '../gguf/writer.js';
import { writeGgufStream, type StreamGgufTensor } from '../pack/ggufStream.js';
import { mulberry32 } from '../../numerics/random.js';
import { BYTE_TO_CHAR } from '../tokenizer/byteLevel.js';
import { architecture } from '../arch/index.js';
import { llama3RopeFactors } from '../arch/hf.js';
import type { LayerTensor } from '../arch/types.js';

/** The shape and type of a tiny Qwen3; every field has a default. */
export interface TinyQwen3Options {
  /** The architecture (`general.architecture`; default qwen3). */
  readonly arch?: string;
  /** llama: a llama3-style `rope_freqs.weight` (factors 1 to 8 from the wavelengths against `ropeFreqsContext`). */
  readonly ropeFreqs?: boolean;
  /** The original context llama3's factors are computed against (default 8192, Llama 3.1's; a small one scales the fast frequencies too). */
  readonly ropeFreqsContext?: number;
  /**
   * phi3: LongRoPE with this original context (0: none): `rope_factors_long` and `rope_factors_short`
   * (random factors, 1 to 4 and 1 to 1.5), `phi3.rope.scaling.attn_factor` 1.19 and the original context.
   */
  readonly longRope?: number;
  /** Linear rope scaling by this factor (`<arch>.rope.scaling.type = linear`, `rope.scaling.factor`; default 1, none written). */
  readonly ropeScaleLinear?: number;
  /**
   * YaRN rope scaling by this factor (0: none): `<arch>.rope.scaling.type = yarn`, `rope.scaling.factor`
   * and, when `yarnContext` is not 0, `rope.scaling.original_context_length` (else llama.cpp takes the context length).
   */
  readonly yarn?: number;
  readonly yarnContext?: number;
  /** phi3: rope on this many elements of a head (`phi3.rope.dimension_count`; default the head dim, 0 meaning that). */
  readonly ropeDims?: number;
  /** gemma3: the sliding window's positions (default 6). */
  readonly slidingWindow?: number;
  /** The spread of the q/k/v biases of an architecture that has them (default 0.5). */
  readonly biasStd?: number;
  /** qwen3moe: experts per layer (default 4), experts each token uses (default 2) and each expert's FFN width (default 128). */
  readonly experts?: number;
  readonly expertsUsed?: number;
  readonly expertFf?: number;
  /** qwen3moe: the router's spread (the std of its uniform values; default 0.3: the experts' probabilities stand apart). */
  readonly routerStd?: number;
  readonly type?: QuantType;
  readonly layers?: number;
  readonly hidden?: number;
  readonly intermediate?: number;
  readonly heads?: number;
  readonly kvHeads?: number;
  readonly headDim?: number;
  readonly vocab?: number;
  readonly contextLength?: number;
  readonly ropeTheta?: number;
  readonly rmsEps?: number;
  readonly seed?: number;
  /** No output.weight: the lm head is token_embd, as in Qwen3-0.6B. */
  readonly tiedEmbeddings?: boolean;
  readonly version?: 2 | 3;
  /** The spread of the projections and the embedding (the std of their uniform values; default 0.02). */
  readonly std?: number;
  /** Per tensor name, another type than `type` (a mixed file, as llama.cpp's _M files are). */
  readonly types?: Readonly<Record<string, QuantType>>;
}

/** One tensor of the tiny model: its f32 source values and the type it is stored in. */
export interface TinyTensor {
  readonly name: string;
  readonly dims: readonly number[];
  readonly type: QuantType;
  readonly values: Float32Array;
}

/** The options with defaults filled in. */
export type TinyQwen3Config = Required<TinyQwen3Options>;

/** Qwen3-0.6B's shapes (the bench's model: 28 layers, hidden 1024, 16 and 8 heads of 128, ffn 3072, vocab 151936, tied). */
export const QWEN3_0_6B_SHAPE: TinyQwen3Options = {
  layers: 28, hidden: 1024, intermediate: 3072, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936, contextLength: 40960, tiedEmbeddings: true,
};

/** Fills in defaults: 2 layers, hidden 256, 4 heads of 64 (2 kv heads), ffn 512, vocab 320, Q8_0, tied. */
export function tinyQwen3Config(o: TinyQwen3Options = {}): TinyQwen3Config {
  return {
    arch: o.arch ?? 'qwen3', ropeFreqs: o.ropeFreqs ?? false, ropeFreqsContext: o.ropeFreqsContext ?? 8192, ropeScaleLinear: o.ropeScaleLinear ?? 1, longRope: o.longRope ?? 0, yarn: o.yarn ?? 0, yarnContext: o.yarnContext ?? 0, ropeDims: o.ropeDims ?? 0, slidingWindow: o.slidingWindow ?? 6, biasStd: o.biasStd ?? 0.5,
    experts: o.experts ?? 4, expertsUsed: o.expertsUsed ?? 2, expertFf: o.expertFf ?? 128, routerStd: o.routerStd ?? 0.3,
    type: o.type ?? 'Q8_0', layers: o.layers ?? 2, hidden: o.hidden ?? 256, intermediate: o.intermediate ?? 512,
    heads: o.heads ?? 4, kvHeads: o.kvHeads ?? 2, headDim: o.headDim ?? 64, vocab: o.vocab ?? 320,
    contextLength: o.contextLength ?? 4096, ropeTheta: o.ropeTheta ?? 1_000_000, rmsEps: o.rmsEps ?? 1e-6,
    seed: o.seed ?? 1, tiedEmbeddings: o.tiedEmbeddings ?? true, version: o.version ?? 3,
    std: o.std ?? 0.02, types: o.types ?? {},
  };
}


function check(c: TinyQwen3Config): void {
  architecture(c.arch, '/arch');
  if (c.ropeDims !== 0 && (c.ropeDims % 2 !== 0 || c.ropeDims > c.headDim)) throw new InvalidInput('/ropeDims', `an even count up to the head dim, not ${c.ropeDims}`);
  if (!QUANT_TYPES.includes(c.type)) throw new InvalidInput('/type', `unknown type ${c.type}`);
  const block = quantTypeInfo(c.type).blockSize;
  for (const [k, v] of Object.entries(c)) {
    if (k !== 'seed' && k !== 'ropeDims' && k !== 'longRope' && k !== 'yarn' && k !== 'yarnContext' && typeof v === 'number' && !(v > 0)) throw new InvalidInput(`/${k}`, `${k} must be positive, got ${v}`);
  }
  for (const [name, t] of Object.entries(c.types)) {
    if (!QUANT_TYPES.includes(t)) throw new InvalidInput(`/types/${name}`, `unknown type ${t}`);
    const k = name.includes('ffn_down') ? c.intermediate : name.includes('attn_output') ? c.heads * c.headDim : c.hidden;
    if (k % quantTypeInfo(t).blockSize !== 0) {
      throw new InvalidInput(`/types/${name}`, `${name} cannot be ${t}: its rows do not hold whole ${t} blocks`);
    }
  }
  // Every projection's ne[0] is one of these, so each must hold whole blocks.
  for (const [k, v] of [['hidden', c.hidden], ['intermediate', c.intermediate], ['heads * headDim', c.heads * c.headDim], ...(c.arch === 'qwen3moe' ? [['expertFf', c.expertFf] as const] : [])] as const) {
    if (v % block !== 0) throw new InvalidInput(`/${k}`, `${k} = ${v} is not a multiple of the ${c.type} block size ${block}`);
  }
  if (c.heads % c.kvHeads !== 0) throw new InvalidInput('/kvHeads', `${c.heads} heads do not split into ${c.kvHeads} kv groups`);
}

/** The tensors of a tiny Qwen3, with their f32 source values (before quantization). */
export function tinyQwen3Tensors(opts: TinyQwen3Options = {}): TinyTensor[] {
  const c = tinyQwen3Config(opts);
  check(c);
  const rand = mulberry32(c.seed);
  // Uniform in [-a, a] with the variance of N(0, std^2): enough for tests, and bounded for f16 scales.
  const matrix = (name: string, dims: [number, number], std: number): TinyTensor => {
    const a = std * Math.sqrt(3);
    // A loop rather than Float32Array.from with a map function: the same values, several times faster.
    const values = new Float32Array(dims[0] * dims[1]);
    for (let i = 0; i < values.length; i++) values[i] = (rand() * 2 - 1) * a;
    return { name, dims, type: c.types[name] ?? c.type, values };
  };
  const norm = (name: string, n: number): TinyTensor =>
    ({ name, dims: [n], type: 'F32', values: Float32Array.from({ length: n }, () => 1 + (rand() * 2 - 1) * 0.1) });
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const out: TinyTensor[] = [matrix('token_embd.weight', [c.hidden, c.vocab], c.std)];
  if (c.arch !== 'qwen3') return [...out, ...otherTensors(c, matrix, norm, rand)];
  for (let l = 0; l < c.layers; l++) {
    const p = `blk.${l}.`;
    out.push(
      norm(`${p}attn_norm.weight`, c.hidden),
      matrix(`${p}attn_q.weight`, [c.hidden, q], c.std),
      matrix(`${p}attn_k.weight`, [c.hidden, kv], c.std),
      matrix(`${p}attn_v.weight`, [c.hidden, kv], c.std),
      matrix(`${p}attn_output.weight`, [q, c.hidden], c.std),
      norm(`${p}attn_q_norm.weight`, c.headDim),
      norm(`${p}attn_k_norm.weight`, c.headDim),
      norm(`${p}ffn_norm.weight`, c.hidden),
      matrix(`${p}ffn_gate.weight`, [c.hidden, c.intermediate], c.std),
      matrix(`${p}ffn_up.weight`, [c.hidden, c.intermediate], c.std),
      matrix(`${p}ffn_down.weight`, [c.intermediate, c.hidden], c.std),
    );
  }
  out.push(norm('output_norm.weight', c.hidden));
  if (!c.tiedEmbeddings) out.push(matrix('output.weight', [c.hidden, c.vocab], c.std));
  return out;
}

/** The rope dims of a tiny model (its head dim unless ropeDims is given). */
const ropeDimsOf = (c: TinyQwen3Config): number => (c.ropeDims === 0 ? c.headDim : c.ropeDims);

/**
 * llama3's frequency factors for rope's `dims / 2` frequencies (the shape of Llama 3.1's rope_scaling:
 * factor 8, low and high frequency factors 1 and 4, original context 8192): 1 for short wavelengths,
 * 8 for long ones, blended between.
 */
export function llama3FreqFactors(dims: number, theta: number, orig = 8192): Float32Array {
  return Float32Array.from(llama3RopeFactors(dims, theta, { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalContext: orig }));
}

/** The tensors after token_embd of a tiny model of an architecture other than qwen3, in its descriptor's order. */
function otherTensors(c: TinyQwen3Config, matrix: (name: string, dims: [number, number], std: number) => TinyTensor, norm: (name: string, n: number) => TinyTensor, rand: () => number): TinyTensor[] {
  const a = architecture(c.arch);
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const bias = (name: string, n: number): TinyTensor => {
    const r = c.biasStd * Math.sqrt(3);
    return { name, dims: [n], type: 'F32', values: Float32Array.from({ length: n }, () => (rand() * 2 - 1) * r) };
  };
  const experts = (name: string, dims: [number, number, number]): TinyTensor => {
    const r = c.std * Math.sqrt(3);
    const values = new Float32Array(dims[0] * dims[1] * dims[2]);
    for (let i = 0; i < values.length; i++) values[i] = (rand() * 2 - 1) * r;
    return { name, dims, type: c.types[name] ?? c.type, values };
  };
  const one = (p: string, t: LayerTensor): TinyTensor => {
    switch (t) {
      case 'attn_norm': case 'ffn_norm': case 'post_attention_norm': case 'post_ffw_norm': return norm(`${p}${t}.weight`, c.hidden);
      case 'attn_q_norm': case 'attn_k_norm': return norm(`${p}${t}.weight`, c.headDim);
      case 'attn_q': return matrix(`${p}${t}.weight`, [c.hidden, q], c.std);
      case 'attn_k': case 'attn_v': return matrix(`${p}${t}.weight`, [c.hidden, kv], c.std);
      case 'attn_qkv': return matrix(`${p}${t}.weight`, [c.hidden, q + 2 * kv], c.std);
      case 'attn_output': return matrix(`${p}${t}.weight`, [q, c.hidden], c.std);
      case 'attn_q.bias': return bias(`${p}${t}`, q);
      case 'attn_k.bias': case 'attn_v.bias': return bias(`${p}${t}`, kv);
      case 'ffn_gate': return matrix(`${p}${t}.weight`, [c.hidden, c.intermediate], c.std);
      case 'ffn_up': return matrix(`${p}${t}.weight`, [c.hidden, a.fusedGateUp ? 2 * c.intermediate : c.intermediate], c.std);
      case 'ffn_down': return matrix(`${p}${t}.weight`, [c.intermediate, c.hidden], c.std);
      // The router is F32 whatever the file's type (llama.cpp's converter and quantizer keep it so), with
      // its own spread (routerStd); the experts are [in, out, experts].
      case 'ffn_gate_inp': return { name: `${p}${t}.weight`, dims: [c.hidden, c.experts], type: 'F32', values: Float32Array.from({ length: c.hidden * c.experts }, () => (rand() * 2 - 1) * c.routerStd * Math.sqrt(3)) };
      case 'ffn_gate_exps': case 'ffn_up_exps': return experts(`${p}${t}.weight`, [c.hidden, c.expertFf, c.experts]);
      case 'ffn_down_exps': return experts(`${p}${t}.weight`, [c.expertFf, c.hidden, c.experts]);
    }
  };
  const out: TinyTensor[] = [];
  if (c.ropeFreqs) {
    if (!a.ropeFreqs) throw new InvalidInput('/ropeFreqs', `the ${a.name} graph reads no rope_freqs`);
    out.push({ name: 'rope_freqs.weight', dims: [ropeDimsOf(c) / 2], type: 'F32', values: llama3FreqFactors(ropeDimsOf(c), c.ropeTheta, c.ropeFreqsContext) });
  }
  if (c.longRope !== 0) {
    if (a.longRope !== true) throw new InvalidInput('/longRope', `the ${a.name} graph reads no LongRoPE factors`);
    const factors = (name: string, top: number): TinyTensor => ({ name, dims: [ropeDimsOf(c) / 2], type: 'F32', values: Float32Array.from({ length: ropeDimsOf(c) / 2 }, () => 1 + rand() * (top - 1)) });
    out.push(factors('rope_factors_long.weight', 4), factors('rope_factors_short.weight', 1.5));
  }
  for (let l = 0; l < c.layers; l++) for (const t of a.layer) out.push(one(`blk.${l}.`, t));
  out.push(norm('output_norm.weight', c.hidden));
  if (!c.tiedEmbeddings) out.push(matrix('output.weight', [c.hidden, c.vocab], c.std));
  return out;
}

/** llama.cpp's llama_ftype of a file whose every matrix has this type (the K-quants as their _S mixes). */
const FILE_TYPE: Record<QuantType, number> = { F32: 0, F16: 1, Q4_0: 2, Q4_1: 3, Q8_0: 7, Q4_K: 14, Q5_K: 16, Q6_K: 18, BF16: 32 };

/** Special tokens at the end of the vocabulary, last first: the eos is the last id. */
const SPECIALS = ['<|im_end|>', '<|endoftext|>', '<|im_start|>'];

/**
 * The vocabulary of a tiny Qwen3: GPT-2's 256 byte tokens first (so any text encodes), then merged
 * pairs of lowercase letters and space, then the ChatML specials; a vocab too small for the bytes
 * gets placeholder tokens `t<i>` instead (texts then cannot be encoded, only ids run).
 */
function vocabulary(vocab: number): { tokens: string[]; types: number[]; merges: string[] } {
  const specials = SPECIALS.slice(0, Math.min(SPECIALS.length, vocab)).reverse();
  const plain = vocab - specials.length;
  const tokens: string[] = [];
  const merges: string[] = [];
  if (plain >= 256) {
    tokens.push(...BYTE_TO_CHAR);
    const letters = ' etaoinshrdlucmfwypvbgkjqxz'.split('').map((ch) => BYTE_TO_CHAR[ch.charCodeAt(0)]!);
    for (let i = 0; tokens.length < plain && i < letters.length ** 2; i++) {
      const a = letters[i % letters.length]!;
      const b = letters[Math.floor(i / letters.length)]!;
      tokens.push(a + b);
      merges.push(`${a} ${b}`);
    }
    for (let i = tokens.length; tokens.length < plain; i++) tokens.push(`<t${i}>`);
  } else {
    for (let i = 0; i < plain; i++) tokens.push(`t${i}`);
  }
  tokens.push(...specials);
  // llama.cpp's token types: 1 NORMAL, 3 CONTROL.
  return { tokens, types: tokens.map((_, i) => (i >= plain ? 3 : 1)), merges };
}

/** The tokenizer.ggml.pre a tiny model of each architecture carries (its vocabulary is byte-level BPE whatever the architecture). */
const PRE: Readonly<Record<string, string>> = { qwen3: 'qwen2', qwen3moe: 'qwen2', qwen2: 'qwen2', llama: 'llama-bpe' };

/** The metadata of a tiny model, as llama.cpp's converter names it (`<arch>.` keys). */
export function tinyQwen3Metadata(opts: TinyQwen3Options = {}): Map<string, GgufValue> {
  const c = tinyQwen3Config(opts);
  const { tokens, types, merges } = vocabulary(c.vocab);
  const a = c.arch;
  const extra: [string, GgufValue][] = [];
  if (a !== 'qwen3') extra.push([`${a}.rope.dimension_count`, gv.u32(ropeDimsOf(c))]);
  if (c.yarn !== 0) {
    if (c.ropeScaleLinear !== 1) throw new InvalidInput('/yarn', 'one rope scaling type: yarn or linear');
    extra.push([`${a}.rope.scaling.type`, gv.str('yarn')], [`${a}.rope.scaling.factor`, gv.f32(c.yarn)]);
    if (c.yarnContext !== 0) extra.push([`${a}.rope.scaling.original_context_length`, gv.u32(c.yarnContext)]);
  }
  if (c.ropeScaleLinear !== 1) extra.push([`${a}.rope.scaling.type`, gv.str('linear')], [`${a}.rope.scaling.factor`, gv.f32(c.ropeScaleLinear)]);
  // llama.cpp before it switched Phi-3's sliding window off reads this key; a window past any test's context changes nothing.
  // MiniCPM's scales as its converter writes them (scale_emb 12, scale_depth 1.4; logit_scale is hidden / dim_model_base,
  // here with dim_model_base twice the hidden size, so that the tiny logits spread rather than shrink).
  if (a === 'minicpm') extra.push(['minicpm.embedding_scale', gv.f32(12)], ['minicpm.residual_scale', gv.f32(1.4 / Math.sqrt(c.layers))], ['minicpm.logit_scale', gv.f32(0.5)]);
  // Gemma 3's sliding window: a window shorter than the tests' positions and a period of 2 (layer 0
  // local, layer 1 global), so that both kinds of layer and the window's mask are exercised.
  if (a === 'gemma3') extra.push(['gemma3.attention.sliding_window', gv.u32(c.slidingWindow)], ['gemma3.attention.sliding_window_pattern', gv.u32(2)], ['gemma3.rope.freq_base_swa', gv.f32(10_000)]);
  if (a === 'qwen3moe') {
    extra.push(['qwen3moe.expert_count', gv.u32(c.experts)], ['qwen3moe.expert_used_count', gv.u32(c.expertsUsed)], ['qwen3moe.expert_feed_forward_length', gv.u32(c.expertFf)]);
  }
  if (a === 'phi3') {
    extra.push(['phi3.attention.sliding_window', gv.u32(c.contextLength)], ['phi3.rope.scaling.original_context_length', gv.u32(c.longRope === 0 ? c.contextLength : c.longRope)]);
    if (c.longRope !== 0) extra.push(['phi3.rope.scaling.attn_factor', gv.f32(1.19)]);
  }
  return new Map<string, GgufValue>([
    ['general.architecture', gv.str(a)],
    // Not "phi3" in the name: llama.cpp then sets attributes of SentencePiece tokens (<s>, </s>) this vocabulary has not.
    ['general.name', gv.str(`tiny-${a === 'phi3' ? 'phi' : a}-${c.type}`)],
    ['general.file_type', gv.u32(FILE_TYPE[c.type])],
    [`${a}.block_count`, gv.u32(c.layers)],
    [`${a}.context_length`, gv.u32(c.contextLength)],
    [`${a}.embedding_length`, gv.u32(c.hidden)],
    [`${a}.feed_forward_length`, gv.u32(c.intermediate)],
    [`${a}.attention.head_count`, gv.u32(c.heads)],
    [`${a}.attention.head_count_kv`, gv.u32(c.kvHeads)],
    [`${a}.attention.key_length`, gv.u32(c.headDim)],
    [`${a}.attention.value_length`, gv.u32(c.headDim)],
    [`${a}.rope.freq_base`, gv.f32(c.ropeTheta)],
    [`${a}.attention.layer_norm_rms_epsilon`, gv.f32(c.rmsEps)],
    ...extra,
    ['tokenizer.ggml.model', gv.str('gpt2')],
    ['tokenizer.ggml.pre', gv.str(PRE[a] ?? 'default')],
    ['tokenizer.ggml.tokens', gv.strings(tokens)],
    ['tokenizer.ggml.token_type', gv.numbers('i32', types)],
    ['tokenizer.ggml.merges', gv.strings(merges)],
    ['tokenizer.ggml.eos_token_id', gv.u32(c.vocab - 1)],
    ['tokenizer.ggml.padding_token_id', gv.u32(c.vocab - 1)],
    ['tokenizer.ggml.add_bos_token', gv.bool(false)],
  ]);
}

/** A tiny Qwen3 GGUF file with random weights in `type`. */
export function tinyQwen3Gguf(opts: TinyQwen3Options = {}): Uint8Array {
  const c = tinyQwen3Config(opts);
  const tensors = tinyQwen3Tensors(c).map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: quantize(t.type, t.values) }));
  return writeGguf({ version: c.version, metadata: tinyQwen3Metadata(c), tensors });
}

/**
 * The same model streamed to `path` a few rows at a time (writeGgufStream), for shapes too large to
 * hold as f32 (Qwen3-0.6B's, QWEN3_0_6B_SHAPE). The values are those of tinyQwen3Tensors, in its order.
 */
export function writeTinyQwen3(path: string, opts: TinyQwen3Options = {}): void {
  const c = tinyQwen3Config(opts);
  check(c);
  if (c.arch !== 'qwen3') throw new InvalidInput('/arch', `the streamed writer writes qwen3 only, not ${c.arch}: tinyQwen3Gguf writes the others`);
  const rand = mulberry32(c.seed);
  const matrix = (name: string, dims: [number, number]): StreamGgufTensor => ({
    name, dims, type: c.types[name] ?? c.type,
    fill: (emit) => {
      const a = c.std * Math.sqrt(3);
      for (let r = 0; r < dims[1]; r += 64) {
        const v = new Float32Array(Math.min(64, dims[1] - r) * dims[0]);
        for (let i = 0; i < v.length; i++) v[i] = (rand() * 2 - 1) * a;
        emit(v);
      }
    },
  });
  const norm = (name: string, n: number): StreamGgufTensor => ({
    name, dims: [n], type: 'F32', fill: (emit) => emit(Float32Array.from({ length: n }, () => 1 + (rand() * 2 - 1) * 0.1)),
  });
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const tensors: StreamGgufTensor[] = [matrix('token_embd.weight', [c.hidden, c.vocab])];
  for (let l = 0; l < c.layers; l++) {
    const p = `blk.${l}.`;
    tensors.push(
      norm(`${p}attn_norm.weight`, c.hidden), matrix(`${p}attn_q.weight`, [c.hidden, q]), matrix(`${p}attn_k.weight`, [c.hidden, kv]),
      matrix(`${p}attn_v.weight`, [c.hidden, kv]), matrix(`${p}attn_output.weight`, [q, c.hidden]),
      norm(`${p}attn_q_norm.weight`, c.headDim), norm(`${p}attn_k_norm.weight`, c.headDim), norm(`${p}ffn_norm.weight`, c.hidden),
      matrix(`${p}ffn_gate.weight`, [c.hidden, c.intermediate]), matrix(`${p}ffn_up.weight`, [c.hidden, c.intermediate]),
      matrix(`${p}ffn_down.weight`, [c.intermediate, c.hidden]),
    );
  }
  tensors.push(norm('output_norm.weight', c.hidden));
  if (!c.tiedEmbeddings) tensors.push(matrix('output.weight', [c.hidden, c.vocab]));
  writeGgufStream(path, tinyQwen3Metadata(c), tensors, c.version);
}
