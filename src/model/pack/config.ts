/**
 * The Hugging Face config.json of a packed qwen3, derived from the GGUF's metadata alone (so the cache
 * can re-derive it on every hit without reading a weight). The keys are those E5/E6 write and FLM's
 * runtime reads (/work/shared/Q4NX_LAYOUT.md, "config.json and header metadata").
 */
import { InvalidInput } from '../../errors/index.js';
import { quote } from '../../io/escape.js';
import { numericValue, type GgufFile, type GgufMetadata } from '../gguf/types.js';
import type { PlanDims } from './plan.js';

/** The architectures `gguf pack` converts. */
export const PACK_ARCHITECTURES: readonly string[] = ['qwen3', 'llama', 'qwen2', 'phi3', 'minicpm', 'gemma3'];

/** The architecture a GGUF declares (general.architecture), or '' when it declares none. */
export function architectureOf(metadata: GgufMetadata): string {
  const v = metadata.get('general.architecture');
  return v?.type === 'string' ? v.value : '';
}

/** Refuses a GGUF whose architecture the packer does not convert. */
export function requirePackable(metadata: GgufMetadata): string {
  const arch = architectureOf(metadata);
  if (!PACK_ARCHITECTURES.includes(arch)) {
    throw new InvalidInput('/metadata/general.architecture', `architecture ${arch === '' ? '(none)' : quote(arch)} cannot be packed: gguf pack converts ${PACK_ARCHITECTURES.join(', ')} only`);
  }
  return arch;
}

/** The shortest decimal that reads back as the same f32, so an f32 1e-6 prints as 1e-6, not 9.99999997e-7. */
export function shortestF32(x: number): number {
  if (!Number.isFinite(x) || Math.fround(x) !== x) return x;
  for (let p = 1; p <= 9; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

/** A number the metadata holds at `key` (an f32 as its shortest decimal), else `fallback` when absent; InvalidInput naming the key. */
export function metadataNumber(m: GgufMetadata, key: string, fallback?: number, arch = 'qwen3'): number {
  const v = m.get(key);
  const n = numericValue(v);
  if (n === undefined) {
    if (fallback !== undefined && v === undefined) return fallback;
    throw new InvalidInput(`/metadata/${key}`, v === undefined ? `the ${arch} GGUF does not declare it` : `is a ${v.type}, not a number`);
  }
  return v?.type === 'f32' ? shortestF32(n) : n;
}

const num = (m: GgufMetadata, key: string, fallback?: number): number => metadataNumber(m, key, fallback);

/** A positive whole number the metadata holds at `key` (or `fallback` when absent); InvalidInput naming the key. */
export function metadataPositive(m: GgufMetadata, key: string, fallback?: number, arch = 'qwen3'): number {
  const n = metadataNumber(m, key, fallback, arch);
  if (!(Number.isSafeInteger(n) && n > 0)) throw new InvalidInput(`/metadata/${key}`, `${n} is not a positive integer`);
  return n;
}

const positive = (m: GgufMetadata, key: string, fallback?: number): number => metadataPositive(m, key, fallback);

/** The dimensions a GGUF of `arch` declares under its `<arch>.` keys, checked for consistency. */
export function modelDims(m: GgufMetadata, arch: string): PlanDims {
  const p = `${arch}.`;
  const pos = (key: string, fallback?: number) => metadataPositive(m, key, fallback, arch);
  const hidden = pos(`${p}embedding_length`);
  const heads = pos(`${p}attention.head_count`);
  const kvHeads = pos(`${p}attention.head_count_kv`, heads);
  const headDim = pos(`${p}attention.key_length`, hidden / heads);
  if (heads % kvHeads !== 0) throw new InvalidInput(`/metadata/${p}attention.head_count_kv`, `${heads} heads do not split into ${kvHeads} kv groups`);
  return {
    layers: pos(`${p}block_count`), hidden, intermediate: pos(`${p}feed_forward_length`),
    qDim: heads * headDim, kvDim: kvHeads * headDim, headDim,
  };
}

/** The dimensions a qwen3 GGUF declares, checked for consistency. */
export function qwen3Dims(m: GgufMetadata): PlanDims {
  return modelDims(m, 'qwen3');
}

/** The config.json of a packed qwen3 GGUF (`source`: the GGUF's file name, recorded in q4nx_source). */
export function qwen3Config(f: GgufFile, source: string, converter: string): Record<string, unknown> {
  const m = f.metadata;
  const d = qwen3Dims(m);
  const p = 'qwen3.';
  const embd = f.tensor('token_embd.weight');
  if (embd === undefined || embd.dims.length !== 2) throw new InvalidInput('/tensors/token_embd.weight', 'the qwen3 GGUF has no 2-D token_embd.weight');
  const config: Record<string, unknown> = {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: d.hidden,
    intermediate_size: d.intermediate,
    num_hidden_layers: d.layers,
    num_attention_heads: d.qDim / d.headDim,
    num_key_value_heads: d.kvDim / d.headDim,
    head_dim: d.headDim,
    // The runtime (E9) takes the vocab from the embedding's rows; the config says the same.
    vocab_size: embd.dims[1],
    max_position_embeddings: positive(m, `${p}context_length`),
    rope_theta: num(m, `${p}rope.freq_base`, 1_000_000),
    rms_norm_eps: num(m, `${p}attention.layer_norm_rms_epsilon`, 1e-6),
    hidden_act: 'silu',
    attention_bias: false,
    tie_word_embeddings: f.tensor('output.weight') === undefined,
    torch_dtype: 'bfloat16',
  };
  const bos = numericValue(m.get('tokenizer.ggml.bos_token_id'));
  if (bos !== undefined) config['bos_token_id'] = bos;
  const eos = numericValue(m.get('tokenizer.ggml.eos_token_id'));
  if (eos !== undefined) config['eos_token_id'] = eos;
  const rope = ropeScaling(m);
  if (rope !== null) config['rope_scaling'] = rope;
  config['q4nx_source'] = { converter, gguf: source };
  return config;
}

/**
 * HF's rope_scaling from the GGUF's rope.scaling.* keys, or null when none (or "none") is declared. An
 * `attn_factor` other than 1 is carried as YaRN's `attention_factor` (transformers' whole mscale: it
 * times 1 + 0.1 ln factor) and refused with any other type, which has no place for it.
 */
function ropeScaling(m: GgufMetadata): Record<string, unknown> | null {
  const type = m.get('qwen3.rope.scaling.type');
  const attn = numericValue(m.get('qwen3.rope.scaling.attn_factor')) ?? 1;
  const off = type?.type !== 'string' || type.value === 'none';
  if (attn !== 1 && (off || type.value !== 'yarn')) {
    throw new InvalidInput('/metadata/qwen3.rope.scaling.attn_factor', `${attn} without YaRN: config.json's rope_scaling has no place for it`);
  }
  if (off) return null;
  const out: Record<string, unknown> = { rope_type: type.value, type: type.value };
  const factor = numericValue(m.get('qwen3.rope.scaling.factor'));
  if (factor !== undefined) out['factor'] = shortestF32(factor);
  const orig = numericValue(m.get('qwen3.rope.scaling.original_context_length'));
  if (orig !== undefined) out['original_max_position_embeddings'] = orig;
  if (attn !== 1) out['attention_factor'] = attn * (1 + 0.1 * Math.log(factor !== undefined && factor > 0 ? factor : 1));
  return out;
}
