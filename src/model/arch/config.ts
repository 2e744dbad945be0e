/**
 * One model config for every architecture: the dims, the norms' epsilon, rope's base, and the graph
 * options (types.ts) resolved from the architecture's descriptor and the file. Read from a GGUF's
 * metadata (`<arch>.*` keys, as llama.cpp reads them) with InvalidInput naming the key at fault.
 */
import { InvalidInput } from '../../errors/index.js';
import { unhonouredScales } from '../gguf/scaleGuard.js';
import type { GgufFile } from '../gguf/types.js';
import { numericValue } from '../gguf/types.js';
import { architectureOf, metadataNumber, metadataPositive, modelDims } from '../pack/config.js';
import { architecture } from './index.js';
import type { ArchDescriptor, GraphOptions, MoeOptions, ScaleKey } from './types.js';

/** Everything the programs need to know of a model. */
export interface ModelConfig {
  /** The architecture (its descriptor's name, `general.architecture`). */
  readonly arch: string;
  /** How its graph differs from the shared one. */
  readonly options: GraphOptions;
  readonly layers: number;
  readonly hidden: number;
  readonly intermediate: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** The embedding's rows (the logits' length). */
  readonly vocab: number;
  readonly ropeTheta: number;
  readonly rmsEps: number;
  /** The context the model was trained for; a generation's own context (`ctx`) may not exceed it. */
  readonly contextLength: number;
  /** The lm head is the embedding (no separate output weight). */
  readonly tied: boolean;
  /** End-of-sequence ids the file declares (the tokenizer may add end-of-turn ids). */
  readonly eosIds: readonly number[];
  /**
   * The file stores each norm weight as w where the model multiplies by 1 + w (a Gemma 3 directory in
   * Hugging Face's layout). The programs take what they multiply by, so the loader binds 1 + w
   * (src/model/qwen3/normShift.ts); absent: the norms are stored as they are used.
   */
  readonly normWeightsPlusOne?: boolean;
}

/** The graph options of a descriptor with nothing read from a file (full rotary, no rope scaling). */
export function defaultOptions(a: ArchDescriptor, headDim: number): GraphOptions {
  return {
    rope: a.rope, ropeDims: headDim, ropeFreqScale: 1, ropeFreqs: false, ropeAttnFactor: 1, qkNorm: a.qkNorm, qkvBias: a.qkvBias,
    fusedQkv: a.fusedQkv, fusedGateUp: a.fusedGateUp, activation: a.activation, postNorms: a.postNorms, embeddingScale: 1, residualScale: 1, logitScale: 1,
  };
}

/** llama.cpp's YaRN defaults (llama-hparams.h, llama-context.cpp): the ramp's rotation bounds and, for a YaRN file, an ext factor of 1. */
export const YARN_DEFAULTS = { betaFast: 32, betaSlow: 1, extFactor: 1 } as const;

/**
 * The rope scaling a file declares, as llama.cpp reads it: `rope.scaling.type` (default linear; none,
 * linear and yarn run), the factor from `rope.scaling.factor` or the older `rope.scale_linear` (the
 * frequency scale is 1 / it, 1 when absent or 0, and 1 for none), and for YaRN the original context
 * (`rope.scaling.original_context_length`, default `contextLength`) with llama.cpp's defaults for the
 * rest. llama.cpp reads `rope.scaling.yarn_*` only for other architectures (grok, mistral3, deepseek2);
 * such a key with a value other than its default is refused here rather than dropped.
 */
