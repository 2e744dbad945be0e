/**
 * The NPU's arithmetic, simulated: it computes in FP16. Every float operand is narrowed to FP16 on the
 * way in (an F32 operand silently, as the driver narrows an F32 graph) and every float result is rounded
 * to FP16 (roundF16) on the way out, except where the driver fused a Convert to F32 into the layer
 * (`fusedF32`): then the result leaves the f32 accumulator rounded to F32.
 *
 * Accumulation: reductions and matmul accumulate in f32, in order, and round once at the end, as the
 * NPU's MAC arrays do (FP16 products are exact in f32, so a dot product of FP16 values only rounds in its
 * f32 sums). On integer-valued data whose partial sums stay below 2^24 that is exact, so it matches the
 * oracle's f64 accumulation bit for bit. Exp, divide and sqrt compute in f32 and round to FP16 (the
 * f32-then-f16 double rounding of divide and sqrt is innocuous, 24 >= 2 * 11 + 2; exp is within an FP16
 * ulp). Neg is 0 - x, so the NPU's neg of +0 is +0 (the docs: the sign of a zero is not promised).
 * I32 arithmetic (index computations) wraps, as the oracle's.
 */
import type { Tensor } from '../../ir/tensor.js';
import { numel } from '../../ir/types.js';
import { roundF16 } from '../../numerics/float16.js';
import { forEachIndex, stridesOf } from '../../ops/common.js';
import type { GraphNode, NpuPrecision } from '../../compiler/openvino/blobFormat.js';

export type BinaryOp = 'Add' | 'Subtract' | 'Multiply' | 'Divide' | 'Maximum' | 'GreaterEqual';
export type UnaryOp = 'Exp' | 'Negative' | 'Sqrt';

const isFloat = (p: string) => p === 'f16' || p === 'f32';

/** The rounding of a float layer's result: FP16, or F32 where a Convert to F32 was fused into it. */
function outRounding(node: GraphNode): (x: number) => number {
  return node.fusedF32 ? Math.fround : roundF16;
}

const FLOAT_BINARY: { readonly [K in BinaryOp]: (x: number, y: number) => number } = {
  Add: (x, y) => x + y,
  Subtract: (x, y) => x - y,
  Multiply: (x, y) => x * y,
  // Computed in f32, as the NPU's divide; rounding to FP16 after it is the correctly rounded quotient.
  Divide: (x, y) => Math.fround(x / y),
  Maximum: (x, y) => Math.max(x, y),
  GreaterEqual: (x, y) => (x >= y ? 1 : 0),
};

const INT_BINARY: { readonly [K in BinaryOp]: (x: number, y: number) => number } = {
  Add: (x, y) => (x + y) | 0,
  Subtract: (x, y) => (x - y) | 0,
  Multiply: (x, y) => Math.imul(x, y),
  // The NPU does not trap on an integer division by zero; its result is undefined, and here it is 0.
  Divide: (x, y) => (y === 0 ? 0 : Math.trunc(x / y) | 0),
  Maximum: (x, y) => Math.max(x, y),
  GreaterEqual: (x, y) => (x >= y ? 1 : 0),
};

const FLOAT_UNARY: { readonly [K in UnaryOp]: (x: number) => number } = {
  Exp: (x) => Math.fround(Math.exp(x)),
  // A subtraction from zero, not a sign flip: the NPU's neg of +0 is +0.
  Negative: (x) => 0 - x,
  Sqrt: (x) => Math.fround(Math.sqrt(x)),
};

/** The flat index into `inDims` (numpy-broadcast against `outDims`) of every output element. */
function broadcastIndex(inDims: readonly number[], outDims: readonly number[]): (idx: readonly number[]) => number {
  const st = stridesOf(inDims);
  const lead = outDims.length - inDims.length;
  return (idx) => {
    let o = 0;
    for (let k = 0; k < inDims.length; k++) if (inDims[k] !== 1) o += idx[lead + k]! * st[k]!;
    return o;
  };
}

/** An elementwise binary layer with numpy broadcasting (a literal is a broadcast scalar constant). */
export function binary(node: GraphNode, op: BinaryOp, a: Tensor, b: Tensor): Tensor {
  const dims = node.dims;
  const out = new Float64Array(numel(dims));
  const ia = broadcastIndex(a.shape, dims);
  const ib = broadcastIndex(b.shape, dims);
  if (isFloat(a.dtype)) {
    const f = FLOAT_BINARY[op];
    const round = op === 'GreaterEqual' ? (x: number) => x : outRounding(node);
    forEachIndex(dims, (idx, flat) => { out[flat] = round(f(roundF16(a.data[ia(idx)]!), roundF16(b.data[ib(idx)]!))); });
  } else {
    const f = INT_BINARY[op];
    forEachIndex(dims, (idx, flat) => { out[flat] = f(a.data[ia(idx)]!, b.data[ib(idx)]!); });
  }
  return { dtype: node.precision, shape: [...dims], data: out };
}

