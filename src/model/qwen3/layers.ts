/**
 * The pieces a Qwen3 program is made of, each a few equations of the program format written with the
 * builder: RMSNorm (a row kernel), a projection by a weight in any dtype, neox rope, causal softmax
 * and SwiGLU. Every value is f32; a weight in another float dtype is converted where it is used.
 */
import { isQuantized } from '../../ir/types.js';
import type { ProgramBuilder, Value } from '../../ops/builder.js';

/** A weight as f32 elements (a quantized one is left as it is: the three ops that take it take it so). */
export function asF32(p: ProgramBuilder, w: Value): Value {
  return isQuantized(w.dtype) || w.dtype === 'f32' ? w : p.convert(w, 'f32');
}

/** RMSNorm over the last axis: `x * rsqrt(mean(x^2) + eps) * w`, as llama.cpp and transformers compute it. */
export function rmsNorm(p: ProgramBuilder, x: Value, w: Value, eps: number): Value {
  const c = x.shape[x.shape.length - 1]!;
  return p.rowKernel([x, asF32(p, w)], (b, xv, wv) => {
    const ms = b.div(b.reduceSum(b.mul(xv, xv)), c);
    return b.mul(b.mul(xv, b.rsqrt(b.add(ms, eps))), wv);
  })[0]!;
}

/**
 * `x [T, K]` times a weight stored `[N', K]` (N' >= n, the rows past `n` being padding): `[T, n]`.
 * A quantized weight is matmul's transposed right operand; a dense one is `(W x^T)^T`, which
 * transposes the activation rather than the weight.
 */
export function linear(p: ProgramBuilder, x: Value, w: Value, n: number): Value {
  const t = x.shape[0]!;
  let y: Value;
  if (isQuantized(w.dtype)) y = p.matmul(x, w);
  else y = p.transpose(p.matmul(asF32(p, w), p.transpose(x, [1, 0])), [1, 0]);
  return y.shape[1] === n ? y : p.slice(y, [0, 0], [t, n]);
}

/** The cos and sin of rope's angles `[T, D/2]`: position times `theta^(-2i/D)`, computed in the program. */
export function ropeTables(p: ProgramBuilder, positions: Value, headDim: number, theta: number): { cos: Value; sin: Value } {
  const t = positions.shape[0]!;
  const half = headDim / 2;
  const invFreq = p.exp(p.mul(p.iota([half], 0, 'f32'), (-2 * Math.log(theta)) / headDim));
  const pos = p.broadcast(p.convert(positions, 'f32'), [t, half], [0]);
  const angle = p.mul(pos, p.broadcast(invFreq, [t, half], [1]));
  return { cos: p.cos(angle), sin: p.sin(angle) };
}

/** Neox rope on `x [T, H, D]`: the halves (x1, x2) turn to (x1 cos - x2 sin, x2 cos + x1 sin). */
export function rope(p: ProgramBuilder, x: Value, tables: { cos: Value; sin: Value }): Value {
  const [t, h, d] = x.shape as [number, number, number];
  const half = d / 2;
  const cos = p.broadcast(tables.cos, [t, h, half], [0, 2]);
  const sin = p.broadcast(tables.sin, [t, h, half], [0, 2]);
  const x1 = p.slice(x, [0, 0, 0], [t, h, half]);
  const x2 = p.slice(x, [0, 0, half], [t, h, d]);
  const y1 = p.sub(p.mul(x1, cos), p.mul(x2, sin));
  const y2 = p.add(p.mul(x2, cos), p.mul(x1, sin));
  return p.concat([y1, y2], 2);
}

/** What masks a score: added to it, it leaves exp() exactly 0 after the row's max is taken off. */
export const MASKED = -1e30;

/**
 * The causal mask as an additive bias `[T, C]`: 0 where cache position j <= positions[t] (the token and
 * those before it), MASKED elsewhere (later tokens and cache slots not written yet).
 */
export function causalBias(p: ProgramBuilder, positions: Value, ctx: number): Value {
  const t = positions.shape[0]!;
  const visible = p.ge(p.broadcast(positions, [t, ctx], [0]), p.iota([t, ctx], 1, 'i32'));
  return p.mul(p.sub(p.convert(visible, 'f32'), 1), -MASKED);
}

/** softmax(scores * scale + bias) along the last axis, in one row kernel. */
export function maskedSoftmax(p: ProgramBuilder, scores: Value, bias: Value, scale: number): Value {
  return p.rowKernel([scores, bias], (b, s, m) => {
    const a = b.add(b.mul(s, scale), m);
    const e = b.exp(b.sub(a, b.reduceMax(a)));
    return b.div(e, b.reduceSum(e));
  })[0]!;
}

/** SwiGLU's gate: `silu(gate) * up`. */
export function swiglu(p: ProgramBuilder, gate: Value, up: Value): Value {
  return p.rowKernel([gate, up], (b, g, u) => b.mul(b.mul(g, b.logistic(g)), u))[0]!;
}
