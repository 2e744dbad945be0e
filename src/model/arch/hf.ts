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
import { defaultOptions, type ModelConfig } from './config.js';
import { ARCHITECTURES, architecture } from './index.js';
import type { LayerTensor } from './types.js';

/** The architectures `gguf pack` converts (and a Q4NX directory's config.json may name). */
const HF_ARCHITECTURES: readonly string[] = ['qwen3', 'llama', 'qwen2', 'phi3', 'minicpm', 'gemma3'];

/** The HF class each architecture's config.json lists under `architectures`. */
const HF_CLASS: Readonly<Record<string, string>> = {
  qwen3: 'Qwen3ForCausalLM', llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', phi3: 'Phi3ForCausalLM',
  minicpm: 'MiniCPMForCausalLM', gemma3: 'Gemma3ForCausalLM',
};

/** Architectures whose GGUF q and k rows llama.cpp permuted from HF's order (normal rope). */
export const PERMUTED_QK: readonly string[] = ['llama', 'minicpm'];

/** A layer tensor's HF name after `model.layers.<l>.` (with `.weight` or `.bias`). */
function hfLayerName(arch: string, t: LayerTensor): string {
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

/** Why a config cannot be written as an HF config.json, or null when it can. */
export function unpackable(c: ModelConfig): string | null {
  if (!HF_ARCHITECTURES.includes(c.arch)) return `architecture ${c.arch} cannot be packed`;
  if (c.options.ropeFreqs) return `the ${c.arch} GGUF has rope_freqs.weight (llama3 rope frequency factors), which gguf pack does not carry yet`;
  if (c.options.longRopeContext !== undefined) return `the ${c.arch} GGUF has LongRoPE factors (rope_factors_long/short), which gguf pack does not carry yet`;
  if (c.options.ropeAttnFactor !== 1) return `the ${c.arch} GGUF declares rope.scaling.attn_factor ${c.options.ropeAttnFactor}, which gguf pack does not carry yet`;
  return null;
}

/** The HF config.json of a model config (no q4nx_source: the caller adds it); bos is the file's, when it has one. */
export function hfConfig(c: ModelConfig, bos: number | undefined): Record<string, unknown> {
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
  if (c.arch === 'phi3') out['original_max_position_embeddings'] = c.contextLength;
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
  if (o.ropeFreqScale !== 1) {
    const factor = shortestF32(Math.fround(1 / o.ropeFreqScale));
    out['rope_scaling'] = { rope_type: 'linear', type: 'linear', factor };
  }
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

/** 1, or 1 / the factor of a linear rope_scaling; InvalidInput for another rope type. */
function ropeFreqScale(json: Record<string, unknown>, source: string): number {
  const rs = json['rope_scaling'];
  if (rs === undefined || rs === null) return 1;
  if (!isRecord(rs)) throw new InvalidInput(`${source}/rope_scaling`, 'an object or null');
  const type = rs['rope_type'] ?? rs['type'];
  if (type === 'default' || type === 'none') return 1;
  if (type !== 'linear') throw new InvalidInput(`${source}/rope_scaling/rope_type`, `rope scaling ${JSON.stringify(type)} is not done by this graph (linear is)`);
  return 1 / positiveNumber(rs, 'factor', `${source}/rope_scaling`);
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
  const options = { ...defaultOptions(a, headDim), rope: 'neox' as const, ropeDims, ropeFreqScale: ropeFreqScale(json, source) };
  let scales = {};
  let window = {};
  if (a.name === 'minicpm') {
    scales = {
      embeddingScale: positiveNumber(json, 'scale_emb', source),
      residualScale: positiveNumber(json, 'scale_depth', source) / Math.sqrt(layers),
      logitScale: hidden / positiveNumber(json, 'dim_model_base', source),
    };
  }
  if (a.name === 'gemma3') {
    if (json['q4nx_norm_weights'] !== '1+w') {
      throw new InvalidInput(`${source}/q4nx_norm_weights`, 'a Gemma 3 directory runs only as gguf pack writes it (norm weights stored as 1 + w, q4nx_norm_weights "1+w"); a published checkpoint stores w');
    }
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
    ropeTheta: positiveNumber(json, 'rope_theta', source, a.defaults.ropeTheta),
    rmsEps: positiveNumber(json, 'rms_norm_eps', source, a.defaults.rmsEps),
    contextLength: whole(json, 'max_position_embeddings', source, a.defaults.contextLength),
    tied: json['tie_word_embeddings'] === true,
    eosIds,
  };
}
