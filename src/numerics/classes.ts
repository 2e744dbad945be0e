/**
 * Numerics classes: how close a target's result must be to the oracle's, per result dtype. The engine
 * picks a program's class (from the target and what it admitted); this file only says what each class
 * tolerates. The oracle rounds every equation once to its dtype, so the units below are the dtype's.
 *
 * - Exact: bit-equal. Data movement (reshape, gather, slice, concat), max/min, compares, integer
 *   arithmetic, and any float op a target computes exactly as the oracle does.
 * - Faithful: within 2 ulps of the dtype per element. A correctly rounded device is 0 ulps away and a
 *   faithfully rounded one 1 ulp; the second ulp leaves room for one more rounding (for instance an
 *   f32 op computed in f32 arithmetic before the result is stored) without admitting real drift.
 * - Contract: what the target publishes for arithmetic done in a narrower internal format (say f32 ops
 *   carried out with bf16 products). The default is the common f32 contract abs 2e-6 + rel 1e-5, i.e.
 *   about 168 f32 roundoffs relative (1e-5 / 2^-24) — the accuracy of split-bf16 (bf16x3) emulation with
 *   accumulation over a few hundred terms. For f16 and bf16 results the default is 4 roundoffs of the
 *   dtype relative (f16: 4 * 2^-11 = 2e-3, bf16: 4 * 2^-8 = 1.6e-2) and a fifth of that absolute, the
 *   same shape as the f32 numbers. A target with its own published numbers passes them to toleranceFor.
 * - NarrowStorage: the loosest: every value stored in FP16 (an FP16 NPU running an f32 program). Each
 *   stored value is off by up to 2^-11 relative, and errors of a chain of ops and of reductions over a
 *   few hundred terms add up to a few percent of that per element in the worst spots, so elementwise
 *   bounds would be either loose or flaky. A normwise bound of 1e-2 (about 20 f16 roundoffs over the
 *   whole tensor) still fails a wrong kernel (a wrong sign, a swapped axis, a missing term of a sum
 *   moves the norm by far more) while passing honest FP16 storage. bf16 results get 3e-2: bf16 itself
 *   is 8 times coarser than f16 (2^-8), and 1e-2 would be only 2.5 bf16 roundoffs.
 *
 * i32 and bool are exact in every class (compareTensor enforces this too).
 */
import type { DType } from './dtype.js';
import type { Tolerance } from './compare.js';

export const NUMERICS_CLASSES = ['Exact', 'Faithful', 'Contract', 'NarrowStorage'] as const;
/** How close a target's results must be to the oracle's. */
export type NumericsClass = (typeof NUMERICS_CLASSES)[number];

const EXACT = { kind: 'exact' } as const;

/** The tolerance of every class for every result dtype (the reasons are in this file's header). */
export const CLASS_TOLERANCES = {
  Exact: { f32: EXACT, f16: EXACT, bf16: EXACT, i32: EXACT, bool: EXACT },
  Faithful: {
    f32: { kind: 'ulps', ulps: 2 },
    f16: { kind: 'ulps', ulps: 2 },
    bf16: { kind: 'ulps', ulps: 2 },
    i32: EXACT,
    bool: EXACT,
  },
  Contract: {
    f32: { kind: 'absrel', abs: 2e-6, rel: 1e-5 },
    f16: { kind: 'absrel', abs: 4e-4, rel: 2e-3 },
    bf16: { kind: 'absrel', abs: 3e-3, rel: 1.6e-2 },
    i32: EXACT,
    bool: EXACT,
  },
  NarrowStorage: {
    f32: { kind: 'normwise', rel: 1e-2 },
    f16: { kind: 'normwise', rel: 1e-2 },
    bf16: { kind: 'normwise', rel: 3e-2 },
    i32: EXACT,
    bool: EXACT,
  },
} as const satisfies { readonly [C in NumericsClass]: { readonly [D in DType]: Tolerance } };

/**
 * The tolerance of `cls` for a result of `dtype`; `contract` (the target's published float tolerance)
 * replaces the Contract default for float dtypes.
 */
export function toleranceFor(cls: NumericsClass, dtype: DType, contract?: Tolerance): Tolerance {
  if (cls === 'Contract' && contract !== undefined && dtype !== 'i32' && dtype !== 'bool') return contract;
  return CLASS_TOLERANCES[cls][dtype];
}
