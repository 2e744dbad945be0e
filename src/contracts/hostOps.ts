/**
 * What the host contract sweep runs, per op the host target admits: small programs named
 * `host-contract-<op>[-<variant>]`, the chunks of inputs that drive them (hostCases.ts), and the bound
 * each result element is judged by (src/targets/host/contracts.ts).
 */
import type { ProgramBuilder, Value } from '../ops/builder.js';
import { program } from '../ops/builder.js';
import type { CheckedProgram } from '../ir/checked.js';
import { programToJson } from '../ir/codec.js';
import { isQuantTensor, quantTensor, tensor } from '../ir/tensor.js';
import type { QuantTensor, Tensor } from '../ir/tensor.js';
import { QUANT_DTYPES } from '../ir/types.js';
import type { DType, QuantDType } from '../ir/types.js';
import { dequantize } from '../numerics/dequant.js';
import { roundToDtype } from '../numerics/float16.js';
import { quantBytes as quantSize } from '../numerics/quant.js';
import { checkProgram } from '../ops/validate.js';
import type { TensorMap, WeightMap } from '../oracle/types.js';
import { HOST_Q8_WEIGHTS, type HostMatmulClass } from '../compiler/host/kernelList.js';
import type { HostContract } from '../targets/host/contracts.js';
import { HOST_CONTRACTS, gamma } from '../targets/host/contracts.js';
import type { F32Source } from './hostCases.js';
import { EDGE_VALUES, edgePairs, f32Source, fill, quantBytes } from './hostCases.js';

/** The allowed error of one result element, or 'exact' (the oracle's rounded result bit for bit), or null outside the domain. */
export type ElementBound = number | 'exact' | null;

/** One program of the sweep: its chunks and the bound of each result element (element `i` of chunk `c`). */
export interface HostProgram {
  readonly name: string;
  readonly checked: CheckedProgram;
  readonly json: object;
  readonly weights: WeightMap;
  readonly chunks: readonly TensorMap[];
  readonly bound: (c: number, i: number, want64: number) => ElementBound;
  /** The host backend's matmul class it is compiled in (default exact). */
  readonly matmul?: HostMatmulClass;
}

export type HostContractOp = Exclude<keyof typeof HOST_CONTRACTS, never>;

/** Every op the sweep verifies: every row of the host target's admission table but all_reduce. */
export const HOST_CONTRACT_OPS = Object.keys(HOST_CONTRACTS) as HostContractOp[];

const COLS = 256;
const F32_MAX = 3.4028234663852886e38;
/** γ·Σ, or null (outside the domain) where the magnitudes' sum overflows f32 and a partial sum may too. */
const within = (g: number, mag: number): ElementBound => (mag <= F32_MAX ? g * mag : null);
const ulpOf = (x: number): number => {
  const a = Math.abs(Math.fround(x));
  if (!Number.isFinite(a)) return Infinity;
  return a < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(a)) - 23);
};

function built(name: string, body: (p: ProgramBuilder) => Value[]): { checked: CheckedProgram; json: object } {
  const p = program(`host-contract-${name}`);
  p.results(...body(p));
  const checked = checkProgram(p.build());
  return { checked, json: programToJson(checked.program) };
}

/** Chunks of [rows, 256] tensors of `dtype` (f32 unless said) over `columns` (each column an argument's values), padded with ones. */
function chunked(names: readonly string[], columns: readonly (readonly number[])[], rows: number, dtype: DType = 'f32'): TensorMap[] {
  const per = rows * COLS;
  const n = Math.max(...columns.map((c) => c.length));
  const out: TensorMap[] = [];
  for (let at = 0; at < n; at += per) {
    const m: Record<string, Tensor> = {};
    names.forEach((name, k) => {
      const d = new Float64Array(per).fill(1);
      for (let i = 0; i < per && at + i < n; i++) d[i] = columns[k]![at + i]!;
      m[name] = tensor(dtype, [rows, COLS], d);
    });
    out.push(m);
  }
  return out;
}

const value = (chunks: readonly TensorMap[], name: string) => (c: number, i: number) => chunks[c]![name]!.data[i]!;

