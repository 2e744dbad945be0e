/**
 * The host target's numerical contract, per op (docs/HOST.md, "Contracts"): what each native kernel
 * promises against the CPU oracle, which computes every equation in f64 (quantized weights dequantized
 * exactly) and rounds each result to its dtype once. `contracts --target host` checks every row over
 * edge inputs and a random bulk (src/contracts/host.ts).
 *
 * The addon evaluates each unary function as the oracle does, in f64 from the f32 operand through libm,
 * and rounds once (src/native/host/ops.cc unaryOne), on every ISA path: measured over the sweep, every
 * result is the oracle's rounded result bit for bit (0 ulp from it). What is promised is 1 ulp of the
 * exact value: 0.5 for the final rounding, and a margin for libm's last f64 bit against V8's, which can
 * flip a rounding that lies on a tie to f64 precision. The dot-product and sum bounds are the textbook
 * ones (Higham, §3.1) for any order of summation, so they hold for the kernels' blocked partial sums and
 * their SIMD lanes; they are promised where Σ|x·w| (Σ|x|) is finite in f32, so no partial sum overflows.
 */
import type { OpName } from '../../ops/rule.js';

/** u, the unit roundoff of f32. */
export const F32_U = 2 ** -24;

/** γ(n) = n·u / (1 - n·u): the relative bound of n roundings in sequence (Higham, §3.1). */
export function gamma(n: number): number {
  return (n * F32_U) / (1 - n * F32_U);
}

/** One op's contract: how far from the oracle a result may be, and over which inputs it is promised. */
export type HostContract =
  /** Bit for bit the oracle's rounded result (NaN for NaN, the sign of zero included). */
  | { readonly kind: 'exact'; readonly why: string }
  /** Correctly rounded f32: again the oracle's rounded result bit for bit (its error is <= 0.5 ulp). */
  | { readonly kind: 'rounded' }
  /** Within `ulps` units in the last place of the f32 result, of the exact (f64) value. */
  | { readonly kind: 'ulps'; readonly ulps: number; readonly domain: string; readonly lo: number; readonly hi: number }
  /** A dot product of length K: |got - exact| <= γ(K+2)·Σ|x·w| (w as exactly dequantized), where Σ|x·w| is finite in f32. */
  | { readonly kind: 'dot' }
  /** A sum of C terms: |got - exact| <= γ(C)·Σ|x|, where Σ|x| is finite in f32. */
  | { readonly kind: 'sum' }
  /** A row kernel: |got - exact| <= rel·|exact| + abs, rel and abs derived from the body (hostRows in contracts). */
  | { readonly kind: 'row'; readonly derivation: string }
  /**
   * The q8-activations class (matmul_wq): activations quantized per block b of 32 (scale d_b, x̂ = q·d_b),
   * |got - exact| <= Σ_b e_b·Σ_{k in b}|w_k| + γ(m+2)·Σ_k|x̂_k|·(|w_k - o_k| + |o_k|) + m·2^-120, with
   * e_b = (1/2 + 2^-16)·d_b + 2^-140, o the weight's offset part and m the float terms (docs/HOST.md).
   */
  | { readonly kind: 'q8dot' };

const EXACT_MOVE = { kind: 'exact', why: 'data movement copies bytes' } as const;
const ROUNDED = { kind: 'rounded' } as const;

/** A unary function's measured bound, over [lo, hi] (outside it the result is not promised). */
const ulps = (n: number, lo = -Infinity, hi = Infinity, domain = 'every f32 (measured: 0 ulp from the oracle\'s rounded result)'): HostContract => ({ kind: 'ulps', ulps: n, domain, lo, hi });

