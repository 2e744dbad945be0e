/**
 * Contract verification of the XDNA2 target: every op the target admits runs on the simulated core
 * over inputs that reach the edges of its domain and a large random bulk (contractCases.ts), and each
 * element is checked against the op's published contract (src/targets/xdna2.ts, contract.ts
 * withinContract) and the CPU oracle (src/oracle).
 *
 * The ops run through the core kernels (kernels.ts, rowKernel.ts): the very functions the simulated
 * device's cores call, minus the manifest plumbing, so the bulk needs no compiler and the core's math
 * can be swapped (`math`) for a negative control. It runs in the calling thread: the whole check takes
 * about a second, a CoreMath is functions (it cannot cross to a worker), and a worker pool's start-up
 * would cost more than it could save.
 *
 * The reference, per contract: an exact contract (mul, div, neg, recip, ge, max, reduce_max, gather)
 * is "bit for bit the IEEE result", so it is compared with the oracle's f32 result; every other bound
 * (add, sub, exp, log, tanh, erf, sqrt, reduce_sum, row_kernel) is a distance from the true value of
 * the op on the f32 inputs, so it is compared with the oracle's fp64 reference and the oracle's own
 * rounding does not eat into the bound.
 */
import { UsageError } from '../../errors.js';
import type { Tensor } from '../../ir/tensor.js';
import type { DType, RowBody } from '../../ir/types.js';
import { deriveRowBound } from '../../numerics/bounds.js';
import type { OpContract } from '../../targets/contract.js';
import { describeContract } from '../../targets/contract.js';
import { XDNA2_CONTRACTS, XDNA2_STEP_CONTRACTS } from '../../targets/xdna2.js';
import type { CoreMath } from './coreMath.js';
import { CORE_MATH } from './coreMath.js';
import { EXP_EXTRA, LOG_EXTRA, SAT_EXTRA, addCases, gatherCase, pairCases, randomF32, rng, rowCases, unaryCases, uniformF32 } from './contractCases.js';
import { ContractTally, oracle } from './contractTally.js';
import type { ContractReport } from './contractTally.js';
import { binaryKernel, gatherKernel, rowMaxKernel, rowSumKernel, unaryKernel } from './kernels.js';
import type { CoreBinary, CoreUnary } from './kernels.js';
import { rowKernelCore } from './rowKernel.js';

export type { ContractReport } from './contractTally.js';

export interface ContractRunOptions {
  readonly target: 'xdna2';
  /** Only this op (one of CONTRACT_OPS). */
  readonly op?: string;
  readonly seed?: number;
  /** Random elements per op, beyond the edge cases (default 100000). */
  readonly bulk?: number;
  /** The core's arithmetic (default the XDNA2 core's). */
  readonly math?: CoreMath;
}

/** The RMSNorm row kernel a row_kernel contract is verified on (64 columns, with a weight). */
export const RMSNORM_BODY: RowBody = {
  params: ['x', 'w'],
  steps: [
    { op: 'mul', in: ['x', 'x'], out: 'sq' },
    { op: 'reduce_sum', in: ['sq'], out: 'ss' },
    { op: 'div', in: ['ss', { lit: 64 }], out: 'ms' },
    { op: 'add', in: ['ms', { lit: 1e-6 }], out: 'e' },
    { op: 'sqrt', in: ['e'], out: 'r' },
    { op: 'div', in: ['x', 'r'], out: 'y' },
    { op: 'mul', in: ['y', 'w'], out: 'z' },
  ],
  results: ['z'],
};
const RMS_COLS = 64;

type ContractOp = keyof typeof XDNA2_CONTRACTS | 'row_kernel';
/** Every op the XDNA2 target admits, in report order. */
export const CONTRACT_OPS: readonly ContractOp[] = [...(Object.keys(XDNA2_CONTRACTS) as (keyof typeof XDNA2_CONTRACTS)[]), 'row_kernel'];

const EXACT_OPS = new Set(['mul', 'div', 'neg', 'recip', 'ge', 'max', 'reduce_max', 'gather']);

function f32Bytes(v: readonly number[] | Float32Array): Uint8Array {
  return new Uint8Array(Float32Array.from(v).buffer);
}

function f32Values(b: Uint8Array): Float32Array {
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength >>> 2);
}

