/**
 * A model as a Hugging Face model directory names it (what `gguf pack` writes and a Q4NX directory is
 * read back from): the tensor names of each architecture, the config.json of a ModelConfig, and the
 * ModelConfig of such a config.json. The keys are those each family's own config.json uses
 * (docs/Q4NX.md, "config.json of each architecture").
 *
 * Hugging Face's q and k rows rotate (i, i + D/2): the neox pairing. llama.cpp's converter permutes
 * Llama's and MiniCPM's q and k rows so that the normal pairing (2i, 2i + 1) applies; `gguf pack`
 * undoes that permutation (qkRowOf), so a directory of either runs with neox rope, as its config.json
 * implies. The other architectures are neox in both.
 */
import { InvalidInput } from '../../errors/index.js';
import { isRecord } from '../../ir/pointer.js';
import { shortestF32 } from '../pack/config.js';
import { defaultOptions, YARN_DEFAULTS, type ModelConfig } from './config.js';
import { ARCHITECTURES, architecture } from './index.js';
import type { GraphOptions, LayerTensor } from './types.js';

/** The architectures `gguf pack` converts (and a Q4NX directory's config.json may name). */
export const HF_ARCHITECTURES: readonly string[] = ['qwen3', 'llama', 'qwen2', 'phi3', 'minicpm', 'gemma3'];

/** The HF class each architecture's config.json lists under `architectures`. */
const HF_CLASS: Readonly<Record<string, string>> = {
  qwen3: 'Qwen3ForCausalLM', llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', phi3: 'Phi3ForCausalLM',
  minicpm: 'MiniCPMForCausalLM', gemma3: 'Gemma3ForCausalLM',
};

/** Architectures whose GGUF q and k rows llama.cpp permuted from HF's order (normal rope). */
export const PERMUTED_QK: readonly string[] = ['llama', 'minicpm'];

/** A layer tensor's HF name after `model.layers.<l>.` (with `.weight` or `.bias`). */
export function hfLayerName(arch: string, t: LayerTensor): string {
  const a = architecture(arch);
  switch (t) {
    case 'attn_norm': return 'input_layernorm.weight';
    case 'attn_q': return 'self_attn.q_proj.weight';
    case 'attn_k': return 'self_attn.k_proj.weight';
    case 'attn_v': return 'self_attn.v_proj.weight';
    case 'attn_qkv': return 'self_attn.qkv_proj.weight';
    case 'attn_output': return 'self_attn.o_proj.weight';
    case 'attn_q_norm': return 'self_attn.q_norm.weight';
    case 'attn_k_norm': return 'self_attn.k_norm.weight';
    case 'attn_q.bias': return 'self_attn.q_proj.bias';
    case 'attn_k.bias': return 'self_attn.k_proj.bias';
    case 'attn_v.bias': return 'self_attn.v_proj.bias';
    // Gemma's post-attention norm is its own tensor; its FFN norm is the "pre-feedforward" one.
    case 'ffn_norm': return a.postNorms ? 'pre_feedforward_layernorm.weight' : 'post_attention_layernorm.weight';
    case 'post_attention_norm': return 'post_attention_layernorm.weight';
    case 'post_ffw_norm': return 'post_feedforward_layernorm.weight';
    case 'ffn_gate': return 'mlp.gate_proj.weight';
    case 'ffn_up': return a.fusedGateUp ? 'mlp.gate_up_proj.weight' : 'mlp.up_proj.weight';
    case 'ffn_down': return 'mlp.down_proj.weight';
    // A mixture of experts (not packed: HF keeps one tensor per expert, these name the stacked ones).
    case 'ffn_gate_inp': return 'mlp.gate.weight';
    case 'ffn_gate_exps': return 'mlp.experts.gate_proj.weight';
    case 'ffn_up_exps': return 'mlp.experts.up_proj.weight';
    case 'ffn_down_exps': return 'mlp.experts.down_proj.weight';
  }
}