/** Every op the host target admits, and its contract (all_reduce is refused, so it has none). */
export const HOST_CONTRACTS = {
  add: ROUNDED, sub: ROUNDED, mul: ROUNDED, div: ROUNDED, max: EXACT_MOVE, min: EXACT_MOVE,
  ge: { kind: 'exact', why: 'a compare' },
  neg: { kind: 'exact', why: 'a sign flip' }, abs: { kind: 'exact', why: 'a sign clear' },
  recip: ROUNDED, sqrt: ROUNDED,
  rsqrt: ulps(1), exp: ulps(1), log: ulps(1), tanh: ulps(1), erf: ulps(1), logistic: ulps(1), sin: ulps(1), cos: ulps(1),
  convert: { kind: 'exact', why: 'f32 to f16/bf16 rounds to nearest even as the oracle does; a quantized weight dequantizes exactly' },
  reduce_sum: { kind: 'sum' },
  reduce_max: { kind: 'exact', why: 'a compare and select' },
  matmul: { kind: 'dot' },
  matmul_id: { kind: 'dot' },
  gather: { kind: 'exact', why: 'a quantized row dequantizes exactly in f32' },
  reshape: EXACT_MOVE, transpose: EXACT_MOVE, broadcast: EXACT_MOVE, slice: EXACT_MOVE, concat: EXACT_MOVE,
  dynamic_update_slice: EXACT_MOVE,
  iota: { kind: 'exact', why: 'integers below 2^24' },
  row_kernel: { kind: 'row', derivation: 'RMSNorm: |err| <= (γ(C)/2 + 5u)·|y|; a composed softmax body: |err| <= (γ(C) + (max - min + 5)·u)·|y|; a masked softmax between two matmuls runs as the fused attention record, within their composed bound (HOST_ATTENTION_CONTRACT; docs/HOST.md)' },
} as const satisfies Readonly<Record<Exclude<OpName, 'all_reduce'>, HostContract>>;

const ORACLE = { kind: 'exact', why: 'computed in f64 from the exact operands and rounded once, as the oracle' } as const;
const ORDERED = { kind: 'exact', why: 'accumulated in f64 in the oracle\'s order and rounded once' } as const;

/**
 * The typed kernels' contracts, per op they compute in f16 and bf16 (and i32 for neg, abs, the
 * reductions and matmul): each element is the oracle's formula in f64, rounded once to the dtype, so
 * it is the oracle's result bit for bit, but for the libm functions, promised within 1 ulp of the
 * dtype (libm's last f64 bit against V8's can flip a rounding on a tie; measured: 0 ulp). The other
 * ops keep their row above in every dtype (data movement, convert and gather move or round exactly).
 */
export const HOST_TYPED_CONTRACTS = {
  add: ORACLE, sub: ORACLE, mul: ORACLE, div: ORACLE, max: EXACT_MOVE, min: EXACT_MOVE,
  ge: { kind: 'exact', why: 'a compare' },
  neg: { kind: 'exact', why: 'a sign flip (i32: wrapping)' }, abs: { kind: 'exact', why: 'a sign clear (i32: wrapping)' },
  recip: ORACLE, sqrt: ORACLE,
  rsqrt: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  exp: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  log: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  tanh: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  erf: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  logistic: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  sin: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  cos: ulps(1, -Infinity, Infinity, 'every f16 and bf16 value (measured: 0 ulp from the oracle\'s rounded result)'),
  reduce_sum: ORDERED, reduce_max: { kind: 'exact', why: 'a compare and select' }, matmul: ORDERED,
  row_kernel: { kind: 'exact', why: 'each step is the oracle\'s step, rounded once to the dtype; a body with a libm step is held to its derived bound instead (run --verify, docs/HOST.md)' },
} as const satisfies Readonly<Partial<Record<OpName, HostContract>>>;

/** The contract of a weight matmul in the q8-activations class (matmul_wq), beside `matmul`'s exact-class one. */
export const HOST_Q8_CONTRACT = { kind: 'q8dot' } as const satisfies HostContract;

