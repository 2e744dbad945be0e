/**
 * dynamic_update_slice as one ScatterNDUpdate-3: the update's elements land at coordinates
 * `start + offset`, one coordinate row per update element (indices [...update.shape, rank]). Literal
 * starts make the indices one Const; a runtime start is joined in by i32 index plumbing only (each
 * start reshaped to [1], a Concat into the start vector, an Add of a Const grid of offsets), never by
 * arithmetic on the data. One general form rather than ScatterUpdate-3 for the row-shaped case keeps
 * the simulated driver's supported list to one scatter; the NPU checks no index either way.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import { isLiteral, numel } from '../../ir/types.js';
import type { IrType, LowerCtx, PortRef } from './graph.js';

type Emit = (type: string, version: string, inputs: readonly PortRef[]) => PortRef;

/** The start of dim `d` as an i32 [1] tensor: a Const for a literal, a Reshape of the runtime scalar. */
function startVector(cx: LowerCtx, e: CheckedEqn, name: string, d: number): PortRef {
  const o = e.eqn.in[2 + d]!;
  const one: IrType = { element: 'i32', shape: [1] };
  if (isLiteral(o)) return cx.graph.constant(`${name}/start${d}`, one, [o.lit]);
  return cx.graph.add({
    name: `${name}/start${d}`, type: 'Reshape', version: 'opset1', data: { special_zero: 'false' },
    inputs: [cx.operand(e, 2 + d), cx.graph.i64(`${name}/start${d}/shape`, [1])], outputs: [one],
  })[0]!;
}

/** The row-major coordinates of every element of `shape`, flattened: the scatter's offsets grid. */
function coordinates(shape: readonly number[]): number[] {
  const r = shape.length;
  const out: number[] = [];
  for (let flat = 0; flat < numel(shape); flat++) {
    const idx = new Array<number>(r).fill(0);
    for (let d = r - 1, rest = flat; d >= 0; d--) { idx[d] = rest % shape[d]!; rest = Math.floor(rest / shape[d]!); }
    out.push(...idx);
  }
  return out;
}

/** Lowers a dynamic_update_slice of rank >= 1 with a non-empty update (see the file's doc). */
export function lowerUpdateSlice(cx: LowerCtx, e: CheckedEqn, name: string, emit: Emit): PortRef {
  const g = cx.graph;
  const update = e.ins[1]!.shape;
  const r = update.length;
  const starts = e.eqn.in.slice(2);
  const offsets = coordinates(update);
  const type: IrType = { element: 'i32', shape: [...update, r] };
  let indices: PortRef;
  if (starts.every(isLiteral)) {
    const s = starts.map((o) => (isLiteral(o) ? o.lit : 0));
    indices = g.constant(`${name}/indices`, type, offsets.map((o, k) => o + s[k % r]!));
  } else {
    const parts = starts.map((_, d) => startVector(cx, e, name, d));
    const vec = g.add({ name: `${name}/starts`, type: 'Concat', version: 'opset1', data: { axis: '0' }, inputs: parts, outputs: [{ element: 'i32', shape: [r] }] })[0]!;
    const grid = g.constant(`${name}/offsets`, type, offsets);
    indices = g.add({ name: `${name}/indices`, type: 'Add', version: 'opset1', data: { auto_broadcast: 'numpy' }, inputs: [grid, vec], outputs: [type] })[0]!;
  }
  return emit('ScatterNDUpdate', 'opset3', [cx.operand(e, 0), indices, cx.operand(e, 1)]);
}