/** The HF name of a weight arg (llama.cpp's name without `.weight`: `blk.3.attn_q`, `token_embd`, ...), or undefined. */
export function hfTensorName(arch: string, arg: string): string | undefined {
  if (arg === 'token_embd') return 'model.embed_tokens.weight';
  if (arg === 'output_norm') return 'model.norm.weight';
  if (arg === 'output') return 'lm_head.weight';
  const m = /^blk\.(\d+)\.(.+)$/.exec(arg);
  if (m === null) return undefined;
  const t = m[2] as LayerTensor;
  return architecture(arch).layer.includes(t) ? `model.layers.${m[1]}.${hfLayerName(arch, t)}` : undefined;
}

/**
 * The GGUF row that HF row `r` of a q or k projection is, for an architecture whose rows llama.cpp
 * permuted (PERMUTED_QK): within each head of `headDim` rows, HF row s * D/2 + i is GGUF row 2i + s.
 */
export function qkRowOf(headDim: number): (r: number) => number {
  const half = headDim / 2;
  return (r) => {
    const h = Math.floor(r / headDim);
    const j = r % headDim;
    return h * headDim + 2 * (j % half) + (j >= half ? 1 : 0);
  };
}

/** Llama 3's rope_scaling parameters (transformers' `llama3` rope type). */
export interface Llama3Rope { readonly factor: number; readonly lowFreqFactor: number; readonly highFreqFactor: number; readonly originalContext: number }

/**
 * The frequency factors llama.cpp's converter writes as `rope_freqs.weight` for llama3 rope scaling, one
 * per rope frequency (`dims / 2`): 1 where the wavelength is under original / high, the factor where it
 * is over original / low, and between them 1 / ((1 - s) / factor + s), s = (original / wavelength - low) / (high - low).
 */
