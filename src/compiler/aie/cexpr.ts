/**
 * C++ pieces of the AIE kernels: element types, exact literals and the scalar expression of each op.
 * Every kernel is the ordinary scalar body (the thread grid turned into loops), so an op is one C
 * expression over its operands' expressions. Float literals are written as their bit patterns, so the
 * core computes with exactly the literal the program holds (NaN payloads and -0 included).
 */
import { CapabilityMissing } from '../../errors/index.js';
import type { DType, Literal } from '../../ir/types.js';

/** The C element type of a dtype; CapabilityMissing for one no AIE core carries. */
export function ctype(d: DType, eqn: number, op: string): string {
  switch (d) {
    case 'f32': return 'float';
    case 'i32': return 'int32_t';
    case 'bool': return 'uint8_t';
    case 'f16': case 'bf16': throw new CapabilityMissing(eqn, op, `aie.dtype.${d}`);
  }
}

/** The helpers every kernel source starts with (bit-exact literals, IEEE max/min, the clamped exp). */
export const PRELUDE = [
  '#include <stdint.h>',
  '#include <string.h>',
  '#include <math.h>',
  '',
  'static inline float f32_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }',
  '// max and min as the program format defines them: a NaN operand gives NaN, +0 orders above -0.',
  'static inline float max_f32(float a, float b) { if (a != a || b != b) return a + b; if (a == b) return signbit(a) ? b : a; return a > b ? a : b; }',
  'static inline float min_f32(float a, float b) { if (a != a || b != b) return a + b; if (a == b) return signbit(a) ? a : b; return a < b ? a : b; }',
  '// The core clamps exp\'s argument to +-88, so larger arguments saturate instead of overflowing.',
  'static inline float exp_f32(float x) { return expf(x < -88.0f ? -88.0f : (x > 88.0f ? 88.0f : x)); }',
  'static inline float logistic_f32(float x) { if (x >= 0.0f) return 1.0f / (1.0f + expf(-x)); float e = expf(x); return e / (1.0f + e); }',
  '// i32 arithmetic wraps, computed in uint32_t so it is defined behaviour.',
  'static inline int32_t wrap_i32(uint32_t x) { int32_t r; memcpy(&r, &x, 4); return r; }',
  'static inline int32_t div_i32(int32_t a, int32_t b) { return b == -1 ? wrap_i32(0u - (uint32_t)a) : a / b; }',
  '',
].join('\n');

/** An exact C literal of `l` in `dtype`. */
export function cliteral(l: Literal, dtype: DType): string {
  switch (dtype) {
    case 'f32': {
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, l.lit, true);
      return `f32_bits(0x${view.getUint32(0, true).toString(16).padStart(8, '0')}u)`;
    }
    case 'i32': return l.lit === -(2 ** 31) ? '(-2147483647 - 1)' : `(int32_t)${l.lit}`;
    case 'bool': return l.lit ? '(uint8_t)1' : '(uint8_t)0';
    default: throw new Error(`no C literal for ${dtype}`);
  }
}

/** The C expression of a binary op on operand expressions `a`, `b` of `dtype`. */
export function binaryExpr(op: string, dtype: DType, a: string, b: string, eqn: number): string {
  if (dtype === 'i32') {
    switch (op) {
      case 'add': return `wrap_i32((uint32_t)${a} + (uint32_t)${b})`;
      case 'sub': return `wrap_i32((uint32_t)${a} - (uint32_t)${b})`;
      case 'mul': return `wrap_i32((uint32_t)${a} * (uint32_t)${b})`;
      case 'div': return `div_i32(${a}, ${b})`;
      case 'max': return `(${a} > ${b} ? ${a} : ${b})`;
      case 'min': return `(${a} < ${b} ? ${a} : ${b})`;
      case 'ge': return `(uint8_t)(${a} >= ${b})`;
    }
  } else if (dtype === 'f32') {
    switch (op) {
      case 'add': return `(${a} + ${b})`;
      case 'sub': return `(${a} - ${b})`;
      case 'mul': return `(${a} * ${b})`;
      case 'div': return `(${a} / ${b})`;
      case 'max': return `max_f32(${a}, ${b})`;
      case 'min': return `min_f32(${a}, ${b})`;
      case 'ge': return `(uint8_t)(${a} >= ${b})`;
    }
  }
  throw new CapabilityMissing(eqn, op, `aie.core.${op}.${dtype}`);
}

/** The C expression of a unary op on operand expression `x` of `dtype`. */
export function unaryExpr(op: string, dtype: DType, x: string, eqn: number): string {
  if (dtype === 'i32') {
    if (op === 'neg') return `wrap_i32(0u - (uint32_t)${x})`;
    if (op === 'abs') return `(${x} < 0 ? wrap_i32(0u - (uint32_t)${x}) : ${x})`;
  } else if (dtype === 'f32') {
    switch (op) {
      case 'neg': return `(-${x})`;
      case 'recip': return `(1.0f / ${x})`;
      case 'exp': return `exp_f32(${x})`;
      case 'log': return `logf(${x})`;
      case 'tanh': return `tanhf(${x})`;
      case 'erf': return `erff(${x})`;
      case 'sqrt': return `sqrtf(${x})`;
      case 'rsqrt': return `(1.0f / sqrtf(${x}))`;
      case 'abs': return `fabsf(${x})`;
      case 'logistic': return `logistic_f32(${x})`;
      case 'sin': return `sinf(${x})`;
      case 'cos': return `cosf(${x})`;
    }
  }
  throw new CapabilityMissing(eqn, op, `aie.core.${op}.${dtype}`);
}

/** The identity a row reduction starts from, and the step that folds element `x` into `acc`. */
export function reduceExpr(op: string, dtype: DType, acc: string, x: string, eqn: number): { init: string; step: string } {
  if (op === 'reduce_sum') {
    // The oracle's empty float sum is -0 (so a sum of -0s stays -0); an i32 sum wraps from 0.
    return dtype === 'i32' ? { init: '0', step: binaryExpr('add', dtype, acc, x, eqn) } : { init: '-0.0f', step: `(${acc} + ${x})` };
  }
  if (op === 'reduce_max') {
    return dtype === 'i32' ? { init: '(-2147483647 - 1)', step: binaryExpr('max', dtype, acc, x, eqn) } : { init: '-INFINITY', step: `max_f32(${acc}, ${x})` };
  }
  throw new CapabilityMissing(eqn, op, `aie.core.${op}`);
}