function contractOf(op: ContractOp): OpContract {
  if (op !== 'row_kernel') return XDNA2_CONTRACTS[op];
  const b = deriveRowBound(RMSNORM_BODY, RMS_COLS, XDNA2_STEP_CONTRACTS);
  if (!b.ok) throw new Error(`the RMSNorm body has no derived bound: ${b.bound}`);
  return { error: { kind: 'rel', rel: b.rel }, domain: { kind: 'row-steps' }, note: `RMSNorm over ${RMS_COLS} columns, derived bound` };
}

/** Runs every admitted op (or `op`) of the target on the core and checks it against its contract. */
export function runContracts(opts: ContractRunOptions): ContractReport[] {
  if (opts.target !== 'xdna2') throw new UsageError(`contracts are verified for the xdna2 target, not ${String(opts.target)}`);
  if (opts.op !== undefined && !(CONTRACT_OPS as readonly string[]).includes(opts.op)) {
    throw new UsageError(`xdna2 admits no op ${JSON.stringify(opts.op)}: choose one of ${CONTRACT_OPS.join(', ')}`);
  }
  const math = opts.math ?? CORE_MATH;
  const bulk = opts.bulk ?? 100_000;
  const seed = opts.seed ?? 1;
  const ops = opts.op === undefined ? CONTRACT_OPS : CONTRACT_OPS.filter((o) => o === opts.op);
  return ops.map((op, k) => {
    const contract = contractOf(op);
    const tally = new ContractTally(op, describeContract(contract), contract, EXACT_OPS.has(op) ? 'oracle-f32' : 'oracle-fp64');
    verify(op, tally, math, rng(seed * 1009 + k), bulk);
    return tally.report();
  });
}

function verify(op: ContractOp, t: ContractTally, m: CoreMath, r: () => number, bulk: number): void {
  const fp64 = t.reference === 'oracle-fp64';
  switch (op) {
    case 'add': case 'sub': return binary(op, t, m, addCases(r, bulk, op === 'sub'), fp64);
    case 'mul': return binary(op, t, m, pairCases(r, bulk, 60, [[1 + 2 ** -12, 1 + 2 ** -12], [2 ** -63, 2 ** -63], [2 ** 64, 2 ** 64]]), fp64);
    case 'div': return binary(op, t, m, pairCases(r, bulk, 60, [[1, 3], [2, 3], [1, 2 ** 126], [2 ** -126, 0.5]]), fp64);
    case 'max': case 'ge': return binary(op, t, m, pairCases(r, bulk, 126), fp64);
    case 'neg': return unary(op, t, m, unaryCases(r, bulk, (g) => randomF32(g, -126, 127)), fp64);
    case 'recip': return unary(op, t, m, unaryCases(r, bulk, (g) => randomF32(g, -125, 125)), fp64);
    case 'exp': return unary(op, t, m, unaryCases(r, bulk, (g) => uniformF32(g, -90, 90), EXP_EXTRA), fp64);
    case 'log': return unary(op, t, m, unaryCases(r, bulk, (g) => randomF32(g, -126, 127, true), LOG_EXTRA), fp64);
    case 'tanh': case 'erf': return unary(op, t, m, unaryCases(r, bulk, (g) => (g() < 0.8 ? uniformF32(g, -10, 10) : randomF32(g, -126, 10)), SAT_EXTRA), fp64);
    case 'sqrt': return unary(op, t, m, unaryCases(r, bulk, (g) => randomF32(g, -126, 127, true)), fp64);
    case 'reduce_sum': case 'reduce_max': return rows(op, t, m, r, bulk, fp64);
    case 'gather': return gather(t, r, bulk);
    case 'row_kernel': return rmsNorm(t, m, r, bulk);
  }
}

function binary(op: CoreBinary, t: ContractTally, m: CoreMath, c: { a: number[]; b: number[] }, fp64: boolean): void {
  const n = c.a.length;
  const got = binaryKernel(op, m, f32Bytes(c.a), f32Bytes(c.b), n);
  const a = Float64Array.from(Float32Array.from(c.a));
  const b = Float64Array.from(Float32Array.from(c.b));
  const want = oracle(op, [tensorOf('f32', [n], a), tensorOf('f32', [n], b)], {}, fp64).data;
  const g = op === 'ge' ? Float64Array.from(got) : Float64Array.from(f32Values(got));
  for (let i = 0; i < n; i++) {
    t.check(g[i]!, want[i]!, [a[i]!, b[i]!]);
    // The adder's second promise: a cancellation that leaves a small result is exact.
    if ((op === 'add' || op === 'sub') && Number.isFinite(want[i]!) && Math.abs(want[i]!) <= Math.min(Math.abs(a[i]!), Math.abs(b[i]!)) && g[i] !== want[i]) {
      t.extraFailure(`a cancellation is not exact: ${a[i]} ${op} ${b[i]} gave ${g[i]}, exactly ${want[i]}`);
    }
  }
  if (op === 'add' || op === 'sub') t.note('cancellations (|result| <= the smaller operand) must be exact');
}

