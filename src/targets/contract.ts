/**
 * An op's numerical contract on a target: how far its result may be from the CPU oracle's (the error)
 * and the inputs for which that is promised (the domain). Both are plain data, so the admission table,
 * the feature matrix, the docs and the `contracts` command read the same numbers. Outside the domain
 * nothing is promised: withinContract says so rather than failing.
 */

/** One unit in the last place of an f32 near 1 (2^-23): the unit every f32 contract is written in. */
export const F32_EPS = 2 ** -23;
/** The smallest positive normal f32 (2^-126, about 1.18e-38). */
const F32_MIN_NORMAL = 2 ** -126;
const F32_MAX = (2 - 2 ** -23) * 2 ** 127;

/** How far a result may be from the oracle's, per element. */
type ContractError =
  /** bit for bit equal (NaN equals NaN; -0 differs from +0) */
  | { readonly kind: 'exact' }
  /** |got - want| <= rel * max |operand| (add and sub: relative to the larger operand) */
  | { readonly kind: 'larger-operand'; readonly rel: number }
  /** |got - want| <= abs + rel * |want| */
  | { readonly kind: 'absrel'; readonly abs: number; readonly rel: number }
  /** |got - want| <= rel * |want| */
  | { readonly kind: 'rel'; readonly rel: number }
  /** |got - want| <= perTerm * n * sum |operand_i| over the n operands (a last-axis sum of n terms) */
  | { readonly kind: 'sum-magnitude'; readonly perTerm: number };

/** The inputs for which a contract holds. */
type ContractDomain =
  /** every input, NaN and signed zeros included (data movement) */
  | { readonly kind: 'any' }
  /** operands that are not NaN (compare and select) */
  | { readonly kind: 'not-nan' }
  /** every finite operand (tanh and erf saturate exactly) */
  | { readonly kind: 'finite' }
  /** finite operands with a finite normal result; a zero result counts as normal (no subnormal rounding) */
  | { readonly kind: 'finite-normal-result' }
  /** operands in [lo, hi] (exp: [-87, 88]) */
  | { readonly kind: 'interval'; readonly lo: number; readonly hi: number }
  /** positive normal operands (from 2^-126, about 1.18e-38, to the largest finite f32) */
  | { readonly kind: 'positive-normal' }
  /** finite operands with a finite result (a last-axis sum) */
  | { readonly kind: 'finite-result' }
  /** finite row inputs for which every step of a row kernel stays in its own op's domain */
  | { readonly kind: 'row-steps' };

/** An admitted op's numerical contract: its error bound, its domain, and a remark for people. */
export interface OpContract {
  readonly error: ContractError;
  readonly domain: ContractDomain;
  readonly note?: string;
}

/** The outcome of checking one element against a contract. */
export interface ContractCheck {
  /** False when the element is outside the domain: then nothing is promised and `ok` is true. */
  readonly inDomain: boolean;
  /** True when the element is within the bound, or outside the domain. */
  readonly ok: boolean;
  /** |got - want| (0 for bit-equal values, Infinity when one side only is NaN or infinite). */
  readonly error: number;
  /** The largest error the contract allows for this element (0 for exact). */
  readonly bound: number;
}

function bitEqual(g: number, w: number): boolean {
  return Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w));
}

function normalOrZero(v: number): boolean {
  const a = Math.abs(v);
  return a === 0 || (a >= F32_MIN_NORMAL && a <= F32_MAX);
}

/** True when `operands` (and the oracle's result `want`) lie in the domain. */
function inDomain(domain: ContractDomain, operands: readonly number[], want: number): boolean {
  switch (domain.kind) {
    case 'any': return true;
    case 'not-nan': return operands.every((v) => !Number.isNaN(v));
    case 'finite': return operands.every(Number.isFinite);
    case 'finite-normal-result': return operands.every(Number.isFinite) && Number.isFinite(want) && normalOrZero(want);
    case 'interval': return operands.every((v) => v >= domain.lo && v <= domain.hi);
    case 'positive-normal': return operands.every((v) => v >= F32_MIN_NORMAL && v <= F32_MAX);
    case 'finite-result': case 'row-steps': return operands.every(Number.isFinite) && Number.isFinite(want);
  }
}

/** The largest error `error` allows for one element. */
function errorBound(error: ContractError, operands: readonly number[], want: number): number {
  switch (error.kind) {
    case 'exact': return 0;
    case 'larger-operand': return error.rel * Math.max(0, ...operands.map(Math.abs));
    case 'absrel': return error.abs + error.rel * Math.abs(want);
    case 'rel': return error.rel * Math.abs(want);
    case 'sum-magnitude': {
      let s = 0;
      for (const v of operands) s += Math.abs(v);
      return error.perTerm * operands.length * s;
    }
  }
}

/**
 * Checks one element: `got` from the device, `want` from the oracle, `operands` the element's inputs
 * (both operands of a binary op, a literal included; every element of the row for a last-axis sum).
 */
export function withinContract(contract: OpContract, got: number, want: number, operands: readonly number[]): ContractCheck {
  const domain = inDomain(contract.domain, operands, want);
  const bound = errorBound(contract.error, operands, want);
  const same = bitEqual(got, want);
  const error = same ? 0 : Number.isFinite(got) && Number.isFinite(want) ? Math.abs(got - want) : Infinity;
  const within = contract.error.kind === 'exact' ? same : same || error <= bound;
  return { inDomain: domain, ok: !domain || within, error, bound };
}

/** A short human rendering of an error bound (feature matrix, plan output). */
function describeError(e: ContractError): string {
  switch (e.kind) {
    case 'exact': return 'exact';
    case 'larger-operand': return `${fmtEps(e.rel)} of the larger operand`;
    case 'absrel': return `abs ${fmtRel(e.abs)} + rel ${fmtRel(e.rel)}`;
    case 'rel': return `rel ${fmtRel(e.rel)}`;
    case 'sum-magnitude': return `${fmtEps(e.perTerm)} x cols of the row's magnitudes`;
  }
}

/** A short human rendering of a domain. */
function describeDomain(d: ContractDomain): string {
  switch (d.kind) {
    case 'any': return 'every input';
    case 'not-nan': return 'non-NaN operands';
    case 'finite': return 'finite operands';
    case 'finite-normal-result': return 'finite operands, finite normal result';
    case 'interval': return `operands in [${d.lo}, ${d.hi}]`;
    case 'positive-normal': return 'positive normal operands';
    case 'finite-result': return 'finite operands, finite result';
    case 'row-steps': return 'every step inside its own domain';
  }
}

/** `error; domain`, the one-line form of a contract. */
export function describeContract(c: OpContract): string {
  return `${describeError(c.error)}; ${describeDomain(c.domain)}`;
}

// 2 * 2^-23 reads better as "2 x 2^-23" than as 2.384e-7 in a table of contracts.
function fmtEps(v: number): string {
  const k = v / F32_EPS;
  return Number.isInteger(k) ? `${k} x 2^-23` : String(v);
}

// Small bounds read best in exponent form with three digits at most: 2e-6, 8.51e-6.
function fmtRel(v: number): string {
  return v >= 1e-3 || v === 0 ? String(v) : v.toExponential(2).replace(/\.?0+e/, 'e');
}