/** A unary or binary elementwise op over the edges (pairs of edges for binary) and `bulk` random values. */
function elementwise(op: HostContractOp, r: F32Source, bulk: number): HostProgram[] {
  const contract: HostContract = HOST_CONTRACTS[op];
  const two = ['add', 'sub', 'mul', 'div', 'max', 'min', 'ge'].includes(op);
  const rows = 64;
  if (two) {
    const [ea, eb] = edgePairs();
    const a = fill(ea.length + bulk, r, ea);
    const b = fill(eb.length + bulk, r, eb);
    const chunks = chunked(['a', 'b'], [a, b], rows);
    const { checked, json } = built(op, (p) => {
      const x = p.activation('a', 'f32', [rows, COLS]);
      const y = p.activation('b', 'f32', [rows, COLS]);
      return [(p.named('y') as unknown as Record<string, (u: Value, v: Value) => Value>)[op]!.call(p.named('y'), x, y)];
    });
    return [{ name: op, checked, json, weights: {}, chunks, bound: () => 'exact' }];
  }
  const x = fill(EDGE_VALUES.length + bulk, r, EDGE_VALUES);
  const chunks = chunked(['x'], [x], rows);
  const { checked, json } = built(op, (p) => {
    const v = p.activation('x', 'f32', [rows, COLS]);
    return [(p.named('y') as unknown as Record<string, (u: Value) => Value>)[op]!.call(p.named('y'), v)];
  });
  const xs = value(chunks, 'x');
  const bound = (c: number, i: number, want: number): ElementBound => {
    if (contract.kind !== 'ulps') return 'exact';
    const v = xs(c, i);
    if (!Number.isNaN(v) && !(v >= contract.lo && v <= contract.hi)) return null;
    return contract.ulps * ulpOf(want);
  };
  return [{ name: op, checked, json, weights: {}, chunks, bound }];
}

/** A quantized weight [n, k] of random blocks, and its exact dequantization. */
function randomQuant(dtype: QuantDType, n: number, k: number, r: F32Source): { t: QuantTensor; deq: Float64Array } {
  const t = quantTensor(dtype, [n, k], quantBytes(quantSize(dtype, [n, k]), r.u));
  return { t, deq: dequantize(t) };
}

/** matmul: f32 [T, K] x [K, N] with K off the SIMD width, and f32 x every quantized dtype ([N, K], K = 512). */
function matmul(r: F32Source, bulk: number): HostProgram[] {
  const out: HostProgram[] = [];
  const steps = Math.max(1, Math.ceil(bulk / 4096));
  const dot = (x: Tensor, w: ArrayLike<number>, T: number, K: number, N: number, wAt: (k: number, n: number) => number) => {
    const mags = new Float64Array(T * N);
    for (let t = 0; t < T; t++) for (let n = 0; n < N; n++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += Math.abs(x.data[t * K + k]! * w[wAt(k, n)]!);
      mags[t * N + n] = s;
    }
    return mags;
  };
  const act = (T: number, K: number, c: number) => tensor('f32', [T, K], fill(T * K, c === 0 ? () => Math.fround(r.u() * 2 - 1) : r, c === 0 ? [0, -0, 2 ** -149, 65504, -1e20, 1e-30] : []).map((v) => (Number.isFinite(v) && Math.abs(v) < 1e15 ? v : Math.fround(r.u() - 0.5))));
  {
    const [T, K, N] = [8, 67, 19];
    const w = tensor('f32', [K, N], fill(K * N, () => Math.fround(r.u() * 2 - 1)));
    const chunks = Array.from({ length: steps }, (_, c) => ({ x: act(T, K, c) }));
    const mags = chunks.map((ch) => dot(ch.x, w.data, T, K, N, (k, n) => k * N + n));
    const { checked, json } = built('matmul-f32', (p) => [p.named('y').matmul(p.activation('x', 'f32', [T, K]), p.weight('w', 'f32', [K, N]))]);
    out.push({ name: 'matmul f32', checked, json, weights: { w }, chunks, bound: (c, i) => within(gamma(K + 2), mags[c]![i]!) });
  }
  for (const dtype of QUANT_DTYPES) {
    const [T, K, N] = [3, 512, 32];
    const { t, deq } = randomQuant(dtype, N, K, r);
    const chunks = Array.from({ length: steps }, (_, c) => ({ x: act(T, K, c) }));
    const mags = chunks.map((ch) => dot(ch.x, deq, T, K, N, (k, n) => n * K + k));
    const { checked, json } = built(`matmul-${dtype}`, (p) => [p.named('y').matmul(p.activation('x', 'f32', [T, K]), p.weight('w', dtype, [N, K]))]);
    out.push({ name: `matmul ${dtype}`, checked, json, weights: { w: t }, chunks, bound: (c, i) => within(gamma(K + 2), mags[c]![i]!) });
  }
  // The q8-activations class (matmul_wq): the same shapes, compiled with the host backend's q8 option,
  // for the weight types it lowers to matmul_wq (HOST_Q8_WEIGHTS; test/native/host/matmulQ8.test.ts
  // holds the kernel to this bound for the others too).
  for (const dtype of HOST_Q8_WEIGHTS) {
    const [T, K, N] = [3, 512, 32];
    const { t, deq } = randomQuant(dtype, N, K, r);
    const off = offsetsOf(t);
    const chunks = Array.from({ length: steps }, (_, c) => ({ x: act(T, K, c) }));
    const bounds = chunks.map((ch) => q8Bounds(ch.x.data, deq, off, T, K, N, dtype === 'q4_0' || dtype === 'q8_0' ? 1 : 2));
    const { checked, json } = built(`matmul-q8-${dtype}`, (p) => [p.named('y').matmul(p.activation('x', 'f32', [T, K]), p.weight('w', dtype, [N, K]))]);
    out.push({ name: `matmul q8 ${dtype}`, checked, json, weights: { w: t }, chunks, bound: (c, i) => bounds[c]![i]!, matmul: 'q8' });
  }
  return out;
}

