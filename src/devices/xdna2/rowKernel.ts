/**
 * The row kernel on one core: the body runs once per row (one lane per row, the row loop serialized),
 * every step through the same CoreMath as a pointwise core, with no workgroup memory and no barrier.
 * Body values are Float32Arrays: a vector of C elements or a scalar of one, broadcast where it meets a
 * vector. A sum adds in order through the core's adder; a max and a neg move patterns, as elsewhere.
 */
import type { Operand, RowBody, Shape } from '../../ir/types.js';
import { isLiteral, numel } from '../../ir/types.js';
import type { CoreMath } from './coreMath.js';
import { f32View, u32View } from './f32.js';
import { binaryFn, isCoreUnary, rowMaxBits, rowSum, selectMax, unaryFn } from './kernels.js';

const STEP_BINARY = ['add', 'sub', 'mul', 'div', 'max'] as const;

/** True when the core computes `op` as a row-kernel step. */
export function isCoreRowStep(op: string): boolean {
  return (STEP_BINARY as readonly string[]).includes(op) || isCoreUnary(op) || op === 'reduce_sum' || op === 'reduce_max';
}

function binaryStep(op: string, m: CoreMath, a: Float32Array, b: Float32Array): Float32Array {
  const n = Math.max(a.length, b.length);
  const sa = a.length === 1 ? 0 : 1;
  const sb = b.length === 1 ? 0 : 1;
  const out = new Float32Array(n);
  if (op === 'max') {
    const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
    const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
    const uo = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) uo[i] = selectMax(ua[i * sa]!, ub[i * sb]!);
    return out;
  }
  const fn = binaryFn(op as 'add' | 'sub' | 'mul' | 'div', m);
  for (let i = 0; i < n; i++) out[i] = fn(a[i * sa]!, b[i * sb]!);
  return out;
}

function unaryStep(op: string, m: CoreMath, a: Float32Array): Float32Array {
  const out = new Float32Array(a.length);
  if (op === 'neg') {
    const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
    const uo = new Uint32Array(out.buffer);
    for (let i = 0; i < a.length; i++) uo[i] = (ua[i]! ^ 0x80000000) >>> 0;
    return out;
  }
  const fn = unaryFn(op as 'exp', m);
  for (let i = 0; i < a.length; i++) out[i] = fn(a[i]!);
  return out;
}

function bodyStep(op: string, m: CoreMath, args: readonly Float32Array[]): Float32Array {
  const a = args[0]!;
  if (op === 'reduce_sum') return Float32Array.of(rowSum(m, a, 0, a.length));
  if (op === 'reduce_max') {
    const out = new Float32Array(1);
    new Uint32Array(out.buffer)[0] = rowMaxBits(new Uint32Array(a.buffer, a.byteOffset, a.length), 0, a.length);
    return out;
  }
  if (args.length === 2) return binaryStep(op, m, a, args[1]!);
  return unaryStep(op, m, a);
}

/** One row-kernel operand: its bytes and shape (`[..., C]` per row, or a shared `[C]` row). */
export interface RowOperand {
  readonly bytes: Uint8Array;
  readonly shape: Shape;
}

/**
 * Runs `body` over every row of the operands; returns one byte array per body result: `[..., C]` for
 * a vector result, `[...]` for a scalar one (`vector[k]` says which).
 */
export function rowKernelCore(m: CoreMath, body: RowBody, ins: readonly RowOperand[], rowsShape: Shape, vector: readonly boolean[]): Uint8Array[] {
  const c = rowsShape[rowsShape.length - 1] ?? 0;
  const count = numel(rowsShape.slice(0, -1));
  const views = ins.map((o) => ({ f: f32View(o.bytes), shared: o.shape.length === 1 }));
  const outs = body.results.map((_, k) => new Uint8Array((vector[k] ? count * c : count) * 4));
  const outViews = outs.map((o) => u32View(o));
  const lit = (o: Operand): Float32Array | undefined => (isLiteral(o) ? Float32Array.of(o.lit) : undefined);
  const lits = body.steps.map((s) => s.in.map(lit));
  for (let r = 0; r < count; r++) {
    const env = new Map<string, Float32Array>();
    body.params.forEach((p, j) => {
      const v = views[j]!;
      env.set(p, v.shared ? v.f : v.f.subarray(r * c, (r + 1) * c));
    });
    body.steps.forEach((s, i) => {
      const args = s.in.map((o, j) => lits[i]![j] ?? env.get(o as string)!);
      env.set(s.out, bodyStep(s.op, m, args));
    });
    body.results.forEach((name, k) => {
      const v = env.get(name)!;
      const bits = new Uint32Array(v.buffer, v.byteOffset, v.length);
      if (vector[k]) {
        // A scalar result named where a vector is expected cannot pass the body's typing; copy what is there.
        outViews[k]!.set(bits.length === c ? bits : new Uint32Array(c).fill(bits[0] ?? 0), r * c);
      } else outViews[k]![r] = bits[0] ?? 0;
    });
  }
  return outs;
}
