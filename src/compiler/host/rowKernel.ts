/**
 * A row kernel's body (targets/host/rowBody.ts's plan) as addon kernels over the whole [rows, C]
 * tensor: elementwise steps as unary/binary kernels, reductions as row_sum/row_max, a per-row scalar
 * times a vector as row_scale, and any other mix of layouts by first broadcasting the narrower operand
 * to a vector with a strided copy. Each step is rounded to f32 like the oracle's step; a body of f16,
 * bf16 or i32 rows runs on the typed kernels (unary_t, binary_t, reduce_t), each step rounded once to
 * its dtype, as the oracle rounds it.
 */
import { isLiteral, type Operand } from '../../ir/types.js';
import type { CheckedEqn } from '../../ir/checked.js';
import type { RowBodyPlan, RowValueKind } from '../../targets/host/rowBody.js';
import type { KernelCall } from './kernelList.js';
import type { BinaryOp, UnaryOp } from '../../ops/elementwise.js';

/** Where the lowering reads and writes: inputs, results, scratch, and a literal's slot in a dtype (f32 by default). */
export interface RowBodySlots {
  readonly at: (k: number) => number;
  readonly out: (k: number) => number;
  readonly place: (bytes: number) => number;
  readonly literal: (value: number, dtype?: 'f32' | 'f16' | 'bf16' | 'i32') => number;
}

/** The kernels of `plan` over the slots of `io`. */
export function lowerRowBody(e: CheckedEqn, plan: RowBodyPlan, io: RowBodySlots): KernelCall[] {
  const { at, out, place } = io;
  const eqn = e.index;
  const { rows, C, dtype } = plan;
  const typed = dtype !== 'f32';
  const E = dtype === 'f16' || dtype === 'bf16' ? 2 : 4;
  const size = (k: RowValueKind): number => (k === 'vector' ? rows * C : k === 'shared' ? C : k === 'scalar' ? rows : 1);
  const slot = new Map<string, number>();
  [...plan.params.keys()].forEach((name, k) => slot.set(name, at(k)));
  const calls: KernelCall[] = [];
  const vectorOf = (o: string, k: RowValueKind): number => {
    if (k === 'vector') return slot.get(o)!;
    const y = place(E * rows * C);
    const xStrides = k === 'shared' ? [0, 1] : [1, 0];
    calls.push({ op: 'copy_strided', eqn, x: slot.get(o)!, y, elem: E, dims: [rows, C], xStrides, yStrides: [C, 1] });
    return y;
  };
  const rank = e.ins.reduce((a, t) => Math.max(a, t.shape.length), 0);
  const want = (k: number): RowValueKind => (e.outs[k]!.shape.length === rank ? 'vector' : 'scalar');
  // A step that makes a result in its result's layout writes straight into the result's slot.
  const direct = new Map<string, number>();
  plan.results.forEach((r, k) => {
    const maker = plan.steps.find((s) => s.out === r);
    if (maker !== undefined && maker.kind === want(k) && !direct.has(r)) direct.set(r, k);
  });
  for (const s of plan.steps) {
    const k = direct.get(s.out);
    const y = k === undefined ? place(E * size(s.kind)) : out(k);
    slot.set(s.out, y);
    if (s.op === 'reduce_sum' || s.op === 'reduce_max') {
      const x = slot.get(s.in[0] as string)!;
      if (typed) calls.push({ op: 'reduce_t', eqn, max: s.op === 'reduce_max', dtype, x, y, rows, C });
      else calls.push({ op: s.op === 'reduce_sum' ? 'row_sum' : 'row_max', eqn, x, y, rows, C });
    } else if (s.in.length === 1) {
      const x = slot.get(s.in[0] as string)!;
      if (typed) calls.push({ op: 'unary_t', eqn, fn: s.op as UnaryOp, dtype, x, y, n: size(s.kind) });
      else calls.push({ op: 'unary', eqn, fn: s.op as UnaryOp, x, y, n: size(s.kind) });
    } else {
      const [ka, kb] = s.kinds as [RowValueKind, RowValueKind];
      if (!typed && s.op === 'mul' && s.kind === 'vector' && ((ka === 'vector' && kb === 'scalar') || (ka === 'scalar' && kb === 'vector'))) {
        const [v, sc] = ka === 'vector' ? [s.in[0], s.in[1]] : [s.in[1], s.in[0]];
        calls.push({ op: 'row_scale', eqn, x: slot.get(v as string)!, s: slot.get(sc as string)!, y, rows, C });
        continue;
      }
      const operand = (o: Operand, k: RowValueKind): number => (isLiteral(o) ? io.literal(o.lit, dtype) : k === s.kind ? slot.get(o)! : vectorOf(o, k));
      const args = {
        eqn, fn: s.op as BinaryOp, a: operand(s.in[0]!, ka), b: operand(s.in[1]!, kb), y, n: size(s.kind),
        aScalar: ka === 'literal', bScalar: kb === 'literal',
      };
      calls.push(typed ? { op: 'binary_t', dtype, ...args } : { op: 'binary', ...args });
    }
  }
  plan.results.forEach((r, k) => {
    if (direct.get(r) === k) return;
    const have = plan.steps.find((s) => s.out === r)?.kind ?? plan.params.get(r)!;
    if (have === 'shared' && want(k) === 'vector') {
      calls.push({ op: 'copy_strided', eqn, x: slot.get(r)!, y: out(k), elem: E, dims: [rows, C], xStrides: [0, 1], yStrides: [C, 1] });
    } else {
      calls.push({ op: 'copy', eqn, x: slot.get(r)!, y: out(k), bytes: E * size(have) });
    }
  });
  return calls;
}