function ropeScaling(f: GgufFile, p: string, contextLength: number): Pick<GraphOptions, 'ropeFreqScale' | 'ropeYarn'> {
  const m = f.metadata;
  const typeValue = m.get(`${p}rope.scaling.type`);
  if (typeValue !== undefined && typeValue.type !== 'string') throw new InvalidInput(`/metadata/${p}rope.scaling.type`, `is a ${typeValue.type}, not a string`);
  const type = typeValue?.value ?? 'linear';
  if (type !== 'none' && type !== 'linear' && type !== 'yarn') {
    throw new InvalidInput(`/metadata/${p}rope.scaling.type`, `rope scaling ${JSON.stringify(type)} is not done by this graph (none, linear and yarn are)`);
  }
  const key = m.get(`${p}rope.scaling.factor`) !== undefined ? `${p}rope.scaling.factor` : `${p}rope.scale_linear`;
  const factor = metadataNumber(m, key, 0, p.slice(0, -1));
  if (!(factor >= 0) || !Number.isFinite(factor)) throw new InvalidInput(`/metadata/${key}`, `a positive number, not ${factor}`);
  const yarnKeys = { yarn_beta_fast: YARN_DEFAULTS.betaFast, yarn_beta_slow: YARN_DEFAULTS.betaSlow, yarn_ext_factor: -1, yarn_attn_factor: 1, yarn_log_multiplier: 0 };
  for (const [k, neutral] of Object.entries(yarnKeys)) {
    const v = m.get(`${p}rope.scaling.${k}`);
    if (v !== undefined && metadataNumber(m, `${p}rope.scaling.${k}`, neutral, p.slice(0, -1)) !== neutral) {
      throw new InvalidInput(`/metadata/${p}rope.scaling.${k}`, `llama.cpp does not read ${k} for ${p.slice(0, -1)} (it keeps its default ${neutral}), and neither does this graph`);
    }
  }
  if (type === 'none') return { ropeFreqScale: 1 };
  const ropeFreqScale = factor === 0 ? 1 : 1 / factor;
  if (type === 'linear') return { ropeFreqScale };
  const origContext = metadataPositive(m, `${p}rope.scaling.original_context_length`, contextLength, p.slice(0, -1));
  return { ropeFreqScale, ropeYarn: { origContext, ...YARN_DEFAULTS } };
}

/** The sliding-window layers a file declares for an architecture that has them (types.ts), else nothing. */
function slidingWindow(f: GgufFile, a: ArchDescriptor, p: string): { slidingWindow?: GraphOptions['slidingWindow'] } {
  const m = f.metadata;
  const key = `${p}attention.sliding_window`;
  if (!a.slidingWindow || m.get(key) === undefined) return {};
  const window = metadataNumber(m, key, undefined, a.name);
  if (window === 0) return {};
  if (!(Number.isSafeInteger(window) && window > 0)) throw new InvalidInput(`/metadata/${key}`, `a whole number of positions, not ${window}`);
  const periodKey = `${p}attention.sliding_window_pattern`;
  const pv = m.get(periodKey);
  if (pv?.type === 'array') throw new InvalidInput(`/metadata/${periodKey}`, 'a per-layer pattern is not read; a period is');
  const period = metadataNumber(m, periodKey, a.swaPeriod ?? 0, a.name);
  if (!(Number.isSafeInteger(period) && period >= 0)) throw new InvalidInput(`/metadata/${periodKey}`, `a whole number, not ${period}`);
  return { slidingWindow: { window, period, ropeBase: metadataNumber(m, `${p}rope.freq_base_swa`, 10_000, a.name) } };
}

/** The mixture of experts a file declares for an architecture that has one (types.ts), else nothing. */
function moe(f: GgufFile, a: ArchDescriptor, p: string): { moe?: MoeOptions } {
  if (a.moe === undefined) return {};
  const m = f.metadata;
  // Each required: a missing or non-positive one is InvalidInput at /metadata/<arch>.<key>.
  const whole = (k: string): number => metadataPositive(m, `${p}${k}`, undefined, a.name);
  const experts = whole('expert_count');
  const used = whole('expert_used_count');
  if (used > experts) throw new InvalidInput(`/metadata/${p}expert_used_count`, `${used} experts used of ${experts}`);
  return { moe: { experts, used, ff: whole('expert_feed_forward_length'), normalize: a.moe.normalize } };
}