/**
 * The offset part of each element of a quantized weight [N, K] (q4_1's m, q4_k's -dmin·m, q4nx's
 * zero; null for the types without one): the weight with every code zeroed, dequantized.
 */
function offsetsOf(t: QuantTensor): Float64Array | null {
  const b = t.bytes.slice();
  const zero = (size: number, from: number, to: number) => { for (let p = 0; p < b.length; p += size) b.fill(0, p + from, p + to); };
  if (t.dtype === 'q4_1') zero(20, 4, 20);
  else if (t.dtype === 'q4_k') zero(144, 16, 144);
  else if (t.dtype === 'q4nx_q41') zero(5120, 1024, 5120);
  else return null;
  return dequantize(quantTensor(t.dtype, t.shape, b));
}

/**
 * The q8-activations bound of each output of x [T, K] times w [N, K] (HOST_Q8_CONTRACT, docs/HOST.md):
 * Σ_b e_b·Σ|w| + γ(m+2)·Σ (|x| + e_b)·(|w − o| + |o|) + m·2^-120, with e_b = (1/2 + 2^-16)·d_b + 2^-140,
 * d_b = fl(amax/127) (|x̂| <= |x| + e_b stands for the codes), m = terms·K/32. Null (outside the
 * domain) where a block holds a non-finite value or the magnitudes overflow f32.
 */
function q8Bounds(x: ArrayLike<number>, w: Float64Array, o: Float64Array | null, T: number, K: number, N: number, terms: number): ElementBound[] {
  const kb = Math.ceil(K / 32);
  const m = terms * kb;
  const out: ElementBound[] = [];
  for (let t = 0; t < T; t++) {
    const e: number[] = [];
    let finite = true;
    for (let b = 0; b < kb; b++) {
      let amax = 0;
      for (let k = b * 32; k < Math.min(K, b * 32 + 32); k++) {
        const a = Math.abs(x[t * K + k]!);
        if (!Number.isFinite(a)) finite = false;
        amax = Math.max(amax, a);
      }
      e.push((0.5 + 2 ** -16) * Math.fround(amax / 127) + 2 ** -140);
    }
    for (let n = 0; n < N; n++) {
      let quant = 0;
      let mag = 0;
      for (let k = 0; k < K; k++) {
        const wk = w[n * K + k]!;
        const ok = o === null ? 0 : o[n * K + k]!;
        const eb = e[Math.floor(k / 32)]!;
        quant += eb * Math.abs(wk);
        mag += (Math.abs(x[t * K + k]!) + eb) * (Math.abs(wk - ok) + Math.abs(ok));
      }
      out.push(finite && mag <= F32_MAX ? quant + gamma(m + 2) * mag + m * 2 ** -120 : null);
    }
  }
  return out;
}

/** reduce_sum and reduce_max over the last axis of [16, 256] rows. */
function reduction(op: 'reduce_sum' | 'reduce_max', r: F32Source, bulk: number): HostProgram[] {
  const rows = 16;
  const x = fill(EDGE_VALUES.length + bulk, r, op === 'reduce_max' ? EDGE_VALUES : EDGE_VALUES.filter((v) => Number.isFinite(v)));
  const chunks = chunked(['x'], [x], rows);
  const { checked, json } = built(op, (p) => {
    const v = p.activation('x', 'f32', [rows, COLS]);
    return [op === 'reduce_sum' ? p.named('y').reduceSum(v, [1]) : p.named('y').reduceMax(v, [1])];
  });
  const sums = chunks.map((ch) => Array.from({ length: rows }, (_, row) => {
    let s = 0;
    for (let j = 0; j < COLS; j++) s += Math.abs(ch['x']!.data[row * COLS + j]!);
    return s;
  }));
  return [{ name: op, checked, json, weights: {}, chunks, bound: op === 'reduce_max' ? () => 'exact' : (c, i) => within(gamma(COLS), sums[c]![i]!) }];
}