export function llama3RopeFactors(dims: number, theta: number, r: Llama3Rope): number[] {
  return Array.from({ length: dims / 2 }, (_, i) => {
    const wavelen = (2 * Math.PI) / theta ** ((-2 * i) / dims);
    if (wavelen < r.originalContext / r.highFreqFactor) return 1;
    if (wavelen > r.originalContext / r.lowFreqFactor) return r.factor;
    const smooth = (r.originalContext / wavelen - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
    return 1 / ((1 - smooth) / r.factor + smooth);
  });
}

/** The factors agree to 1e-5 relative (a GGUF's f32 factors against those recomputed from parameters). */
const sameFactors = (a: ArrayLike<number>, b: ArrayLike<number>): boolean =>
  a.length === b.length && Array.from(a).every((x, i) => Math.abs(x - b[i]!) <= 1e-5 * Math.abs(x));

/**
 * The llama3 parameters that give these `rope_freqs` factors (as `llama3RopeFactors` computes them), or
 * null when none do. The factors fix the scale factor (the largest) and, through the blended ones, only
 * original / (high - low) and low / (high - low): the low frequency factor is taken as 1 (every Llama
 * 3.x release's), which fixes the other two. Needs two blended factors; the result is checked by
 * computing the factors again.
 */
export function llama3RopeFromFactors(factors: ArrayLike<number>, dims: number, theta: number): Llama3Rope | null {
  const f = Array.from(factors);
  const factor = shortestF32(Math.fround(Math.max(...f)));
  if (!(factor > 1)) return null;
  // s = (1 / f_i - 1 / factor) / (1 - 1 / factor) = a x_i - b, x_i = 1 / wavelength_i, for the blended factors.
  const pts: [number, number][] = [];
  f.forEach((v, i) => {
    if (v > 1 * (1 + 1e-6) && v < factor * (1 - 1e-6)) pts.push([theta ** ((-2 * i) / dims) / (2 * Math.PI), (1 / v - 1 / factor) / (1 - 1 / factor)]);
  });
  if (pts.length < 2) return null;
  const n = pts.length;
  const mx = pts.reduce((t, [x]) => t + x, 0) / n;
  const my = pts.reduce((t, [, y]) => t + y, 0) / n;
  const a = pts.reduce((t, [x, y]) => t + (x - mx) * (y - my), 0) / pts.reduce((t, [x]) => t + (x - mx) ** 2, 0);
  const b = a * mx - my;
  if (!(a > 0 && b > 0)) return null;
  const raw: Llama3Rope = { factor, lowFreqFactor: 1, highFreqFactor: 1 + 1 / b, originalContext: a / b };
  // The rounder values (a whole original context, a 6-digit high factor) when they give the same factors.
  const round: Llama3Rope = { ...raw, highFreqFactor: Number(raw.highFreqFactor.toPrecision(6)), originalContext: Math.round(raw.originalContext) };
  for (const r of [round, raw]) if (sameFactors(f, llama3RopeFactors(dims, theta, r))) return r;
  return null;
}

/** A GGUF's rope factor tensors that a config.json carries as numbers (gguf pack reads them from the file). */
export interface RopeFactorTensors { readonly freqs?: ArrayLike<number>; readonly long?: ArrayLike<number>; readonly short?: ArrayLike<number> }

/** Why a config cannot be written as an HF config.json, or null when it can. */
export function unpackable(c: ModelConfig): string | null {
  const o = c.options;
  if (!HF_ARCHITECTURES.includes(c.arch)) return `architecture ${c.arch} cannot be packed`;
  if (o.ropeFreqs && (o.ropeYarn !== undefined || o.ropeFreqScale !== 1 || o.longRopeContext !== undefined)) return `the ${c.arch} GGUF has rope_freqs.weight and another rope scaling, which one config.json rope_scaling cannot say`;
  if (o.longRopeContext !== undefined && (o.ropeYarn !== undefined || o.ropeFreqScale !== 1)) return `the ${c.arch} GGUF has LongRoPE factors and another rope scaling, which one config.json rope_scaling cannot say`;
  // YaRN's and LongRoPE's rope_scaling carry an attention factor; nothing else does.
  if (o.ropeAttnFactor !== 1 && o.ropeYarn === undefined && o.longRopeContext === undefined) return `the ${c.arch} GGUF declares rope.scaling.attn_factor ${o.ropeAttnFactor} without YaRN or LongRoPE, which a config.json cannot carry`;
  return null;
}

/** A factor tensor's values as the shortest decimals that read back as the same f32. */
const f32List = (a: ArrayLike<number>): number[] => Array.from(a, (x) => shortestF32(Math.fround(x)));

/**
 * HF's rope_scaling of a config's rope scaling (`factors`: the GGUF's rope factor tensors), or null for
 * none: linear, yarn (`factor`, `original_max_position_embeddings`, `attention_factor` when the file
 * declares one: transformers' whole mscale), llama3 (the parameters that give the file's rope_freqs),
 * longrope (`long_factor`, `short_factor`, `original_max_position_embeddings`, `attention_factor`).
 */
function hfRopeScaling(c: ModelConfig, factors: RopeFactorTensors): Record<string, unknown> | null {
  const o = c.options;
  const half = o.ropeDims / 2;
  const tensor = (name: string, v: ArrayLike<number> | undefined): ArrayLike<number> => {
    if (v === undefined || v.length !== half) throw new InvalidInput(`/tensors/${name}.weight`, `gguf pack needs the ${half} factors of ${name}.weight to write config.json's rope_scaling`);
    return v;
  };
  const factor = shortestF32(Math.fround(1 / o.ropeFreqScale));
  if (o.ropeYarn !== undefined) {
    const out: Record<string, unknown> = { rope_type: 'yarn', type: 'yarn', factor, original_max_position_embeddings: o.ropeYarn.origContext };
    if (o.ropeAttnFactor !== 1) out['attention_factor'] = o.ropeAttnFactor * (1 + 0.1 * Math.log(1 / o.ropeFreqScale));
    return out;
  }
  if (o.longRopeContext !== undefined) {
    return {
      rope_type: 'longrope', type: 'longrope', long_factor: f32List(tensor('rope_factors_long', factors.long)), short_factor: f32List(tensor('rope_factors_short', factors.short)),
      original_max_position_embeddings: o.longRopeContext, attention_factor: o.ropeAttnFactor,
    };
  }
  if (o.ropeFreqs) {
    const r = llama3RopeFromFactors(tensor('rope_freqs', factors.freqs), o.ropeDims, c.ropeTheta);
    if (r === null) throw new InvalidInput('/tensors/rope_freqs.weight', 'these rope frequency factors are not llama3 rope scaling\'s for any parameters (with a low frequency factor of 1), so config.json cannot say them');
    return { rope_type: 'llama3', factor: r.factor, low_freq_factor: r.lowFreqFactor, high_freq_factor: r.highFreqFactor, original_max_position_embeddings: r.originalContext };
  }
  if (o.ropeFreqScale !== 1) return { rope_type: 'linear', type: 'linear', factor };
  return null;
}

/** The HF config.json of a model config (no q4nx_source: the caller adds it); bos is the file's, when it has one; `factors` the GGUF's rope factor tensors. */
export function hfConfig(c: ModelConfig, bos: number | undefined, factors: RopeFactorTensors = {}): Record<string, unknown> {
  const why = unpackable(c);
  if (why !== null) throw new InvalidInput('/metadata/general.architecture', why);
  const a = architecture(c.arch);
  const o = c.options;
  const out: Record<string, unknown> = {
    architectures: [HF_CLASS[c.arch]],
    model_type: a.hfModelType,
    hidden_size: c.hidden,
    intermediate_size: c.intermediate,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: c.kvHeads,
    head_dim: c.headDim,
    vocab_size: c.vocab,
    max_position_embeddings: c.contextLength,
    rope_theta: c.ropeTheta,
    rms_norm_eps: c.rmsEps,
  };
  if (a.activation === 'gelu_tanh') out['hidden_activation'] = 'gelu_pytorch_tanh';
  else out['hidden_act'] = 'silu';
  if (c.arch === 'llama' || c.arch === 'minicpm') { out['attention_bias'] = false; out['mlp_bias'] = false; }
  if (c.arch === 'qwen2') out['use_sliding_window'] = false;
  if (o.ropeDims !== c.headDim) out['partial_rotary_factor'] = o.ropeDims / c.headDim;
  if (c.arch === 'phi3') out['original_max_position_embeddings'] = o.longRopeContext ?? c.contextLength;
  if (c.arch === 'minicpm') {
    // MiniCPM's config: the embedding times scale_emb, each branch times scale_depth / sqrt(layers),
    // the logits times dim_model_base / hidden (llama.cpp's logit_scale is hidden / dim_model_base).
    out['scale_emb'] = o.embeddingScale;
    out['scale_depth'] = o.residualScale * Math.sqrt(c.layers);
    out['dim_model_base'] = c.hidden / o.logitScale;
  }
  if (c.arch === 'gemma3') {
    out['query_pre_attn_scalar'] = c.headDim;
    out['sliding_window'] = o.slidingWindow?.window ?? null;
    if (o.slidingWindow !== undefined) {
      out['sliding_window_pattern'] = o.slidingWindow.period;
      out['rope_local_base_freq'] = o.slidingWindow.ropeBase;
    }
    // llama.cpp's converter stored each Gemma norm weight as 1 + w; the packed tensors keep that.
    out['q4nx_norm_weights'] = '1+w';
  }
  out['tie_word_embeddings'] = c.tied;
  out['torch_dtype'] = 'bfloat16';
  if (bos !== undefined) out['bos_token_id'] = bos;
  if (c.eosIds.length > 0) out['eos_token_id'] = c.eosIds[0];
  const rope = hfRopeScaling(c, factors);
  if (rope !== null) out['rope_scaling'] = rope;
  return out;
}

/** `c[key]` (or `fallback`) as a positive whole number; InvalidInput at `source/key`. */
export function whole(c: Record<string, unknown>, key: string, source: string, fallback?: number): number {
  const v = c[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new InvalidInput(`${source}/${key}`, v === undefined ? 'config.json does not give it' : `a positive whole number, not ${JSON.stringify(v)}`);
  }
  return v;
}

/** `c[key]` (or `fallback`) as a positive finite number; InvalidInput at `source/key`. */
export function positiveNumber(c: Record<string, unknown>, key: string, source: string, fallback?: number): number {
  const v = c[key] ?? fallback;
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) {
    throw new InvalidInput(`${source}/${key}`, v === undefined ? 'config.json does not give it' : `a positive number, not ${JSON.stringify(v)}`);
  }
  return v;
}

