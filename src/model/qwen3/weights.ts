/**
 * A Qwen3's weights as byte ranges of its file (docs/PROGRAM_FORMAT.md, "Weights bound from a file"):
 * a GGUF's tensors as they are (shape = dims reversed, dtype = the ggml type), or a Q4NX container's
 * q4_1 tiles as `q4nx_q41` over the padded matrix and its bf16 tensors as bf16. Nothing is read here
 * but headers; the engine binds the ranges and its device reads them where it uploads them.
 */
import { InvalidInput, Q4nxError } from '../../errors/index.js';
import type { AnyDType } from '../../ir/types.js';
import type { GgufFile } from '../gguf/types.js';
import type { Q4nxHeader } from '../q4nx/container.js';
import { isQuantized as isChunked, logicalShapeFromMetadata, quantLayout, TILE_COLS, TILE_ROWS } from '../q4nx/chunks.js';
import type { Qwen3Config } from './config.js';
import { architecture, type LayerTensor } from '../arch/index.js';
import { hfTensorName } from '../arch/hf.js';

/** One weight: the range of the file that holds it, and how the program takes it. */
export interface BoundWeight {
  readonly dtype: AnyDType;
  /** As stored: `[N, K]` for a matrix (K blocked for a quantized dtype), `[C]` for a norm. */
  readonly shape: readonly number[];
  readonly file: string;
  readonly offset: number;
  readonly length: number;
}

/** Every weight of a model, by the program's arg name (llama.cpp's tensor names without `.weight`). */
export type ModelWeights = ReadonlyMap<string, BoundWeight>;

/** Qwen3's per-layer weights, in llama.cpp's names, with their Hugging Face names (a Q4NX directory's). */
export const LAYER_WEIGHTS = [
  ['attn_norm', 'input_layernorm'],
  ['attn_q', 'self_attn.q_proj'],
  ['attn_k', 'self_attn.k_proj'],
  ['attn_v', 'self_attn.v_proj'],
  ['attn_output', 'self_attn.o_proj'],
  ['attn_q_norm', 'self_attn.q_norm'],
  ['attn_k_norm', 'self_attn.k_norm'],
  ['ffn_norm', 'post_attention_layernorm'],
  ['ffn_gate', 'mlp.gate_proj'],
  ['ffn_up', 'mlp.up_proj'],
  ['ffn_down', 'mlp.down_proj'],
] as const;

/**
 * The logical shape of each weight (`[N, K]` or `[C]`) for a config, in the order the programs take
 * them: the embedding, the output norm, `output` only when untied, `rope_freqs` when the graph reads
 * it, then each layer's tensors as its architecture's descriptor lists them (src/model/arch).
 */
export function expectedShapes(c: Qwen3Config, withOutput: boolean): Map<string, readonly number[]> {
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const m = new Map<string, readonly number[]>([['token_embd', [c.vocab, c.hidden]], ['output_norm', [c.hidden]]]);
  if (withOutput) m.set('output', [c.vocab, c.hidden]);
  if (c.options.ropeFreqs) m.set('rope_freqs', [c.options.ropeDims / 2]);
  // A directory's factors are numbers of its config.json (ropeFactorValues), not weights.
  if (c.options.longRopeContext !== undefined && c.options.ropeFactorValues === undefined) {
    m.set('rope_factors_long', [c.options.ropeDims / 2]);
    m.set('rope_factors_short', [c.options.ropeDims / 2]);
  }
  const moe = c.options.moe;
  const layer: Record<LayerTensor, readonly number[]> = {
    attn_norm: [c.hidden], ffn_norm: [c.hidden], attn_q_norm: [c.headDim], attn_k_norm: [c.headDim],
    attn_q: [q, c.hidden], attn_k: [kv, c.hidden], attn_v: [kv, c.hidden], attn_output: [c.hidden, q],
    attn_qkv: [q + 2 * kv, c.hidden], 'attn_q.bias': [q], 'attn_k.bias': [kv], 'attn_v.bias': [kv],
    ffn_gate: [c.intermediate, c.hidden], ffn_up: [c.options.fusedGateUp ? 2 * c.intermediate : c.intermediate, c.hidden],
    ffn_down: [c.hidden, c.intermediate], post_attention_norm: [c.hidden], post_ffw_norm: [c.hidden],
    // A mixture of experts (GraphOptions.moe): the router [E, hidden], E experts of each projection.
    ffn_gate_inp: [moe?.experts ?? 0, c.hidden],
    ffn_gate_exps: [moe?.experts ?? 0, moe?.ff ?? 0, c.hidden], ffn_up_exps: [moe?.experts ?? 0, moe?.ff ?? 0, c.hidden],
    ffn_down_exps: [moe?.experts ?? 0, c.hidden, moe?.ff ?? 0],
  };
  const names = architecture(c.arch).layer;
  for (let i = 0; i < c.layers; i++) for (const g of names) m.set(`blk.${i}.${g}`, layer[g]);
  return m;
}