/**
 * matmul_id: x [T, 1, K] times the experts [E, N, K] that random ids [T, S] choose, for f32, f16 and
 * every quantized ggml dtype (K = 512), and q4_0, q4_1 and q8_0 in the q8 class (matmul_idq) held to
 * matmul_wq's bound: each output matmul's dot bound (or the q8 one) over its chosen expert's row.
 */
function matmulId(r: F32Source, bulk: number): HostProgram[] {
  const out: HostProgram[] = [];
  const steps = Math.max(1, Math.ceil(bulk / 4096));
  const [T, S, E, N, K] = [3, 2, 4, 32, 512];
  const chunk = () => ({
    x: tensor('f32', [T, 1, K], fill(T * K, () => Math.fround(r.u() * 2 - 1))),
    ids: tensor('i32', [T, S], Array.from({ length: T * S }, () => Math.min(E - 1, Math.floor(r.u() * E)))),
  });
  const mags = (ch: { x: Tensor; ids: Tensor }, deq: ArrayLike<number>) => {
    const m: number[] = [];
    for (let t = 0; t < T; t++) for (let s = 0; s < S; s++) for (let n = 0; n < N; n++) {
      const row = (ch.ids.data[t * S + s]! * N + n) * K;
      let sum = 0;
      for (let k = 0; k < K; k++) sum += Math.abs(ch.x.data[t * K + k]! * deq[row + k]!);
      m.push(sum);
    }
    return m;
  };
  const program = (name: string, dtype: DType | QuantDType) => built(name, (p) => [p.named('y').matmulId(p.activation('x', 'f32', [T, 1, K]), p.weight('w', dtype, [E, N, K]), p.activation('ids', 'i32', [T, S]))]);
  for (const dtype of ['f32', 'f16', ...QUANT_DTYPES.filter((d) => d !== 'q4nx_q41')] as const) {
    const { t, deq } = dtype === 'f32' || dtype === 'f16'
      ? (() => { const v = fill(E * N * K, () => roundToDtype(dtype, r.u() * 2 - 1)); return { t: tensor(dtype, [E, N, K], v), deq: v }; })()
      : randomQuant(dtype, E * N, K, r);
    const w = isQuantTensor(t) ? quantTensor(t.dtype, [E, N, K], t.bytes) : t;
    const chunks = Array.from({ length: steps }, chunk);
    const m = chunks.map((ch) => mags(ch, deq));
    const { checked, json } = program(`matmul-id-${dtype}`, dtype);
    out.push({ name: `matmul_id ${dtype}`, checked, json, weights: { w }, chunks, bound: (c, i) => within(gamma(K + 2), m[c]![i]!) });
  }
  for (const dtype of HOST_Q8_WEIGHTS) {
    const { t, deq } = randomQuant(dtype, E * N, K, r);
    const off = offsetsOf(t);
    const chunks = Array.from({ length: steps }, chunk);
    // Each slot's row of outputs is x[t] times its expert: matmul_wq's bound over that expert's rows.
    const bounds = chunks.map((ch) => {
      const b: ElementBound[] = [];
      for (let ti = 0; ti < T; ti++) for (let s = 0; s < S; s++) {
        const e = ch.ids.data[ti * S + s]!;
        const slice = (a: Float64Array) => a.subarray(e * N * K, (e + 1) * N * K);
        b.push(...q8Bounds(ch.x.data.subarray(ti * K, (ti + 1) * K), slice(deq), off === null ? null : slice(off), 1, K, N, dtype === 'q4_0' || dtype === 'q8_0' ? 1 : 2));
      }
      return b;
    });
    const { checked, json } = program(`matmul-id-q8-${dtype}`, dtype);
    out.push({ name: `matmul_id q8 ${dtype}`, checked, json, weights: { w: quantTensor(dtype, [E, N, K], t.bytes) }, chunks, bound: (c, i) => bounds[c]![i]!, matmul: 'q8' });
  }
  return out;
}

/** The arithmetic ops' programs: elementwise, matmul and the reductions. */
export function hostArithmetic(op: HostContractOp, r: F32Source, bulk: number): HostProgram[] {
  if (op === 'matmul') return matmul(r, bulk);
  if (op === 'matmul_id') return matmulId(r, bulk);
  if (op === 'reduce_sum' || op === 'reduce_max') return reduction(op, r, bulk);
  return elementwise(op, r, bulk);
}

export { chunked, built, randomQuant };
