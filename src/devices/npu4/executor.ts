/**
 * Runs one compiled graph once: its nodes in order (the blob keeps them topologically sorted), each
 * through its FP16 kernel or exact data movement. One replay of a program is one call of runGraph.
 */
import type { Tensor } from '../../ir/tensor.js';
import { numel } from '../../ir/types.js';
import { f16FromBits } from '../../numerics/float16.js';
import type { CompiledBlob, GraphAttrs, GraphNode, NpuPrecision } from '../../compiler/openvino/blobFormat.js';
import { binary, convert, convertElement, matmul, reduce, unary } from './fp16Kernels.js';
import { broadcast, concat, gather, range, reshape, scatterNdUpdate, slice, transpose } from './movement.js';

function num(a: GraphAttrs, k: string, fallback?: number): number {
  const v = a[k];
  if (typeof v === 'number') return v;
  if (fallback !== undefined) return fallback;
  throw new Error(`attribute ${k} is missing`);
}

function ints(a: GraphAttrs, k: string): readonly number[] {
  const v = a[k];
  if (Array.isArray(v)) return v as readonly number[];
  throw new Error(`attribute ${k} is missing`);
}

/** The elements of a Constant node from the blob's constant section. */
function constantData(constants: Uint8Array, offset: number, precision: NpuPrecision, count: number): Float64Array {
  const view = new DataView(constants.buffer, constants.byteOffset + offset);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    switch (precision) {
      case 'f16': out[i] = f16FromBits(view.getUint16(i * 2, true)); break;
      case 'f32': out[i] = view.getFloat32(i * 4, true); break;
      case 'i32': out[i] = view.getInt32(i * 4, true); break;
      case 'bool': out[i] = view.getUint8(i) ? 1 : 0; break;
    }
  }
  return out;
}

function evalNode(blob: CompiledBlob, node: GraphNode, ins: readonly Tensor[], param: () => Tensor): Tensor {
  const a = node.attrs;
  const x = ins[0]!;
  switch (node.op) {
    case 'Parameter': return param();
    case 'Result': {
      // A result holds its producer's value in the result's precision (an identity in a sound graph).
      const out = new Float64Array(x.data.length);
      for (let i = 0; i < out.length; i++) out[i] = convertElement(node.precision, x.data[i]!);
      return { dtype: node.precision, shape: [...node.dims], data: out };
    }
    case 'Constant': return { dtype: node.precision, shape: [...node.dims], data: constantData(blob.constants, num(a, 'offset'), node.precision, numel(node.dims)) };
    case 'Convert': return convert(node, x);
    case 'Add': case 'Subtract': case 'Multiply': case 'Divide': case 'Maximum': case 'GreaterEqual':
      return binary(node, node.op, x, ins[1]!);
    case 'Exp': case 'Negative': case 'Sqrt': return unary(node, node.op, x);
    case 'ReduceSum': case 'ReduceMax': return reduce(node, node.op, x, ints(a, 'axes'));
    case 'MatMul': return matmul(node, x, ins[1]!, num(a, 'transposeA', 0) !== 0, num(a, 'transposeB', 0) !== 0);
    case 'Gather': return gather(node, x, ins[1]!, num(a, 'axis'));
    case 'Reshape': return reshape(node, x);
    case 'Transpose': return transpose(node, x, ints(a, 'perm'));
    case 'Broadcast': return broadcast(node, x, ints(a, 'axes'));
    case 'Slice': return slice(node, x, ints(a, 'start'), ints(a, 'step'));
    case 'Concat': return concat(node, ins, num(a, 'axis'));
    case 'Range': return range(node, num(a, 'start'), num(a, 'step'));
    case 'ScatterNDUpdate': return scatterNdUpdate(node, x, ins[1]!, ins[2]!);
  }
}

/**
 * Runs the graph over its parameters (by argument name) and returns its results (by argument name).
 * Every value is computed before anything is returned, so a caller writes outputs only after all ran.
 */
export function runGraph(blob: CompiledBlob, params: ReadonlyMap<string, Tensor>): Map<string, Tensor> {
  const { nodes, args } = blob.graph;
  const argOf = new Map(args.map((arg) => [arg.node, arg]));
  const values: Tensor[] = [];
  const results = new Map<string, Tensor>();
  nodes.forEach((node, i) => {
    const arg = argOf.get(i);
    const param = () => {
      const t = arg ? params.get(arg.name) : undefined;
      if (!t) throw new Error(`parameter ${node.name} has no bound input`);
      return t;
    };
    const v = evalNode(blob, node, node.inputs.map((j) => values[j]!), param);
    values.push(v);
    if (node.op === 'Result' && arg) results.set(arg.name, v);
  });
  return results;
}
