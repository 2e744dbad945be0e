/**
 * A model's shape, from a GGUF's metadata (`<arch>.*`, any architecture of src/model/arch) or a
 * Qwen3's Hugging Face config.json (a model directory from `gguf pack`, or a published one). Both give the same record, so the programs are
 * built from one description whatever the file.
 */
import { InvalidInput } from '../../errors/index.js';
import { isRecord } from '../../ir/pointer.js';
import type { GgufFile } from '../gguf/types.js';
import { defaultOptions, modelConfigFromGguf, type ModelConfig } from '../arch/config.js';
import { QWEN3 } from '../arch/qwen3.js';
import { modelConfigFromHf, positiveNumber, ropeScalingFromHf, whole } from '../arch/hf.js';

/**
 * Everything the programs need to know of a model: the one config of every architecture
 * (src/model/arch/config.ts), under the name it had when only Qwen3 ran.
 */
export type Qwen3Config = ModelConfig;

/** Qwen3-0.6B, 1.7B and 4B as their config.json files give them (the bench and tests build these shapes). */
export const QWEN3_SHAPES = {
  '0.6b': { layers: 28, hidden: 1024, intermediate: 3072, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
  '1.7b': { layers: 28, hidden: 2048, intermediate: 6144, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
  '4b': { layers: 36, hidden: 2560, intermediate: 9728, heads: 32, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
} as const;

/** The config of a GGUF of any architecture that runs (src/model/arch); InvalidInput at the key for another one or inconsistent dims. */
export function configFromGguf(f: GgufFile): Qwen3Config {
  return modelConfigFromGguf(f);
}

/** The config of a Hugging Face config.json (already parsed) of any architecture gguf pack writes; `source` names the file in errors. */
export function configFromJson(json: unknown, source: string): Qwen3Config {
  if (!isRecord(json)) throw new InvalidInput(source, 'config.json is not a JSON object');
  const type = json['model_type'];
  // The other families gguf pack writes (src/model/arch/hf.ts); qwen3 is read as it always was.
  if (type !== 'qwen3') return modelConfigFromHf(json, source);
  const heads = whole(json, 'num_attention_heads', source);
  const hidden = whole(json, 'hidden_size', source);
  const kvHeads = whole(json, 'num_key_value_heads', source, heads);
  if (heads % kvHeads !== 0) throw new InvalidInput(`${source}/num_key_value_heads`, `${heads} heads do not split into ${kvHeads} kv groups`);
  const eos = json['eos_token_id'];
  const eosIds = (Array.isArray(eos) ? eos : eos === undefined || eos === null ? [] : [eos]).filter((x): x is number => Number.isSafeInteger(x));
  const headDim = whole(json, 'head_dim', source, Math.floor(hidden / heads));
  const contextLength = whole(json, 'max_position_embeddings', source, 40960);
  const ropeTheta = positiveNumber(json, 'rope_theta', source, 1_000_000);
  return {
    // rope_scaling (a YaRN Qwen3's, as gguf pack writes it from qwen3.rope.scaling.*) is read as for the other families.
    arch: 'qwen3', options: { ...defaultOptions(QWEN3, headDim), ...ropeScalingFromHf(json, source, contextLength, headDim, ropeTheta) },
    layers: whole(json, 'num_hidden_layers', source), hidden, intermediate: whole(json, 'intermediate_size', source),
    heads, kvHeads, headDim,
    vocab: whole(json, 'vocab_size', source),
    ropeTheta,
    rmsEps: positiveNumber(json, 'rms_norm_eps', source, 1e-6),
    contextLength,
    tied: json['tie_word_embeddings'] === true,
    eosIds,
  };
}
