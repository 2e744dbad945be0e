/**
 * What `gguf pack` writes for a qwen3 GGUF: every tensor's Hugging Face name, its GGUF source, and
 * how it is stored (q4_1 tiles for the projections and lm_head, bf16 for the norms and embedding).
 * The names follow FLM_Q4NX_Converter configs/qwen3.json (docs/Q4NX.md, "Tensor names"). GGUF dims
 * are ne0 first, so a projection [in, out] becomes an HF weight [out, in] with the same bytes in the
 * same order: HF row r is GGUF row r.
 */
import { InvalidInput } from '../../errors/index.js';
import { asQuantType, type QuantType } from '../gguf/ggmlTypes.js';
import type { GgufFile, GgufTensorInfo } from '../gguf/types.js';

/** How a tensor is stored in model.q4nx. */
export type StoreKind = 'q4_1' | 'bf16' | 'f32';

/** How a q4_1 tensor is made: codes carried over (exact types) or dequantized and requantized. */
export type Method = 'repack' | 'requant' | 'bf16' | 'f32';

/** The source types whose codes carry over into q4_1 unchanged. */
export const EXACT_TYPES: readonly QuantType[] = ['Q4_0', 'Q4_1', 'Q4_K'];

/** One tensor of the packed model. */
export interface PlannedTensor {
  /** The Hugging Face name written to model.q4nx. */
  readonly name: string;
  readonly source: GgufTensorInfo;
  readonly sourceType: QuantType;
  readonly store: StoreKind;
  readonly method: Method;
  /** HF rows (out features, or 1 for a vector) and columns (in features: GGUF ne0). */
  readonly rows: number;
  readonly cols: number;
  /** The source row of HF row r, when they differ (Llama's and MiniCPM's q and k: src/model/arch/hf.ts). */
  readonly rowOf?: (r: number) => number;
}

/** GGUF name (after `blk.{i}.`) to HF name (after `model.layers.{i}.`), and how it is stored, in HF order. */
const LAYER: readonly (readonly [string, string, StoreKind])[] = [
  ['attn_norm.weight', 'input_layernorm.weight', 'bf16'],
  ['attn_q.weight', 'self_attn.q_proj.weight', 'q4_1'],
  ['attn_k.weight', 'self_attn.k_proj.weight', 'q4_1'],
  ['attn_v.weight', 'self_attn.v_proj.weight', 'q4_1'],
  ['attn_output.weight', 'self_attn.o_proj.weight', 'q4_1'],
  ['attn_q_norm.weight', 'self_attn.q_norm.weight', 'bf16'],
  ['attn_k_norm.weight', 'self_attn.k_norm.weight', 'bf16'],
  ['ffn_norm.weight', 'post_attention_layernorm.weight', 'bf16'],
  ['ffn_gate.weight', 'mlp.gate_proj.weight', 'q4_1'],
  ['ffn_up.weight', 'mlp.up_proj.weight', 'q4_1'],
  ['ffn_down.weight', 'mlp.down_proj.weight', 'q4_1'],
];

/** One planned tensor, its source checked against the HF shape [rows, cols] ([1, n] for a vector). */
export function planned(name: string, t: GgufTensorInfo, store: StoreKind, shape: readonly [number, number]): PlannedTensor {
  const sourceType = asQuantType(t.type);
  if (sourceType === undefined) throw new InvalidInput(`/tensors/${t.name}`, `ggml type ${t.typeName} cannot be packed: not one of F32, F16, BF16, Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K`);
  const dims = store === 'q4_1' ? 2 : t.dims.length;
  if (t.dims.length !== dims || t.dims[0] !== shape[1] || (dims === 2 && t.dims[1] !== shape[0])) {
    throw new InvalidInput(`/tensors/${t.name}`, `dims [${t.dims.join(', ')}] do not match the metadata, which gives ne0 first [${[shape[1], ...(dims === 2 ? [shape[0]] : [])].join(', ')}]`);
  }
  const method: Method = store !== 'q4_1' ? store : EXACT_TYPES.includes(sourceType) ? 'repack' : 'requant';
  return { name, source: t, sourceType, store, method, rows: shape[0], cols: shape[1] };
}

/** The dimensions the plan checks tensors against (from the GGUF metadata). */
export interface PlanDims {
  readonly layers: number;
  readonly hidden: number;
  readonly intermediate: number;
  readonly qDim: number;
  readonly kvDim: number;
  readonly headDim: number;
}

/** The tensors of a qwen3 GGUF in HF order; a missing tensor is refused, a tied lm_head comes from token_embd. */
export function planQwen3(f: GgufFile, d: PlanDims): PlannedTensor[] {
  const need = (name: string): GgufTensorInfo => {
    const t = f.tensor(name);
    if (t === undefined) throw new InvalidInput(`/tensors/${name}`, 'the qwen3 GGUF has no such tensor');
    return t;
  };
  const embd = need('token_embd.weight');
  const vocab = embd.dims[1] ?? 0;
  const shapes: Readonly<Record<string, readonly [number, number]>> = {
    'attn_norm.weight': [1, d.hidden], 'ffn_norm.weight': [1, d.hidden],
    'attn_q_norm.weight': [1, d.headDim], 'attn_k_norm.weight': [1, d.headDim],
    'attn_q.weight': [d.qDim, d.hidden], 'attn_k.weight': [d.kvDim, d.hidden], 'attn_v.weight': [d.kvDim, d.hidden],
    'attn_output.weight': [d.hidden, d.qDim],
    'ffn_gate.weight': [d.intermediate, d.hidden], 'ffn_up.weight': [d.intermediate, d.hidden],
    'ffn_down.weight': [d.hidden, d.intermediate],
  };
  const out: PlannedTensor[] = [planned('model.embed_tokens.weight', embd, 'bf16', [vocab, d.hidden])];
  // bf16 keeps the embedding's shape: [vocab, hidden], so its dims are checked as a matrix.
  if (embd.dims.length !== 2 || embd.dims[0] !== d.hidden) {
    throw new InvalidInput('/tensors/token_embd.weight', `dims [${embd.dims.join(', ')}] are not [hidden ${d.hidden}, vocab]`);
  }
  for (let i = 0; i < d.layers; i++) {
    for (const [g, h, store] of LAYER) {
      out.push(planned(`model.layers.${i}.${h}`, need(`blk.${i}.${g}`), store, shapes[g]!));
    }
  }
  out.push(planned('model.norm.weight', need('output_norm.weight'), 'bf16', [1, d.hidden]));
  out.push(planned('lm_head.weight', f.tensor('output.weight') ?? embd, 'q4_1', [vocab, d.hidden]));
  return out;
}

/** The dtype model.q4nx records for each store kind. */
export const STORED_DTYPE = { q4_1: 'I8', bf16: 'BF16', f32: 'F32' } as const;

/** The shape model.q4nx records: [tiles, 5120] for q4_1, the HF shape (GGUF dims reversed) for bf16. */
export function storedShape(t: PlannedTensor): number[] {
  if (t.store === 'q4_1') return [Math.ceil(t.rows / 32) * Math.ceil(t.cols / 256), 5120];
  return [...t.source.dims].reverse();
}
