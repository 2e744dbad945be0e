/**
 * The cores' kernels over raw little-endian bytes: the ordinary kernel bodies with their thread grid
 * turned into loops. Arithmetic goes through a CoreMath; what the core only moves or selects (neg's
 * sign flip, max's select, gather's copy) goes through 32-bit patterns, so NaN payloads and -0 survive.
 */
import type { DType, Shape } from '../../ir/types.js';
import { dtypeBytes, numel } from '../../ir/types.js';
import type { CoreMath } from './coreMath.js';
import { f32View, orderKey, u32View } from './f32.js';

/** A tensor as the core holds it: a dtype, a shape and its bytes (a private, 4-byte-aligned copy). */
export interface CoreValue {
  readonly dtype: DType;
  readonly shape: Shape;
  readonly bytes: Uint8Array;
}

export const CORE_BINARY = ['add', 'sub', 'mul', 'div', 'max', 'ge'] as const;
export type CoreBinary = (typeof CORE_BINARY)[number];
export const CORE_UNARY = ['neg', 'recip', 'exp', 'log', 'tanh', 'erf', 'sqrt'] as const;
export type CoreUnary = (typeof CORE_UNARY)[number];

/** True for the binary ops the core computes. */
export function isCoreBinary(op: string): op is CoreBinary {
  return (CORE_BINARY as readonly string[]).includes(op);
}

/** True for the unary ops the core computes. */
export function isCoreUnary(op: string): op is CoreUnary {
  return (CORE_UNARY as readonly string[]).includes(op);
}

/** The f32 function of an arithmetic binary op (max and ge are selects and compares, handled apart). */
export function binaryFn(op: 'add' | 'sub' | 'mul' | 'div', m: CoreMath): (a: number, b: number) => number {
  switch (op) {
    case 'add': return m.add;
    case 'sub': return m.sub;
    case 'mul': return m.mul;
    case 'div': return m.div;
  }
}

/** The f32 function of a unary op whose result is computed (neg is a sign flip, handled apart). */
export function unaryFn(op: Exclude<CoreUnary, 'neg'>, m: CoreMath): (x: number) => number {
  switch (op) {
    case 'recip': return m.recip;
    case 'exp': return m.exp;
    case 'log': return m.log;
    case 'tanh': return m.tanh;
    case 'erf': return m.erf;
    case 'sqrt': return m.sqrt;
  }
}

/**
 * An f32 binary op over two operands of `n` elements each, where an operand of one element is a scalar
 * broadcast to every element. `out` is f32 (bool, one byte each, for ge).
 */
export function binaryKernel(op: CoreBinary, m: CoreMath, a: Uint8Array, b: Uint8Array, n: number): Uint8Array {
  const fa = f32View(a);
  const fb = f32View(b);
  const sa = fa.length === 1 ? 0 : 1;
  const sb = fb.length === 1 ? 0 : 1;
  if (op === 'ge') {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = m.ge(fa[i * sa]!, fb[i * sb]!) ? 1 : 0;
    return out;
  }
  const out = new Uint8Array(n * 4);
  if (op === 'max') {
    // Compare the patterns' keys, copy the chosen operand's pattern (see CoreMath.max).
    const ua = u32View(a);
    const ub = u32View(b);
    const uo = u32View(out);
    for (let i = 0; i < n; i++) uo[i] = selectMax(ua[i * sa]!, ub[i * sb]!);
    return out;
  }
  const fo = f32View(out);
  const fn = binaryFn(op, m);
  for (let i = 0; i < n; i++) fo[i] = fn(fa[i * sa]!, fb[i * sb]!);
  return out;
}

/** An f32 unary op over every element; neg flips the sign bit of the pattern, NaN payloads included. */
export function unaryKernel(op: CoreUnary, m: CoreMath, a: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  if (op === 'neg') {
    const ua = u32View(a);
    const uo = u32View(out);
    for (let i = 0; i < ua.length; i++) uo[i] = (ua[i]! ^ 0x80000000) >>> 0;
    return out;
  }
  const fa = f32View(a);
  const fo = f32View(out);
  const fn = unaryFn(op, m);
  for (let i = 0; i < fa.length; i++) fo[i] = fn(fa[i]!);
  return out;
}

/** A last-axis sum of `[..., C]` f32, one lane per row: the row's elements through the adder in order. */
export function rowSumKernel(m: CoreMath, a: Uint8Array, shape: Shape): Uint8Array {
  const c = shape[shape.length - 1] ?? 1;
  const rows = numel(shape.slice(0, -1));
  const fa = f32View(a);
  const out = new Uint8Array(rows * 4);
  const fo = f32View(out);
  for (let r = 0; r < rows; r++) fo[r] = rowSum(m, fa, r * c, c);
  return out;
}

/** The in-order sum of `c` elements from `at`; an empty row is +0, a row of -0 is -0. */
export function rowSum(m: CoreMath, x: Float32Array, at: number, c: number): number {
  if (c === 0) return 0;
  let acc = x[at]!;
  for (let j = 1; j < c; j++) acc = m.add(acc, x[at + j]!);
  return acc;
}

/** A last-axis max of `[..., C]` f32 by compare and select, copying the kept element's pattern. */
export function rowMaxKernel(a: Uint8Array, shape: Shape): Uint8Array {
  const c = shape[shape.length - 1] ?? 1;
  const rows = numel(shape.slice(0, -1));
  const out = new Uint8Array(rows * 4);
  const uo = u32View(out);
  const ua = u32View(a);
  for (let r = 0; r < rows; r++) uo[r] = rowMaxBits(ua, r * c, c);
  return out;
}

/** The pattern max selects of two patterns: b when a's key is below b's, else a (CoreMath.max). */
export function selectMax(a: number, b: number): number {
  return orderKey(a) < orderKey(b) ? b : a;
}

/** The pattern of a row's max: compare and select in order; an empty row is -inf. */
export function rowMaxBits(u: Uint32Array, at: number, c: number): number {
  if (c === 0) return 0xff800000;
  let best = u[at]!;
  for (let j = 1; j < c; j++) best = selectMax(best, u[at + j]!);
  return best;
}

/**
 * gather along `axis` with i32 indices: each output element is a copy of a source element's bytes (any
 * element width), so NaN payloads and -0 survive. An index is not checked (as on the hardware and the
 * GPU kernel): the flat element address is computed from it and wrapped modulo the source's element
 * count, so an index off the axis reads some other element of the same source and never faults.
 */
export function gatherKernel(src: CoreValue, idx: Uint8Array, axis: number): Uint8Array {
  const w = dtypeBytes(src.dtype);
  const total = numel(src.shape);
  const extent = src.shape[axis] ?? 0;
  const outer = numel(src.shape.slice(0, axis));
  const inner = numel(src.shape.slice(axis + 1));
  const ix = new Int32Array(idx.buffer, idx.byteOffset, idx.byteLength >>> 2);
  const k = ix.length;
  const out = new Uint8Array(outer * k * inner * w);
  if (total === 0) return out;
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      const base = (o * extent + ix[j]!) * inner;
      for (let e = 0; e < inner; e++) {
        const at = (((base + e) % total) + total) % total;
        out.set(src.bytes.subarray(at * w, at * w + w), ((o * k + j) * inner + e) * w);
      }
    }
  }
  return out;
}