/** Gemma's sliding_window_pattern: a whole number, 0 meaning every layer local (as the GGUF's period). */
function period(c: Record<string, unknown>, source: string, fallback: number): number {
  const v = c['sliding_window_pattern'] ?? fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new InvalidInput(`${source}/sliding_window_pattern`, `a whole number, not ${JSON.stringify(v)}`);
  return v;
}

/** `rs[key]`: `n` positive finite numbers; InvalidInput at `at/key`. */
function factorList(rs: Record<string, unknown>, key: string, at: string, n: number): number[] {
  const v = rs[key];
  if (!Array.isArray(v) || v.length !== n || !v.every((x) => typeof x === 'number' && x > 0 && Number.isFinite(x))) {
    throw new InvalidInput(`${at}/${key}`, `${n} positive numbers (one per rope frequency), not ${Array.isArray(v) ? `${v.length} values` : JSON.stringify(v)}`);
  }
  return v as number[];
}

/**
 * The rope scaling of an HF config.json's `rope_scaling` (`rope_type`, or the older `type`), as the
 * graph options a GGUF of the same model gives:
 * - none (absent, null, `default`);
 * - `linear`: `factor`;
 * - `yarn`: `factor`, `original_max_position_embeddings` (default the config's, else `contextLength`),
 *   `beta_fast` 32, `beta_slow` 1, `attention_factor` (default 1 + 0.1 ln factor, as transformers' get_mscale).
 *   Transformers' YaRN is ggml's rope_yarn with an ext factor of 1, its attention factor being ggml's
 *   whole mscale: ropeAttnFactor is it over ggml's own 1 + 0.1 ln factor. DeepSeek's
 *   `mscale`/`mscale_all_dim` and `truncate: false` are refused;
 * - `llama3`: `factor`, `low_freq_factor`, `high_freq_factor`, `original_max_position_embeddings`: the
 *   frequency factors llama.cpp's converter would write as rope_freqs (llama3RopeFactors);
 * - `longrope` (or `su`): `long_factor` and `short_factor`, the long ones past
 *   `original_max_position_embeddings` (in rope_scaling, else the config's), and `attention_factor`
 *   (default transformers': sqrt(1 + ln(s) / ln(original)) for s = max_position_embeddings / original > 1, else 1).
 */
