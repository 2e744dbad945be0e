/**
 * The pieces a Qwen3 program is made of, each a few equations of the program format written with the
 * builder: RMSNorm, a projection by a weight in any dtype, neox and normal rope, causal softmax and SwiGLU. Every
 * value is f32; a weight in another float dtype is converted where it is used. The norms, softmax and
 * SwiGLU come in two forms: one row kernel each (fused), or the plain ops a target that recognizes no
 * composite takes (the `...Plain` functions: no row kernel, no rsqrt or logistic).
 */
import { isQuantized } from '../../ir/types.js';
import type { ProgramBuilder, Value } from '../../ops/builder.js';
import type { YarnParams } from '../arch/types.js';

/** A weight as f32 elements (a quantized one is left as it is: the three ops that take it take it so). */
function asF32(p: ProgramBuilder, w: Value): Value {
  return isQuantized(w.dtype) || w.dtype === 'f32' ? w : p.convert(w, 'f32');
}

/**
 * RMSNorm over the last axis, `x / sqrt(mean(x^2) + eps) * w`, in one row kernel. The square root and
 * the division (rather than rsqrt) are what the XDNA2 derives a bound for, so it takes the norm.
 */
export function rmsNorm(p: ProgramBuilder, x: Value, w: Value, eps: number): Value {
  const c = x.shape[x.shape.length - 1]!;
  return p.rowKernel([x, asF32(p, w)], (b, xv, wv) => {
    const ms = b.div(b.reduceSum(b.mul(xv, xv)), c);
    return b.mul(b.div(xv, b.sqrt(b.add(ms, eps))), wv);
  })[0]!;
}

/** `r [..., C]` reduced over its last axis and broadcast back to `shape` (the reduced value per row). */
function perRow(p: ProgramBuilder, r: Value, shape: readonly number[]): Value {
  return p.broadcast(r, shape, shape.slice(0, -1).map((_, i) => i));
}

