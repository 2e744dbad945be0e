/**
 * The lowering table: each admitted op of the program format becomes the one OpenVINO opset operation
 * with its semantics, plus the Const inputs the opset takes for what our format writes as attributes
 * (axes, shapes, orders). Ops the NPU4 target refuses have `null` rows; the mapped type makes a new op
 * refuse to compile until it has a row here. docs/NPU4.md is the prose of this table.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import type { OpAttrs, OpName } from '../../ops/rule.js';
import type { IrGraph, IrType, PortRef } from './graph.js';
import { elementTypeOf } from './irModel.js';
import { lowerUpdateSlice } from './scatter.js';

import type { LowerCtx } from './graph.js';
export type { LowerCtx } from './graph.js';

type Lower<P extends OpName> = (cx: LowerCtx, e: CheckedEqn, attrs: OpAttrs[P]) => PortRef;
type LoweringTable = { readonly [P in OpName]: Lower<P> | null };

function outName(e: CheckedEqn): string {
  return typeof e.eqn.out === 'string' ? e.eqn.out : e.eqn.out[0]!;
}

function outType(e: CheckedEqn): IrType {
  const t = e.outs[0]!;
  return { element: elementTypeOf(t.dtype), shape: t.shape };
}

/** One layer named after the equation's output, reading `inputs`, with the equation's result type. */
function layer(cx: LowerCtx, e: CheckedEqn, type: string, version: string, inputs: readonly PortRef[], data?: Record<string, string>): PortRef {
  const name = outName(e);
  return cx.graph.add({ name, type, version, data, inputs, outputs: [outType(e)], names: [[name]] })[0]!;
}

function operands(cx: LowerCtx, e: CheckedEqn): PortRef[] {
  return e.eqn.in.map((_, k) => cx.operand(e, k));
}

// Every elementwise opset-1 op broadcasts by numpy rules, which is how a scalar literal meets a tensor.
const binary = (type: string, extra: Record<string, string> = {}) =>
  (cx: LowerCtx, e: CheckedEqn) => layer(cx, e, type, 'opset1', operands(cx, e), { auto_broadcast: 'numpy', ...extra });

const unary = (type: string) => (cx: LowerCtx, e: CheckedEqn) => layer(cx, e, type, 'opset1', operands(cx, e));

const reduce = (type: string) => (cx: LowerCtx, e: CheckedEqn, a: { readonly axes: readonly number[] }) =>
  layer(cx, e, type, 'opset1', [cx.operand(e, 0), cx.graph.i64(`${outName(e)}/axes`, a.axes)], { keep_dims: 'false' });

/** iota as Range-4 over its dimension (start 0, step 1), broadcast to the shape when it has other dims. */
function iota(cx: LowerCtx, e: CheckedEqn, a: OpAttrs['iota']): PortRef {
  const g = cx.graph;
  const name = outName(e);
  const t = outType(e);
  const n = a.shape[a.dimension]!;
  const scalar: IrType = { element: 'i32', shape: [] };
  const rangeIns = [g.constant(`${name}/start`, scalar, [0]), g.constant(`${name}/stop`, scalar, [n]), g.constant(`${name}/step`, scalar, [1])];
  if (a.shape.length === 1) return layer(cx, e, 'Range', 'opset4', rangeIns, { output_type: t.element });
  const range = g.add({ name: `${name}/range`, type: 'Range', version: 'opset4', data: { output_type: t.element }, inputs: rangeIns, outputs: [{ element: t.element, shape: [n] }] })[0]!;
  return layer(cx, e, 'Broadcast', 'opset3', [range, g.i64(`${name}/target_shape`, a.shape), g.i64(`${name}/axes_mapping`, [a.dimension])], { mode: 'explicit' });
}

export const LOWERINGS = {
  add: binary('Add'),
  sub: binary('Subtract'),
  mul: binary('Multiply'),
  // m_pythondiv only changes integer division; false records the format's truncating semantics.
  div: binary('Divide', { m_pythondiv: 'false' }),
  max: binary('Maximum'),
  min: null,
  ge: binary('GreaterEqual'),
  neg: unary('Negative'),
  recip: null, exp: unary('Exp'), log: null, tanh: null, erf: null, sqrt: unary('Sqrt'), rsqrt: null,
  abs: null, logistic: null, sin: null, cos: null,
  convert: (cx, e, a) => layer(cx, e, 'Convert', 'opset1', [cx.operand(e, 0)], { destination_type: elementTypeOf(a.dtype) }),
  reduce_sum: reduce('ReduceSum'),
  reduce_max: reduce('ReduceMax'),
  matmul: (cx, e) => layer(cx, e, 'MatMul', 'opset1', operands(cx, e), { transpose_a: 'false', transpose_b: 'false' }),
  gather: (cx, e, a) => layer(cx, e, 'Gather', 'opset8',
    [cx.operand(e, 0), cx.operand(e, 1), cx.graph.constant(`${outName(e)}/axis`, { element: 'i64', shape: [] }, [a.axis])], { batch_dims: '0' }),
  reshape: (cx, e, a) => layer(cx, e, 'Reshape', 'opset1', [cx.operand(e, 0), cx.graph.i64(`${outName(e)}/shape`, a.shape)], { special_zero: 'false' }),
  transpose: (cx, e, a) => layer(cx, e, 'Transpose', 'opset1', [cx.operand(e, 0), cx.graph.i64(`${outName(e)}/order`, a.perm)]),
  broadcast: (cx, e, a) => {
    const target = cx.graph.i64(`${outName(e)}/target_shape`, a.shape);
    // A scalar has no axes to map; numpy mode broadcasts it without the third input.
    if (e.ins[0]!.shape.length === 0) return layer(cx, e, 'Broadcast', 'opset3', [cx.operand(e, 0), target], { mode: 'numpy' });
    return layer(cx, e, 'Broadcast', 'opset3', [cx.operand(e, 0), target, cx.graph.i64(`${outName(e)}/axes_mapping`, a.dims)], { mode: 'explicit' });
  },
  slice: (cx, e, a) => {
    const g = cx.graph;
    const name = outName(e);
    const r = a.start.length;
    const step = a.stride ?? a.start.map(() => 1);
    return layer(cx, e, 'Slice', 'opset8', [cx.operand(e, 0), g.i64(`${name}/start`, a.start), g.i64(`${name}/stop`, a.limit),
      g.i64(`${name}/step`, step), g.i64(`${name}/axes`, Array.from({ length: r }, (_, i) => i))]);
  },
  concat: (cx, e, a) => layer(cx, e, 'Concat', 'opset1', operands(cx, e), { axis: String(a.axis) }),
  iota,
  dynamic_update_slice: (cx, e) => lowerUpdateSlice(cx, e, outName(e), (type, version, inputs) => layer(cx, e, type, version, inputs)),
  row_kernel: null,
  all_reduce: null,
  matmul_id: null,
} as const satisfies LoweringTable;

/** Lowers one equation to its layers; returns its output port. Throws for an op with no lowering. */
export function lowerEqn(cx: LowerCtx, e: CheckedEqn): PortRef {
  const row = LOWERINGS[e.op] as Lower<OpName> | null;
  if (row === null) throw new Error(`equation ${e.index} (${e.op}) has no OpenVINO lowering; the NPU4 target refuses it`);
  return row(cx, e, e.eqn.attrs as OpAttrs[OpName]);
}