export function ropeScalingFromHf(json: Record<string, unknown>, source: string, contextLength: number, ropeDims: number, theta: number): Pick<GraphOptions, 'ropeFreqScale' | 'ropeYarn' | 'ropeAttnFactor' | 'ropeFactorValues' | 'longRopeContext'> {
  const rs = json['rope_scaling'];
  if (rs === undefined || rs === null) return { ropeFreqScale: 1, ropeAttnFactor: 1 };
  if (!isRecord(rs)) throw new InvalidInput(`${source}/rope_scaling`, 'an object or null');
  const type = rs['rope_type'] ?? rs['type'];
  const at = `${source}/rope_scaling`;
  const topOrig = typeof json['original_max_position_embeddings'] === 'number' ? json['original_max_position_embeddings'] : undefined;
  if (type === 'default' || type === 'none') return { ropeFreqScale: 1, ropeAttnFactor: 1 };
  if (type === 'linear') return { ropeFreqScale: 1 / positiveNumber(rs, 'factor', at), ropeAttnFactor: 1 };
  if (type === 'llama3') {
    const r: Llama3Rope = {
      factor: positiveNumber(rs, 'factor', at), lowFreqFactor: positiveNumber(rs, 'low_freq_factor', at), highFreqFactor: positiveNumber(rs, 'high_freq_factor', at),
      originalContext: positiveNumber(rs, 'original_max_position_embeddings', at),
    };
    if (!(r.highFreqFactor > r.lowFreqFactor)) throw new InvalidInput(`${at}/high_freq_factor`, `above low_freq_factor ${r.lowFreqFactor}, not ${r.highFreqFactor}`);
    return { ropeFreqScale: 1, ropeAttnFactor: 1, ropeFactorValues: { short: llama3RopeFactors(ropeDims, theta, r) } };
  }
  if (type === 'longrope' || type === 'su') {
    const orig = whole(rs, 'original_max_position_embeddings', at, topOrig);
    const s = contextLength / orig;
    const attention = positiveNumber(rs, 'attention_factor', at, s <= 1 ? 1 : Math.sqrt(1 + Math.log(s) / Math.log(orig)));
    return {
      ropeFreqScale: 1, ropeAttnFactor: attention, longRopeContext: orig,
      ropeFactorValues: { long: factorList(rs, 'long_factor', at, ropeDims / 2), short: factorList(rs, 'short_factor', at, ropeDims / 2) },
    };
  }
  if (type !== 'yarn') throw new InvalidInput(`${at}/rope_type`, `rope scaling ${JSON.stringify(type)} is not done by this graph (linear, yarn, llama3 and longrope are)`);
  for (const k of ['mscale', 'mscale_all_dim']) {
    if (rs[k] !== undefined && rs[k] !== null) throw new InvalidInput(`${at}/${k}`, 'DeepSeek\'s YaRN mscale is not done by this graph');
  }
  if (rs['truncate'] === false) throw new InvalidInput(`${at}/truncate`, 'YaRN without rounding the correction range is not done by this graph');
  const factor = positiveNumber(rs, 'factor', at);
  const origContext = whole(rs, 'original_max_position_embeddings', at, topOrig ?? contextLength);
  const own = 1 + 0.1 * Math.log(factor);
  const attention = positiveNumber(rs, 'attention_factor', at, factor <= 1 ? 1 : own);
  return {
    ropeFreqScale: 1 / factor,
    ropeYarn: { origContext, betaFast: positiveNumber(rs, 'beta_fast', at, YARN_DEFAULTS.betaFast), betaSlow: positiveNumber(rs, 'beta_slow', at, YARN_DEFAULTS.betaSlow), extFactor: 1 },
    ropeAttnFactor: attention / own,
  };
}