/** RMSNorm as rmsNorm computes it, from plain ops. */
export function rmsNormPlain(p: ProgramBuilder, x: Value, w: Value, eps: number): Value {
  const last = x.shape.length - 1;
  const ms = p.div(p.reduceSum(p.mul(x, x), [last]), x.shape[last]!);
  const xn = p.div(x, perRow(p, p.sqrt(p.add(ms, eps)), x.shape));
  return p.mul(xn, p.broadcast(asF32(p, w), x.shape, [last]));
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

/** An f32 vector `[n]` of these numbers, built from literals (each rounded to f32): a model directory's rope factors. */
export function constantVector(p: ProgramBuilder, values: readonly number[]): Value {
  const zero = p.mul(p.iota([1], 0, 'f32'), 0);
  return p.concat(values.map((v) => p.add(zero, v)), 0);
}

/**
 * The frequency indices between which YaRN's ramp runs, for rope on `dims` elements with base `theta`:
 * the index at which a frequency turns `beta` times over the original context, rounded down for
 * beta_fast and up for beta_slow, within [0, dims - 1] (ggml's rope_yarn_corr_dims, in f32 as it is).
 */
function yarnCorrDims(dims: number, theta: number, y: YarnParams): [number, number] {
  const f = Math.fround;
  const at = (beta: number) => f(f(dims * f(Math.log(f(y.origContext / f(beta * 2 * f(Math.PI)))))) / f(2 * f(Math.log(theta))));
  return [Math.max(0, Math.floor(at(y.betaFast))), Math.min(dims - 1, Math.ceil(at(y.betaSlow)))];
}

/**
 * The cos and sin of rope's angles `[T, D/2]`: position times `theta^(-2i/D)`, computed in the program.
 * Rope scaling, when a file declares it: the positions times `freqScale` (linear scaling), each
 * frequency divided by its factor in `freqs` `[D/2]` (llama3's rope_freqs, LongRoPE's factors), both
 * tables times `attnFactor` (LongRoPE's), as llama.cpp's rope does. With `yarn`, frequency i is
 * scaled by `freqScale` only partly, as ggml's rope_yarn does: by freqScale (1 - r_i) + r_i, where
 * r_i = extFactor (1 - clamp((i - lo) / max(0.001, hi - lo), 0, 1)) for the correction dims [lo, hi]
 * (fast frequencies extrapolate, slow ones interpolate), and both tables are times
 * attnFactor (1 + 0.1 ln(1 / freqScale)) when extFactor is not 0.
 */
export function ropeTables(p: ProgramBuilder, positions: Value, headDim: number, theta: number, scaling: { readonly freqs?: Value; readonly freqScale?: number; readonly attnFactor?: number; readonly yarn?: YarnParams } = {}): { cos: Value; sin: Value } {
  const t = positions.shape[0]!;
  const half = headDim / 2;
  let invFreq = p.exp(p.mul(p.iota([half], 0, 'f32'), (-2 * Math.log(theta)) / headDim));
  if (scaling.freqs !== undefined) invFreq = p.div(invFreq, asF32(p, scaling.freqs));
  const fs = scaling.freqScale ?? 1;
  let pos = p.broadcast(p.convert(positions, 'f32'), [t, half], [0]);
  let m = scaling.attnFactor ?? 1;
  const y = scaling.yarn;
  if (y !== undefined) {
    const [lo, hi] = yarnCorrDims(headDim, theta, y);
    const ramp = p.mul(p.sub(1, p.min(p.max(p.div(p.sub(p.iota([half], 0, 'f32'), lo), Math.max(0.001, hi - lo)), 0), 1)), y.extFactor);
    // freqScale (1 - r) + r = freqScale + r (1 - freqScale)
    invFreq = p.mul(invFreq, p.add(p.mul(ramp, 1 - fs), fs));
    if (y.extFactor !== 0) m *= 1 + 0.1 * Math.log(1 / fs);
  } else if (fs !== 1) {
    pos = p.mul(pos, fs);
  }
  const angle = p.mul(pos, p.broadcast(invFreq, [t, half], [1]));
  // The attention factor scales both (ggml's rope multiplies cos and sin by it).
  if (m !== 1) return { cos: p.mul(p.cos(angle), m), sin: p.mul(p.sin(angle), m) };
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

/**
 * Normal rope (llama.cpp's LLAMA_ROPE_TYPE_NORM, Llama's) on `x [T, H, D]`: each adjacent pair
 * (x[2i], x[2i+1]) turns by angle i as neox turns (x[i], x[i + D/2]).
 */
export function ropeNormal(p: ProgramBuilder, x: Value, tables: { cos: Value; sin: Value }): Value {
  const [t, h, d] = x.shape as [number, number, number];
  const half = d / 2;
  const pairs = p.reshape(x, [t, h, half, 2]);
  const x1 = p.reshape(p.slice(pairs, [0, 0, 0, 0], [t, h, half, 1]), [t, h, half]);
  const x2 = p.reshape(p.slice(pairs, [0, 0, 0, 1], [t, h, half, 2]), [t, h, half]);
  const cos = p.broadcast(tables.cos, [t, h, half], [0, 2]);
  const sin = p.broadcast(tables.sin, [t, h, half], [0, 2]);
  const y1 = p.sub(p.mul(x1, cos), p.mul(x2, sin));
  const y2 = p.add(p.mul(x2, cos), p.mul(x1, sin));
  return p.reshape(p.concat([p.reshape(y1, [t, h, half, 1]), p.reshape(y2, [t, h, half, 1])], 3), [t, h, d]);
}

/** `turn` (rope or ropeNormal) on the first `dims` elements of each head of `x [T, H, D]`, the rest as they are (partial rotary). */
export function ropePartial(p: ProgramBuilder, x: Value, tables: { cos: Value; sin: Value }, dims: number, turn: typeof rope): Value {
  const [t, h, d] = x.shape as [number, number, number];
  if (dims === d) return turn(p, x, tables);
  return p.concat([turn(p, p.slice(x, [0, 0, 0], [t, h, dims]), tables), p.slice(x, [0, 0, dims], [t, h, d])], 2);
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

/** maskedSoftmax from plain ops. */
export function maskedSoftmaxPlain(p: ProgramBuilder, scores: Value, bias: Value, scale: number): Value {
  const last = scores.shape.length - 1;
  const a = p.add(p.mul(scores, scale), bias);
  const e = p.exp(p.sub(a, perRow(p, p.reduceMax(a, [last]), a.shape)));
  return p.div(e, perRow(p, p.reduceSum(e, [last]), e.shape));
}

/** SwiGLU's gate: `silu(gate) * up`. */
export function swiglu(p: ProgramBuilder, gate: Value, up: Value): Value {
  return p.rowKernel([gate, up], (b, g, u) => b.mul(b.mul(g, b.logistic(g)), u))[0]!;
}

/**
 * SwiGLU from plain ops: `gate / (1 + exp(-gate)) * up`. Where exp overflows (a gate below about -11
 * in FP16) the quotient is the -0 silu tends to.
 */
export function swigluPlain(p: ProgramBuilder, gate: Value, up: Value): Value {
  return p.mul(p.div(gate, p.add(p.exp(p.neg(gate)), 1)), up);
}

/**
 * GeGLU: `gelu(gate) * up` with GELU's tanh approximation, `0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))`
 * (llama.cpp's ggml_gelu), from plain ops in both forms.
 */
export function geglu(p: ProgramBuilder, gate: Value, up: Value): Value {
  const inner = p.mul(p.add(gate, p.mul(p.mul(p.mul(gate, gate), gate), 0.044715)), Math.sqrt(2 / Math.PI));
  return p.mul(p.mul(p.mul(gate, 0.5), p.add(p.tanh(inner), 1)), up);
}

/**
 * The causal mask of a sliding window as an additive bias `[T, C]`: 0 where positions[t] - window <
 * j <= positions[t] (llama.cpp's standard SWA masks p1 - p0 >= window), MASKED elsewhere.
 */
export function slidingBias(p: ProgramBuilder, positions: Value, ctx: number, window: number): Value {
  const t = positions.shape[0]!;
  const pos = p.broadcast(positions, [t, ctx], [0]);
  const j = p.iota([t, ctx], 1, 'i32');
  const visible = p.mul(p.convert(p.ge(pos, j), 'f32'), p.convert(p.ge(j, p.sub(pos, window - 1)), 'f32'));
  return p.mul(p.sub(visible, 1), -MASKED);
}

/** What masks a score in a mask handed in as an input: the largest finite FP16 magnitude, which FP16 stores. */
export const MASKED_INPUT = -65504;

/** Rope's cos and sin tables `[T, D/2]` for `positions`, as rope's inputs (computed in float64, stored f32); `freqScale` as ropeTables'. */
export function ropeTableValues(positions: readonly number[], headDim: number, theta: number, freqScale = 1): { cos: Float64Array; sin: Float64Array } {
  const half = headDim / 2;
  const cos = new Float64Array(positions.length * half);
  const sin = new Float64Array(positions.length * half);
  for (let t = 0; t < positions.length; t++) {
    for (let i = 0; i < half; i++) {
      const angle = positions[t]! * freqScale * Math.exp((i * -2 * Math.log(theta)) / headDim);
      cos[t * half + i] = Math.fround(Math.cos(angle));
      sin[t * half + i] = Math.fround(Math.sin(angle));
    }
  }
  return { cos, sin };
}

/** The causal mask `[T, C]` as an input: 0 where cache position j <= positions[t], MASKED_INPUT elsewhere. */
export function causalMaskValues(positions: readonly number[], ctx: number): Float64Array {
  const m = new Float64Array(positions.length * ctx);
  for (let t = 0; t < positions.length; t++) for (let j = 0; j < ctx; j++) m[t * ctx + j] = j <= positions[t]! ? 0 : MASKED_INPUT;
  return m;
}