function unary(op: CoreUnary, t: ContractTally, m: CoreMath, xs: number[], fp64: boolean): void {
  const n = xs.length;
  const got = f32Values(unaryKernel(op, m, f32Bytes(xs)));
  const x = Float64Array.from(Float32Array.from(xs));
  const want = oracle(op, [tensorOf('f32', [n], x)], {}, fp64).data;
  for (let i = 0; i < n; i++) t.check(got[i]!, want[i]!, [x[i]!]);
}

function rows(op: 'reduce_sum' | 'reduce_max', t: ContractTally, m: CoreMath, r: () => number, bulk: number, fp64: boolean): void {
  for (const gr of rowCases(r, bulk)) {
    const data = Float64Array.from(Float32Array.from(gr.data));
    const bytes = f32Bytes(gr.data);
    const shape = [gr.rows, gr.cols];
    const got = f32Values(op === 'reduce_sum' ? rowSumKernel(m, bytes, shape) : rowMaxKernel(bytes, shape));
    const want = oracle(op, [tensorOf('f32', shape, data)], { axes: [1] }, fp64).data;
    for (let i = 0; i < gr.rows; i++) t.check(got[i]!, want[i]!, [...data.subarray(i * gr.cols, (i + 1) * gr.cols)]);
  }
  if (op === 'reduce_sum') t.note('rows of 4096 columns');
}

function gather(t: ContractTally, r: () => number, bulk: number): void {
  const { src, idx } = gatherCase(r, bulk);
  const srcBytes = new Uint8Array(src.buffer);
  const got = new Uint32Array(gatherKernel({ dtype: 'f32', shape: [src.length], bytes: srcBytes }, new Uint8Array(idx.buffer), 0).buffer);
  const srcValues = Float64Array.from(new Float32Array(src.buffer));
  const want = oracle('gather', [tensorOf('f32', [src.length], srcValues), tensorOf('i32', [idx.length], Float64Array.from(idx))], { axis: 0 }, false).data;
  const gotValues = new Float32Array(got.buffer);
  for (let i = 0; i < idx.length; i++) {
    t.check(gotValues[i]!, want[i]!, [srcValues[idx[i]!]!]);
    // The oracle holds f64, which drops NaN payloads; the patterns are checked against the source's.
    if (got[i] !== src[idx[i]!]) t.extraFailure(`element ${i}: pattern 0x${got[i]!.toString(16)}, the source's is 0x${src[idx[i]!]!.toString(16)}`);
  }
  t.note('bit patterns (NaN payloads, -0) checked against the source');
}

function rmsNorm(t: ContractTally, m: CoreMath, r: () => number, bulk: number): void {
  const rowsN = Math.max(8, Math.ceil(bulk / RMS_COLS));
  const x: number[] = [];
  for (let i = 0; i < rowsN * RMS_COLS; i++) x.push(i < RMS_COLS ? 0 : (i / RMS_COLS) % 7 === 1 ? randomF32(r, -60, 60) : uniformF32(r, -4, 4));
  const w: number[] = [];
  for (let j = 0; j < RMS_COLS; j++) w.push(uniformF32(r, -2, 2));
  const shape = [rowsN, RMS_COLS];
  const [got] = rowKernelCore(m, RMSNORM_BODY, [{ bytes: f32Bytes(x), shape }, { bytes: f32Bytes(w), shape: [RMS_COLS] }], shape, [true]);
  const gv = f32Values(got!);
  const xv = Float64Array.from(Float32Array.from(x));
  const wv = Float64Array.from(Float32Array.from(w));
  const want = oracle('row_kernel', [tensorOf('f32', shape, xv), tensorOf('f32', [RMS_COLS], wv)], { body: RMSNORM_BODY }, true).data;
  for (let i = 0; i < gv.length; i++) {
    const row = Math.floor(i / RMS_COLS);
    t.check(gv[i]!, want[i]!, [...xv.subarray(row * RMS_COLS, (row + 1) * RMS_COLS), wv[i % RMS_COLS]!]);
  }
  t.note(`RMSNorm, ${rowsN} rows of ${RMS_COLS} columns`);
}

function tensorOf(dtype: DType, shape: number[], data: Float64Array): Tensor {
  return { dtype, shape, data };
}
