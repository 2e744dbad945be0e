/**
 * A Qwen3 model's shape, from a GGUF's metadata (`qwen3.*`) or a Hugging Face config.json (a model
 * directory from `gguf pack`, or a published one). Both give the same record, so the programs are
 * built from one description whatever the file.
 */
import { InvalidInput } from '../../errors/index.js';
import { isRecord } from '../../ir/pointer.js';
import type { GgufFile } from '../gguf/types.js';
import { numericValue } from '../gguf/types.js';
import { architectureOf, qwen3Dims, shortestF32 } from '../pack/config.js';

/** Everything the programs need to know of a dense Qwen3. */
export interface Qwen3Config {
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
}

/** Qwen3-0.6B, 1.7B and 4B as their config.json files give them (the bench and tests build these shapes). */
export const QWEN3_SHAPES = {
  '0.6b': { layers: 28, hidden: 1024, intermediate: 3072, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
  '1.7b': { layers: 28, hidden: 2048, intermediate: 6144, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
  '4b': { layers: 36, hidden: 2560, intermediate: 9728, heads: 32, kvHeads: 8, headDim: 128, vocab: 151936, tied: true },
} as const;

/** The config of a qwen3 GGUF; refuses another architecture or inconsistent dims (InvalidInput at the key). */
export function configFromGguf(f: GgufFile): Qwen3Config {
  const arch = architectureOf(f.metadata);
  if (arch !== 'qwen3') throw new InvalidInput('/metadata/general.architecture', `architecture ${JSON.stringify(arch)} is not qwen3: only dense Qwen3 GGUFs run as models`);
  const d = qwen3Dims(f.metadata);
  const embd = f.tensor('token_embd.weight');
  if (embd === undefined || embd.dims.length !== 2 || embd.dims[0] !== d.hidden) {
    throw new InvalidInput('/tensors/token_embd.weight', `the GGUF has no [hidden ${d.hidden}, vocab] token_embd.weight`);
  }
  const m = f.metadata;
  const num = (k: string, fallback: number) => {
    const v = numericValue(m.get(k));
    return v === undefined ? fallback : m.get(k)?.type === 'f32' ? shortestF32(v) : v;
  };
  const eos = numericValue(m.get('tokenizer.ggml.eos_token_id'));
  return {
    layers: d.layers, hidden: d.hidden, intermediate: d.intermediate,
    heads: d.qDim / d.headDim, kvHeads: d.kvDim / d.headDim, headDim: d.headDim,
    vocab: embd.dims[1]!,
    ropeTheta: num('qwen3.rope.freq_base', 1_000_000),
    rmsEps: num('qwen3.attention.layer_norm_rms_epsilon', 1e-6),
    contextLength: num('qwen3.context_length', 40960),
    tied: f.tensor('output.weight') === undefined,
    eosIds: eos === undefined ? [] : [eos],
  };
}

function whole(c: Record<string, unknown>, key: string, source: string, fallback?: number): number {
  const v = c[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new InvalidInput(`${source}/${key}`, v === undefined ? 'config.json does not give it' : `a positive whole number, not ${JSON.stringify(v)}`);
  }
  return v;
}

function positiveNumber(c: Record<string, unknown>, key: string, source: string, fallback: number): number {
  const v = c[key] ?? fallback;
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) throw new InvalidInput(`${source}/${key}`, `a positive number, not ${JSON.stringify(v)}`);
  return v;
}

/** The config of a Hugging Face config.json (already parsed); `source` names the file in errors. */
export function configFromJson(json: unknown, source: string): Qwen3Config {
  if (!isRecord(json)) throw new InvalidInput(source, 'config.json is not a JSON object');
  const type = json['model_type'];
  if (type !== 'qwen3') throw new InvalidInput(`${source}/model_type`, `model_type ${JSON.stringify(type)} is not qwen3`);
  const heads = whole(json, 'num_attention_heads', source);
  const hidden = whole(json, 'hidden_size', source);
  const kvHeads = whole(json, 'num_key_value_heads', source, heads);
  if (heads % kvHeads !== 0) throw new InvalidInput(`${source}/num_key_value_heads`, `${heads} heads do not split into ${kvHeads} kv groups`);
  const eos = json['eos_token_id'];
  const eosIds = (Array.isArray(eos) ? eos : eos === undefined || eos === null ? [] : [eos]).filter((x): x is number => Number.isSafeInteger(x));
  return {
    layers: whole(json, 'num_hidden_layers', source), hidden, intermediate: whole(json, 'intermediate_size', source),
    heads, kvHeads, headDim: whole(json, 'head_dim', source, Math.floor(hidden / heads)),
    vocab: whole(json, 'vocab_size', source),
    ropeTheta: positiveNumber(json, 'rope_theta', source, 1_000_000),
    rmsEps: positiveNumber(json, 'rms_norm_eps', source, 1e-6),
    contextLength: whole(json, 'max_position_embeddings', source, 40960),
    tied: json['tie_word_embeddings'] === true,
    eosIds,
  };
}