/** The config of a GGUF of an architecture that runs; refuses another one (listing those that run), inconsistent dims or an unhonoured scale. */
export function modelConfigFromGguf(f: GgufFile): ModelConfig {
  const a = architecture(architectureOf(f.metadata));
  const p = `${a.name}.`;
  const d = modelDims(f.metadata, a.name);
  const embd = f.tensor('token_embd.weight');
  if (embd === undefined || embd.dims.length !== 2 || embd.dims[0] !== d.hidden) {
    throw new InvalidInput('/tensors/token_embd.weight', `the GGUF has no [hidden ${d.hidden}, vocab] token_embd.weight`);
  }
  const dropped = unhonouredScales(f.metadata, a.scales);
  if (dropped.length > 0) {
    throw new InvalidInput(`/metadata/${dropped[0]}`, `the ${a.name} graph does not honour ${dropped.join(', ')} (it honours ${a.scales.length === 0 ? 'no declared scale' : a.scales.join(', ')}); running it would give wrong logits`);
  }
  const longRope = f.tensor('rope_factors_long.weight') !== undefined || f.tensor('rope_factors_short.weight') !== undefined;
  if (longRope && a.longRope !== true) throw new InvalidInput('/tensors/rope_factors_long.weight', `LongRoPE factors are not read by the ${a.name} graph`);
  const m = f.metadata;
  const num = (k: string, fallback: number) => metadataNumber(m, k, fallback, a.name);
  const ropeDims = a.partialRotary ? metadataPositive(m, `${p}rope.dimension_count`, d.headDim, a.name) : d.headDim;
  if (ropeDims > d.headDim || ropeDims % 2 !== 0) {
    throw new InvalidInput(`/metadata/${p}rope.dimension_count`, `rope on ${ropeDims} elements of a head of ${d.headDim}: an even count, at most the head dim`);
  }
  const positiveNumber = (k: string, fallback: number): number => {
    const v = num(k, fallback);
    if (!(v > 0) || !Number.isFinite(v)) throw new InvalidInput(`/metadata/${k}`, `a positive number, not ${v}`);
    return v;
  };
  const defaults = a.scaleDefaults?.(d) ?? {};
  const scale = (k: ScaleKey): number => {
    // A scale the graph has but no file declares (Gemma's embedding times sqrt(hidden)).
    if (!a.scales.includes(k)) return defaults[k] ?? 1;
    const v = num(`${p}${k}`, defaults[k] ?? 1);
    if (!(v > 0) || !Number.isFinite(v)) throw new InvalidInput(`/metadata/${p}${k}`, `a positive number, not ${v}`);
    return v;
  };
  const eos = numericValue(m.get('tokenizer.ggml.eos_token_id'));
  const contextLength = num(`${p}context_length`, a.defaults.contextLength);
  return {
    arch: a.name,
    options: {
      ...defaultOptions(a, d.headDim), ropeDims, ...ropeScaling(f, p, contextLength),
      ropeFreqs: a.ropeFreqs && f.tensor('rope_freqs.weight') !== undefined,
      ropeAttnFactor: positiveNumber(`${p}rope.scaling.attn_factor`, 1),
      ...(longRope ? { longRopeContext: metadataPositive(m, `${p}rope.scaling.original_context_length`, num(`${p}context_length`, a.defaults.contextLength), a.name) } : {}),
      embeddingScale: scale('embedding_scale'), residualScale: scale('residual_scale'), logitScale: scale('logit_scale'),
      ...slidingWindow(f, a, p),
      ...moe(f, a, p),
    },
    layers: d.layers, hidden: d.hidden, intermediate: d.intermediate,
    heads: d.qDim / d.headDim, kvHeads: d.kvDim / d.headDim, headDim: d.headDim,
    vocab: embd.dims[1]!,
    ropeTheta: num(`${p}rope.freq_base`, a.defaults.ropeTheta),
    rmsEps: num(`${p}attention.layer_norm_rms_epsilon`, a.defaults.rmsEps),
    contextLength,
    tied: f.tensor('output.weight') === undefined,
    eosIds: eos === undefined ? [] : [eos],
  };
}