/** The GGUF tensor of a weight arg: llama.cpp's name, with `.weight` unless it is a bias. */
export const tensorName = (arg: string): string => (arg.endsWith('.bias') ? arg : `${arg}.weight`);

/** GGUF types that bind as a weight dtype of the same bytes. */
const GGUF_DTYPES: Readonly<Record<string, AnyDType>> = {
  F32: 'f32', F16: 'f16', BF16: 'bf16', Q4_0: 'q4_0', Q4_1: 'q4_1', Q8_0: 'q8_0', Q4_K: 'q4_k', Q6_K: 'q6_k',
};

const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/** The weights of a GGUF at `path` (absolute); refuses a missing tensor, another shape or an unbindable type. */
export function ggufWeights(f: GgufFile, path: string, c: Qwen3Config): ModelWeights {
  const out = new Map<string, BoundWeight>();
  const shapes = expectedShapes(c, !c.tied);
  // A layer tensor the graph would not read (a bias llama.cpp adds, say) is refused rather than dropped.
  const known = new Set([...shapes.keys()].map(tensorName));
  for (const t of f.tensors) {
    if (t.name.startsWith('blk.') && !known.has(t.name)) throw new InvalidInput(`/tensors/${t.name}`, `the ${c.arch} graph does not read this tensor`);
  }
  for (const [name, logical] of shapes) {
    const t = f.tensor(tensorName(name));
    const at = `/tensors/${tensorName(name)}`;
    if (t === undefined) throw new InvalidInput(at, `the ${c.arch} GGUF has no such tensor`);
    const dtype = GGUF_DTYPES[t.typeName];
    if (dtype === undefined) {
      throw new InvalidInput(at, `ggml type ${t.typeName} cannot be bound as a weight (the types that can: ${Object.keys(GGUF_DTYPES).join(', ')}); requantize the file, or gguf pack it to Q4NX`);
    }
    const shape = [...t.dims].reverse();
    if (!same(shape, logical)) throw new InvalidInput(at, `shape [${shape.join(', ')}] (dims reversed) is not [${logical.join(', ')}], which the metadata gives`);
    out.set(name, { dtype, shape, file: path, offset: t.fileOffset, length: t.byteSize });
  }
  return out;
}

const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** The weights of a Q4NX container at `path` (absolute) with its parsed header, named as `gguf pack` names them. */
export function q4nxWeights(h: Q4nxHeader, path: string, c: Qwen3Config): ModelWeights {
  const present = new Set(h.tensors.map((t) => t.name));
  // A container without lm_head ties the head to the embedding, as config.json says.
  const withOutput = present.has('lm_head.weight') || !c.tied;
  const out = new Map<string, BoundWeight>();
  for (const [name, logical] of expectedShapes(c, withOutput)) {
    const hfName = hfTensorName(c.arch, name);
    if (hfName === undefined) throw new InvalidInput(`/${c.arch}`, `the ${c.arch} graph reads ${name}, which a model directory does not carry`);
    const t = h.tensors.find((x) => x.name === hfName);
    if (t === undefined) throw new Q4nxError(hfName, 'the model.q4nx has no such tensor');
    const offset = h.dataStart + t.begin;
    const length = t.end - t.begin;
    if (isChunked(t)) {
      const rows = logical[0]!;
      const cols = logical[1]!;
      const layout = quantLayout(t, logicalShapeFromMetadata(h.metadata, hfName) ?? [rows, cols]);
      if (layout.kind !== 'q4_1') throw new Q4nxError(hfName, `${layout.kind} chunks cannot be bound as a weight (only q4_1 tiles are the q4nx_q41 dtype)`);
      const shape = [roundUp(rows, TILE_ROWS), roundUp(cols, TILE_COLS)];
      if (shape[1] !== cols) throw new Q4nxError(hfName, `${cols} columns are not a multiple of ${TILE_COLS}: the padded weight would need a padded activation`);
      if (length !== (shape[0]! / TILE_ROWS) * (shape[1]! / TILE_COLS) * layout.chunkBytes) {
        throw new Q4nxError(hfName, `${length} bytes are not the ${shape[0]! / TILE_ROWS} x ${shape[1]! / TILE_COLS} tiles of a [${shape.join(', ')}] matrix`);
      }
      out.set(name, { dtype: 'q4nx_q41', shape, file: path, offset, length });
    } else {
      const dtype = t.dtype === 'BF16' ? 'bf16' : t.dtype === 'F16' ? 'f16' : t.dtype === 'F32' ? 'f32' : undefined;
      if (dtype === undefined) throw new Q4nxError(hfName, `dtype ${t.dtype} cannot be bound as a weight`);
      const shape = logical.length === 1 && t.shape.length === 2 && t.shape[0] === 1 ? [t.shape[1]!] : [...t.shape];
      if (!same(shape, logical)) throw new Q4nxError(hfName, `shape [${t.shape.join(', ')}] is not [${logical.join(', ')}], which config.json gives`);
      out.set(name, { dtype, shape, file: path, offset, length });
    }
  }
  return out;
}
