/**
 * The blob the simulated Intel driver compiler builds and the simulated NPU loads.
 *
 * The blob, little-endian:
 *   0   8 bytes  magic 'NPUOVPU1'
 *   8   u32      format version (VPU_BLOB_VERSION)
 *   12  u32      payload byte length
 *   16  u32      CRC-32 (IEEE) of the payload
 *   20  payload  u32 length of the graph JSON, the graph JSON (UTF-8, BlobGraph), zero padding to 4 bytes,
 *                then the constant section: each Constant node's elements in its precision (f16 as bit
 *                patterns, f32, i32, bool one byte), at the offset its node names.
 * The graph JSON holds the compiler's name and version, the nodes in topological order (op kind, inputs,
 * precision, dims, folded attributes), the graph's own argument table (name, order, direction, extents,
 * precision) and the program's ABI the caller expects, so the device checks one against the other
 * before anything runs.
 */
import type { ArgumentField } from '../../errors/index.js';
import type { DType, Shape } from '../../ir/types.js';
import { elementDtype } from '../../ir/types.js';
import type { Wiring } from '../wiring.js';
import { frame } from '../frame.js';

/** The driver and compiler version the docs' verified list was measured with. */
export const VENDOR_COMPILER = { name: 'npu-driver-compiler-sim', version: '1.38.0' } as const;
export const VPU_BLOB_MAGIC = 'NPUOVPU1';
export const VPU_BLOB_VERSION = 1;

/** The element types the driver carries: FP16 compute, F32 at the graph's boundary, I32 indices, booleans. */
export type NpuPrecision = 'f32' | 'f16' | 'i32' | 'bool';

/** The layer kinds a compiled graph holds (the IR's op types, after shape inputs are folded). */
export const GRAPH_OPS = [
  'Parameter', 'Result', 'Constant', 'Convert',
  'Add', 'Subtract', 'Multiply', 'Divide', 'Maximum', 'GreaterEqual',
  'Exp', 'Negative', 'Sqrt', 'ReduceSum', 'ReduceMax', 'MatMul',
  'Gather', 'Reshape', 'Transpose', 'Broadcast', 'Slice', 'Concat', 'Range', 'ScatterNDUpdate',
] as const;
export type GraphOp = (typeof GRAPH_OPS)[number];

/** Folded attributes: numbers and lists of numbers only (shape inputs become these). */
export type GraphAttrs = Readonly<Record<string, number | readonly number[]>>;

/** One compiled layer. Inputs name earlier nodes by position, so the list is in topological order. */
export interface GraphNode {
  /** The IR layer id and name, for logs. */
  readonly layer: number;
  readonly name: string;
  readonly op: GraphOp;
  readonly inputs: readonly number[];
  readonly precision: NpuPrecision;
  readonly dims: readonly number[];
  /**
   * Per op: Parameter/Result `arg`; Convert none (its precision is the target); ReduceSum/ReduceMax
   * `axes`, `keepDims`; MatMul `transposeA`, `transposeB`; Gather `axis`, `batchDims`; Transpose `perm`;
   * Broadcast `axes` (input dim i goes to output dim axes[i]); Slice `start`, `step` (one per dim);
   * Concat `axis`; Range `start`, `step`; Constant `offset` into the constants; ScatterNDUpdate none.
   */
  readonly attrs: GraphAttrs;
  /**
   * The driver fused a Convert to F32 whose only uses are graph results into this arithmetic layer: its
   * result leaves the f32 accumulator as F32, never rounded to FP16 (so an FP16 overflow of the last op
   * comes back as a finite F32, which the host then refuses as a result).
   */
  readonly fusedF32?: boolean;
}

/** One argument of the compiled graph, as Level Zero reports it. */
export interface GraphArg {
  readonly name: string;
  /** Its position in the graph's argument list. */
  readonly order: number;
  readonly direction: 'parameter' | 'result';
  readonly dims: readonly number[];
  readonly precision: NpuPrecision;
  /** The Parameter or Result node it binds. */
  readonly node: number;
}

/** An argument of the program's artifact, as the program's wiring names it (the recording ABI). */
export interface ExpectedArg {
  readonly name: string;
  readonly direction: 'in' | 'out';
  readonly dtype: DType;
  readonly shape: Shape;
}

/** The graph JSON of a blob. */
export interface BlobGraph {
  readonly compiler: { readonly name: string; readonly version: string };
  /** The model's name (the program's), for messages. */
  readonly name: string;
  readonly nodes: readonly GraphNode[];
  readonly args: readonly GraphArg[];
  readonly expected: readonly ExpectedArg[];
}

/** A decoded blob: its graph and its constant section. */
export interface CompiledBlob {
  readonly graph: BlobGraph;
  readonly constants: Uint8Array;
}

/** @internal A deliberately wrong compiler, for tests: it corrupts one field of one argument of its table. */
export interface Miscompile {
  readonly arg: string;
  readonly field: ArgumentField;
}

export interface VendorCompileOptions {
  /** The program's ABI (e.g. expectedArgs(wiring)); without it, the IR's own Parameters and Results. */
  readonly expected?: readonly ExpectedArg[];
  /** @internal Build a wrong table on purpose (tests of the device's argument check). */
  readonly miscompile?: Miscompile;
}

/** The program's ABI from an artifact's wiring: binding names, directions, dtypes and shapes in order. */
export function expectedArgs(wiring: Wiring): ExpectedArg[] {
  return wiring.map((w) => ({ name: w.binding, direction: w.direction, dtype: elementDtype(w.dtype, w.binding), shape: [...w.shape] }));
}

/** Writes a blob: header, graph JSON, constants (see the file's doc). */
export function encodeBlob(graph: BlobGraph, constants: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(graph));
  const padded = (json.length + 3) & ~3;
  const payload = new Uint8Array(4 + padded + constants.length);
  new DataView(payload.buffer).setUint32(0, json.length, true);
  payload.set(json, 4);
  payload.set(constants, 4 + padded);
  return frame(VPU_BLOB_MAGIC, VPU_BLOB_VERSION, payload);
}

/** @internal Applies a Miscompile to an argument table: the one field of the one argument it names goes wrong. */
export function miscompileArgs(args: readonly GraphArg[], m: Miscompile): GraphArg[] {
  const out = args.map((a) => ({ ...a }));
  const i = out.findIndex((a) => a.name === m.arg);
  const a = out[i];
  if (!a) throw new RangeError(`miscompile names ${m.arg}, which is no argument of the graph`);
  switch (m.field) {
    case 'name': out[i] = { ...a, name: `${a.name}_0` }; break;
    case 'order': {
      const j = i + 1 < out.length ? i + 1 : i - 1;
      const b = out[j];
      if (!b) throw new RangeError('a graph of one argument cannot be reordered');
      out[i] = { ...b, order: a.order };
      out[j] = { ...a, order: b.order };
      break;
    }
    case 'direction': out[i] = { ...a, direction: a.direction === 'parameter' ? 'result' : 'parameter' }; break;
    case 'extent': out[i] = { ...a, dims: a.dims.length > 0 ? [a.dims[0]! + 1, ...a.dims.slice(1)] : [1] }; break;
    case 'precision': out[i] = { ...a, precision: a.precision === 'f16' ? 'f32' : 'f16' }; break;
  }
  return out;
}