/** An elementwise unary layer. */
export function unary(node: GraphNode, op: UnaryOp, a: Tensor): Tensor {
  const out = new Float64Array(a.data.length);
  if (isFloat(a.dtype)) {
    const f = FLOAT_UNARY[op];
    const round = outRounding(node);
    for (let i = 0; i < out.length; i++) out[i] = round(f(roundF16(a.data[i]!)));
  } else {
    // Only Negative reaches here: the compiler refuses Exp and Sqrt of integers.
    for (let i = 0; i < out.length; i++) out[i] = (0 - a.data[i]!) | 0;
  }
  return { dtype: node.precision, shape: [...node.dims], data: out };
}

/** Converts one element to `to`: FP16 rounds, F32 is exact from FP16, I32 truncates and saturates (NaN is 0). */
export function convertElement(to: NpuPrecision, x: number): number {
  switch (to) {
    case 'f16': return roundF16(x);
    case 'f32': return Math.fround(x);
    case 'i32': return Number.isNaN(x) ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(x)));
    case 'bool': return x !== 0 && !Number.isNaN(x) ? 1 : 0;
  }
}

/** A Convert layer: the F32 boundary of a narrowed graph (and index casts). */
export function convert(node: GraphNode, a: Tensor): Tensor {
  const out = new Float64Array(a.data.length);
  for (let i = 0; i < out.length; i++) out[i] = convertElement(node.precision, a.data[i]!);
  return { dtype: node.precision, shape: [...node.dims], data: out };
}

/** ReduceSum and ReduceMax over `axes`: f32 accumulation in row-major order, one rounding at the end. */
export function reduce(node: GraphNode, op: 'ReduceSum' | 'ReduceMax', a: Tensor, axes: readonly number[]): Tensor {
  const kept = a.shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const outStrides = stridesOf(kept.map((i) => a.shape[i]!));
  const map = new Array<number>(a.shape.length).fill(0);
  kept.forEach((dim, k) => { map[dim] = outStrides[k]!; });
  const n = numel(kept.map((i) => a.shape[i]!));
  const float = isFloat(a.dtype);
  const init = op === 'ReduceSum' ? (float ? -0 : 0) : (float ? -Infinity : -(2 ** 31));
  const acc = new Float64Array(n).fill(init);
  const count = numel(axes.map((ax) => a.shape[ax]!));
  forEachIndex(a.shape, (idx, flat) => {
    let o = 0;
    for (let k = 0; k < idx.length; k++) o += idx[k]! * map[k]!;
    const x = float ? roundF16(a.data[flat]!) : a.data[flat]!;
    const s = acc[o]!;
    if (op === 'ReduceMax') acc[o] = Math.max(s, x);
    else acc[o] = float ? Math.fround(s + x) : (s + x) | 0;
  });
  const round = float ? outRounding(node) : (x: number) => x;
  const out = new Float64Array(n);
  // An empty sum is +0; a sum of negative zeros stays -0, as IEEE addition gives.
  for (let i = 0; i < n; i++) out[i] = round(op === 'ReduceSum' && count === 0 ? 0 : acc[i]!);
  return { dtype: node.precision, shape: [...node.dims], data: out };
}

/** MatMul over equal batch dims, optionally transposing either operand's last two dims; f32 accumulation. */
export function matmul(node: GraphNode, a: Tensor, b: Tensor, transposeA: boolean, transposeB: boolean): Tensor {
  const r = a.shape.length;
  const [m, k] = transposeA ? [a.shape[r - 1]!, a.shape[r - 2]!] : [a.shape[r - 2]!, a.shape[r - 1]!];
  const n = transposeB ? b.shape[r - 2]! : b.shape[r - 1]!;
  const batch = numel(a.shape.slice(0, r - 2));
  const at = (p: number, i: number, q: number) => a.data[p * m * k + (transposeA ? q * m + i : i * k + q)]!;
  const bt = (p: number, q: number, j: number) => b.data[p * k * n + (transposeB ? j * k + q : q * n + j)]!;
  const float = isFloat(a.dtype);
  const round = float ? outRounding(node) : (x: number) => x;
  const out = new Float64Array(batch * m * n);
  for (let p = 0; p < batch; p++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = k === 0 || !float ? 0 : -0;
        for (let q = 0; q < k; q++) {
          acc = float ? Math.fround(acc + roundF16(at(p, i, q)) * roundF16(bt(p, q, j))) : (acc + Math.imul(at(p, i, q), bt(p, q, j))) | 0;
        }
        out[(p * m + i) * n + j] = round(acc);
      }
    }
  }
  return { dtype: node.precision, shape: [...node.dims], data: out };
}