/** Words for a contract, as the report and docs/HOST.md print it. */
export function describeHostContract(c: HostContract): string {
  switch (c.kind) {
    case 'exact': return `exact (${c.why})`;
    case 'rounded': return 'correctly rounded f32 (<= 0.5 ulp; the oracle\'s rounded result bit for bit)';
    case 'ulps': return `<= ${c.ulps} ulp of the exact value, ${c.domain}`;
    case 'dot': return '|err| <= γ(K+2)·Σ|x·w| (w dequantized exactly; where Σ|x·w| < 2^128)';
    case 'sum': return '|err| <= γ(C)·Σ|x| (where Σ|x| < 2^128)';
    case 'row': return c.derivation;
    case 'q8dot': return '|err| <= Σ_b e_b·Σ|w| + γ(m+2)·Σ|x̂|·(|w - o| + |o|) + m·2^-120, e_b = (1/2 + 2^-16)·d_b + 2^-140 (q8 activations: blocks of 32, d_b = amax/127; m float terms)';
  }
}

/**
 * The fused attention record's contract (src/native/host/attention.cc, docs/HOST.md "attention"), for
 * one output element y = Σ_j p_j·v_j of a row: the composition of the three bounds the record replaces,
 * the scores' dot bound, the composed softmax row bound, and the output's dot bound.
 */
export const HOST_ATTENTION_CONTRACT = {
  kind: 'row',
  derivation:
    'fused attention: |err| <= γ(N+2)·Σp|v| + ε·Σp|v|, ε = γ(N) + (max − min + 5)·u + 2·max_j(|scale|·(γ(D+2) + u)·Σ_d|q·k| + u·|a_j|) over the unmasked positions; masked positions weigh exactly 0 where |s·scale| < 2^98 and |a| < 2^98 at the unmasked ones',
} as const satisfies HostContract;

/** One row of a fused attention as the oracle computes it (f64), for attentionBound. */
export interface AttentionRow {
  readonly D: number;
  readonly N: number;
  /** The scale as the record holds it (an f32 value). */
  readonly scale: number;
  /** a_j = s_j·scale + bias_j, exactly (f64). */
  readonly a: ArrayLike<number>;
  /** Whether bias_j is masked (<= -1e30 or -inf). */
  readonly masked: ArrayLike<boolean>;
  /** Σ_d |q_d·k_dj| per position: the score's dot-product magnitude. */
  readonly scoreMagnitudes: ArrayLike<number>;
  /** The exact softmax weights p_j. */
  readonly probs: ArrayLike<number>;
  /** |v_jd| per position, for the output column d. */
  readonly vAbs: ArrayLike<number>;
}

/**
 * The bound of one output element of a fused attention (HOST_ATTENTION_CONTRACT). The scores' errors
 * (the dot bound, the product's and the bias add's roundings: Δ_j) move each weight by at most
 * 2·max Δ relatively (to first order: p_j·(Δa_j − Σ p_i·Δa_i)); the softmax steps add the composed row
 * bound over the unmasked positions (a masked weight is exactly 0); the output's dot product adds
 * γ(N+2)·Σ p|v|. A fully masked row runs over every position as the unfused steps do: with one mask
 * value m on every position and |s·scale| < 2^-54·|m| (layers.ts's MASKED and scores of any usual
 * size), a and its f32 rounding are m everywhere, the weights the uniform 1/N (one rounding) and the
 * bound γ(N+2)·Σ p|v| + u·Σ p|v|.
 */
export function attentionBound(r: AttentionRow): number {
  let pv = 0;
  for (let j = 0; j < r.N; j++) pv += r.probs[j]! * r.vAbs[j]!;
  const visible: number[] = [];
  for (let j = 0; j < r.N; j++) if (!r.masked[j]) visible.push(j);
  if (visible.length === 0) return (gamma(r.N + 2) + F32_U) * pv;
  let max = -Infinity;
  let min = Infinity;
  let delta = 0;
  for (const j of visible) {
    const a = r.a[j]!;
    max = Math.max(max, a);
    min = Math.min(min, a);
    delta = Math.max(delta, Math.abs(r.scale) * (gamma(r.D + 2) + F32_U) * r.scoreMagnitudes[j]! + F32_U * Math.abs(a));
  }
  const eps = gamma(r.N) + (max - min + 5) * F32_U + 2 * delta;
  return gamma(r.N + 2) * pv + eps * pv;
}
