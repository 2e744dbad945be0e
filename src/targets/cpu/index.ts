/**
 * The CPU target: the oracle itself behind the Device interface. It admits every op of the format
 * except the collective, which no single-device target admits, and every quantized weight dtype.
 */
import { QUANT_DTYPES } from '../../ir/types.js';
import { CLASS_TOLERANCES } from '../../numerics/classes.js';
import { ADMIT, refuse } from '../target.js';
import type { AdmissionTable, Target } from '../target.js';

const always = () => ADMIT;

const admission = {
  add: always, sub: always, mul: always, div: always, max: always, min: always, ge: always,
  neg: always, recip: always, exp: always, log: always, tanh: always, erf: always, sqrt: always,
  rsqrt: always, abs: always, logistic: always, sin: always, cos: always,
  convert: always, reduce_sum: always, reduce_max: always, matmul: always, gather: always,
  reshape: always, transpose: always, broadcast: always, slice: always, concat: always, iota: always,
  dynamic_update_slice: always, row_kernel: always, matmul_id: always,
  all_reduce: () => refuse('collective.all_reduce'),
} satisfies AdmissionTable;

/** The oracle itself: any difference at all is a defect in the path between them. */
const numerics = { kind: 'class', numericsClass: 'Exact', tolerances: CLASS_TOLERANCES.Exact, perEquation: 'exact (the oracle itself)' } as const;

export const CPU_TARGET: Target = { name: 'cpu', device: 'cpu', contexts: 16, part: 'cpu:oracle', admission, numerics, quantizedWeights: QUANT_DTYPES };
