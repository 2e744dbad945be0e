/**
 * What `gguf pack` writes for each architecture it converts: qwen3 as it always has (config.ts,
 * plan.ts's planQwen3), the other families through their HF names and config.json (src/model/arch/hf.ts)
 * from the same ModelConfig the GGUF runs with. A GGUF of another architecture, or one with a piece
 * the packer does not carry yet (llama3 rope_freqs, LongRoPE factors), is InvalidInput naming it.
 */
import { InvalidInput } from '../../errors/index.js';
import { modelConfigFromGguf, type ModelConfig } from '../arch/config.js';
import { hfConfig, unpackable } from '../arch/hf.js';
import { numericValue, type GgufFile } from '../gguf/types.js';
import { qwen3Config, qwen3Dims, requirePackable } from './config.js';
import { hfTensorName, PERMUTED_QK, qkRowOf } from '../arch/hf.js';
import type { GgufTensorInfo } from '../gguf/types.js';
import { expectedShapes, tensorName } from '../qwen3/weights.js';
import { planned, planQwen3, type PlannedTensor, type StoreKind } from './plan.js';

/**
 * The tensors of a GGUF of any architecture gguf pack converts other than qwen3, in HF order (embedding,
 * each layer's tensors as its descriptor lists them, final norm, lm_head), checked against the shapes
 * its config gives; a tied lm_head comes from token_embd. Fused tensors (Phi-3's qkv_proj and
 * gate_up_proj) stay fused, as HF's Phi-3 has them. Matrices are q4_1, norms bf16, biases (Qwen2's) f32:
 * the graph adds them to f32 activations.
 */
function planArch(f: GgufFile, c: ModelConfig): PlannedTensor[] {
  const need = (name: string): GgufTensorInfo => {
    const t = f.tensor(name);
    if (t === undefined) throw new InvalidInput(`/tensors/${name}`, `the ${c.arch} GGUF has no such tensor`);
    return t;
  };
  const shapes = expectedShapes(c, !c.tied);
  const known = new Set([...shapes.keys()].map(tensorName));
  for (const t of f.tensors) {
    if (!known.has(t.name)) throw new InvalidInput(`/tensors/${t.name}`, `gguf pack does not carry this tensor of a ${c.arch} GGUF`);
  }
  const embd = need('token_embd.weight');
  if (embd.dims.length !== 2 || embd.dims[0] !== c.hidden) {
    throw new InvalidInput('/tensors/token_embd.weight', `dims [${embd.dims.join(', ')}] are not [hidden ${c.hidden}, vocab]`);
  }
  const permuted = PERMUTED_QK.includes(c.arch);
  const one = (arg: string, source: GgufTensorInfo, store?: StoreKind): PlannedTensor => {
    const logical = arg === 'output' ? [c.vocab, c.hidden] : shapes.get(arg)!;
    const shape: [number, number] = logical.length === 1 ? [1, logical[0]!] : [logical[0]!, logical[1]!];
    const t = planned(hfTensorName(c.arch, arg)!, source, store ?? (logical.length === 2 ? 'q4_1' : arg.endsWith('.bias') ? 'f32' : 'bf16'), shape);
    return permuted && /\.attn_[qk]$/.test(arg) ? { ...t, rowOf: qkRowOf(c.headDim) } : t;
  };
  const out: PlannedTensor[] = [one('token_embd', embd, 'bf16')];
  for (const arg of shapes.keys()) if (arg.startsWith('blk.')) out.push(one(arg, need(tensorName(arg))));
  out.push(one('output_norm', need('output_norm.weight')));
  out.push(one('output', f.tensor('output.weight') ?? embd, 'q4_1'));
  return out;
}

/** The config a GGUF of a packable architecture other than qwen3 runs with; InvalidInput for what pack does not carry. */
function packableConfig(f: GgufFile): ModelConfig {
  const c = modelConfigFromGguf(f);
  const why = unpackable(c);
  if (why !== null) throw new InvalidInput('/metadata/general.architecture', why);
  return c;
}

/** The tensors a pack of this GGUF writes, in HF order; refuses an architecture the packer does not convert. */
export function packTensors(f: GgufFile): PlannedTensor[] {
  const arch = requirePackable(f.metadata);
  return arch === 'qwen3' ? planQwen3(f, qwen3Dims(f.metadata)) : planArch(f, packableConfig(f));
}

/** The config.json a pack of this GGUF writes (`source`: the GGUF's file name, recorded in q4nx_source). */
export function packConfig(f: GgufFile, source: string, converter: string): Record<string, unknown> {
  const arch = requirePackable(f.metadata);
  if (arch === 'qwen3') return qwen3Config(f, source, converter);
  const c = packableConfig(f);
  // The rope factor tensors (a few dozen f32 each) are written into config.json as numbers.
  const read = (name: string) => (f.tensor(name) === undefined ? undefined : f.tensorFloats(name));
  const factors = {
    ...(c.options.ropeFreqs ? { freqs: read('rope_freqs.weight') } : {}),
    ...(c.options.longRopeContext !== undefined ? { long: read('rope_factors_long.weight'), short: read('rope_factors_short.weight') } : {}),
  };
  const config = hfConfig(c, numericValue(f.metadata.get('tokenizer.ggml.bos_token_id')), factors);
  config['q4nx_source'] = { converter, gguf: source };
  return config;
}