/** The config of an HF config.json (parsed) of any architecture gguf pack writes; `source` names the file in errors. */
export function modelConfigFromHf(json: unknown, source: string): ModelConfig {
  if (!isRecord(json)) throw new InvalidInput(source, 'config.json is not a JSON object');
  const type = json['model_type'];
  const a = ARCHITECTURES.find((x) => x.hfModelType === type && HF_ARCHITECTURES.includes(x.name));
  if (a === undefined) {
    const known = ARCHITECTURES.filter((x) => HF_ARCHITECTURES.includes(x.name)).map((x) => x.hfModelType);
    throw new InvalidInput(`${source}/model_type`, `model_type ${JSON.stringify(type)} is not one a model directory runs (${known.join(', ')})`);
  }
  const heads = whole(json, 'num_attention_heads', source);
  const hidden = whole(json, 'hidden_size', source);
  const kvHeads = whole(json, 'num_key_value_heads', source, heads);
  if (heads % kvHeads !== 0) throw new InvalidInput(`${source}/num_key_value_heads`, `${heads} heads do not split into ${kvHeads} kv groups`);
  const layers = whole(json, 'num_hidden_layers', source);
  const headDim = whole(json, 'head_dim', source, Math.floor(hidden / heads));
  const eos = json['eos_token_id'];
  const eosIds = (Array.isArray(eos) ? eos : eos === undefined || eos === null ? [] : [eos]).filter((x): x is number => Number.isSafeInteger(x));
  const partial = json['partial_rotary_factor'] ?? 1;
  if (typeof partial !== 'number' || !(partial > 0 && partial <= 1)) throw new InvalidInput(`${source}/partial_rotary_factor`, `a number in (0, 1], not ${JSON.stringify(partial)}`);
  const ropeDims = Math.round(headDim * partial);
  if (ropeDims % 2 !== 0) throw new InvalidInput(`${source}/partial_rotary_factor`, `rope on ${ropeDims} of ${headDim} elements: not an even count`);
  // HF's rows pair (i, i + D/2) whatever the family: see the file comment.
  const contextLength = whole(json, 'max_position_embeddings', source, a.defaults.contextLength);
  const ropeTheta = positiveNumber(json, 'rope_theta', source, a.defaults.ropeTheta);
  const options = { ...defaultOptions(a, headDim), rope: 'neox' as const, ropeDims, ...ropeScalingFromHf(json, source, contextLength, ropeDims, ropeTheta) };
  let scales = {};
  let window = {};
  let normPlusOne = false;
  if (a.name === 'minicpm') {
    scales = {
      embeddingScale: positiveNumber(json, 'scale_emb', source),
      residualScale: positiveNumber(json, 'scale_depth', source) / Math.sqrt(layers),
      logitScale: hidden / positiveNumber(json, 'dim_model_base', source),
    };
  }
  if (a.name === 'gemma3') {
    // Hugging Face's Gemma 3 stores each norm weight as w (GemmaRMSNorm multiplies by 1 + w); gguf pack
    // keeps llama.cpp's stored 1 + w and says so. Without the key a directory means what HF's layout means.
    const marker = json['q4nx_norm_weights'];
    if (marker !== undefined && marker !== '1+w' && marker !== 'w') {
      throw new InvalidInput(`${source}/q4nx_norm_weights`, `"1+w" (norms stored as used, gguf pack's) or "w" (Hugging Face's layout, also meant when the key is absent), not ${JSON.stringify(marker)}`);
    }
    normPlusOne = marker !== '1+w';
    const qpas = json['query_pre_attn_scalar'];
    if (qpas !== undefined && qpas !== headDim) throw new InvalidInput(`${source}/query_pre_attn_scalar`, `${JSON.stringify(qpas)}: the graph scales scores by 1 / sqrt(head_dim ${headDim}) only`);
    scales = { embeddingScale: Math.sqrt(hidden) };
    const w = json['sliding_window'];
    if (w !== undefined && w !== null && w !== 0) {
      window = {
        slidingWindow: {
          window: whole(json, 'sliding_window', source),
          period: period(json, source, a.swaPeriod ?? 6),
          ropeBase: positiveNumber(json, 'rope_local_base_freq', source, 10_000),
        },
      };
    }
  }
  return {
    arch: a.name, options: { ...options, ...scales, ...window },
    layers, hidden, intermediate: whole(json, 'intermediate_size', source),
    heads, kvHeads, headDim,
    vocab: whole(json, 'vocab_size', source),
    ropeTheta,
    rmsEps: positiveNumber(json, 'rms_norm_eps', source, a.defaults.rmsEps),
    contextLength,
    tied: json['tie_word_embeddings'] === true,
    eosIds,
    ...(normPlusOne ? { normWeightsPlusOne: true } : {}),
  };
}
