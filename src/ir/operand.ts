/**
 * Operands on the wire: a value's name, or an inline scalar literal `{ "lit": NUMBER | "nan" | "inf" |
 * "-inf" | "-0", "dtype"?: DType }`. Decoding is idempotent (a decoded literal's NaN decodes to NaN), so
 * the same decoder serves JSON from a file and programs built in TypeScript.
 */
import { InvalidProgram, wireNumber, type WireNumber } from '../errors/index.js';
import { hasOwn, isRecord, kindOf, ptr } from './pointer.js';
import { decodeWireNumber, DTYPE_LIST, isDType } from './scalars.js';
import type { DType, Literal, Operand } from './types.js';

/** A literal as JSON writes it. */
export interface WireLiteral {
  readonly lit: WireNumber;
  readonly dtype?: DType;
}

/** Decodes a literal object at `path`; refuses unknown keys and values JSON cannot mean as numbers. */
function decodeLiteral(v: Record<string, unknown>, path: string): Literal {
  for (const k of Object.keys(v)) {
    if (k !== 'lit' && k !== 'dtype') throw new InvalidProgram(ptr(path, k), `a literal has only "lit" and "dtype", not "${k}"`);
  }
  const lit = decodeWireNumber(v['lit']);
  if (lit === undefined) {
    throw new InvalidProgram(ptr(path, 'lit'), `a literal's "lit" is a number or one of "nan", "inf", "-inf", "-0", not ${kindOf(v['lit'])}`);
  }
  if (!hasOwn(v, 'dtype') || v['dtype'] === undefined) return { lit };
  const dtype = v['dtype'];
  if (!isDType(dtype)) throw new InvalidProgram(ptr(path, 'dtype'), `a literal's dtype is ${DTYPE_LIST}, not ${kindOf(dtype)}`);
  return { lit, dtype };
}

/** Decodes one operand at `path`: a non-empty name or a literal. */
function decodeOperand(v: unknown, path: string): Operand {
  if (typeof v === 'string') {
    if (v === '') throw new InvalidProgram(path, 'an operand name is a non-empty string');
    return v;
  }
  if (isRecord(v)) return decodeLiteral(v, path);
  throw new InvalidProgram(path, `an operand is a value's name or a literal { "lit": ... }, not ${kindOf(v)}`);
}

/** Decodes an operand list (`in`) at `path`. */
export function decodeOperands(v: unknown, path: string): Operand[] {
  if (!Array.isArray(v)) throw new InvalidProgram(path, `"in" is an array of operands, not ${kindOf(v)}`);
  return v.map((o, k) => decodeOperand(o, ptr(path, k)));
}

/** Writes an operand as JSON: literals with their non-finite and signed-zero values as wire strings. */
export function encodeOperand(o: Operand): string | WireLiteral {
  if (typeof o === 'string') return o;
  return o.dtype === undefined ? { lit: wireNumber(o.lit) } : { lit: wireNumber(o.lit), dtype: o.dtype };
}
