/**
 * Scalars on the wire: numbers, or the strings JSON cannot write ("nan", "inf", "-inf", "-0"), and the
 * checks that a number is a value an integer dtype can hold. Shared by the program codec (literals),
 * validation and the tensor codec so that all three accept exactly the same spellings.
 */
import { roundToDtype } from '../numerics/float16.js';
import { DTYPES, QUANT_DTYPES, type AnyDType, type DType } from './types.js';

/** The number a wire scalar stands for, or undefined when it is not one. */
export function decodeWireNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  switch (v) {
    case 'nan': return NaN;
    case 'inf': return Infinity;
    case '-inf': return -Infinity;
    case '-0': return -0;
    default: return undefined;
  }
}

/** True for one of the format's dtype names. */
export function isDType(v: unknown): v is DType {
  return typeof v === 'string' && (DTYPES as readonly string[]).includes(v);
}

/** True for any dtype an arg may declare: an element dtype or a quantized weight dtype. */
export function isAnyDType(v: unknown): v is AnyDType {
  return isDType(v) || (typeof v === 'string' && (QUANT_DTYPES as readonly string[]).includes(v));
}

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

/**
 * Why `v` is not a value of an integer dtype (i32: an integer in range; bool: 0 or 1), or undefined when
 * it is one. Float dtypes accept every number: their values are rounded once to the dtype where used.
 */
export function integerValueProblem(dtype: DType, v: number): string | undefined {
  if (dtype === 'i32') {
    if (!Number.isInteger(v)) return `${String(v)} is not an integer, so not an i32 value`;
    if (v < I32_MIN || v > I32_MAX) return `${v} is outside the i32 range [${I32_MIN}, ${I32_MAX}]`;
  } else if (dtype === 'bool') {
    if (v !== 0 && v !== 1) return `${String(v)} is not a bool value (0 or 1)`;
  }
  return undefined;
}

/** A dtype list for messages: `f32, f16, bf16, i32 or bool`. */
export const DTYPE_LIST = `${DTYPES.slice(0, -1).join(', ')} or ${DTYPES[DTYPES.length - 1]}`;

/** The dtypes of a weight, for messages: the element dtypes or a quantized one. */
export const ANY_DTYPE_LIST = `${DTYPES.join(', ')}, or for a weight one of ${QUANT_DTYPES.join(', ')}`;

/**
 * Why a finite `v` is not a value of a float dtype: one that rounds to infinity there (an f16 literal
 * 1e6), where an infinity is meant to be written "inf". Undefined for every other value and dtype.
 */
export function floatLiteralProblem(dtype: DType, v: number): string | undefined {
  if (dtype !== 'f32' && dtype !== 'f16' && dtype !== 'bf16') return undefined;
  if (!Number.isFinite(v) || Number.isFinite(roundToDtype(dtype, v))) return undefined;
  return `${v} rounds to ${v > 0 ? '' : '-'}infinity in ${dtype} (its largest finite value is ${FLOAT_MAX[dtype]}); write "${v > 0 ? '' : '-'}inf" for an infinity`;
}

const FLOAT_MAX = { f32: 3.4028234663852886e38, f16: 65504, bf16: 3.3895313892515355e38 } as const;
