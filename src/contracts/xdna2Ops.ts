/**
 * What XDNA2 contract verification runs, per op: small F32 programs (the op over [rows, cols] tensors
 * and, where the op takes one, over an inline literal too; the last-axis sum and max over long rows;
 * gather with i32 indices; the RMSNorm row kernel) and the cases that drive them (the edge cases and the
 * seeded bulk of src/devices/xdna2/contractCases.ts), cut into chunks of one program's shape, and how
 * each element of the device's results is judged against the oracle's under the op's contract.
 * A chunk's tail past the cases is padding (ones, index 0) and is never judged.
 */
import type { ContractTally } from '../devices/xdna2/contractTally.js';
import type { PairCase, RowGroup } from '../devices/xdna2/contractCases.js';
import { EXP_EXTRA, LOG_EXTRA, SAT_EXTRA, addCases, gatherCase, pairCases, randomF32, rowCases, unaryCases, uniformF32 } from '../devices/xdna2/contractCases.js';
import type { ContractOp } from '../devices/xdna2/contracts.js';
import { RMSNORM_BODY, RMS_COLS } from '../devices/xdna2/contracts.js';
import { parseProgram } from '../ir/codec.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { Tensor } from '../ir/tensor.js';
import type { DType, Shape } from '../ir/types.js';
import { numel } from '../ir/types.js';
import { checkProgram } from '../ops/validate.js';
import type { StepOutput, TensorMap } from '../oracle/types.js';

/** One program of an op's verification and the chunks it runs over, on the device and on the oracle. */
export interface ContractProgram {
  /** The program's JSON form: what an oracle task carries to a worker. */
  readonly json: object;
  readonly checked: CheckedProgram;
  readonly weights: TensorMap;
  /** One map of activation contents per replay. */
  readonly chunks: readonly TensorMap[];
  /** Activations whose host writes carry these raw bytes instead of the tensor's (rawIo.ts: gather's NaN payloads). */
  readonly raw?: Readonly<Record<string, Uint8Array>>;
}

/** What the device gave for one chunk: its results, and the raw bytes read back of each. */
export interface DeviceChunk {
  readonly results: TensorMap;
  readonly raw: Readonly<Record<string, Uint8Array>>;
}

/** An op's programs, and the judge of their results. */
export interface OpPlan {
  readonly programs: readonly ContractProgram[];
  /** Judges the device's chunks against the oracle's (both indexed by program, then chunk) into `t`. */
  judge(t: ContractTally, got: readonly (readonly DeviceChunk[])[], want: readonly (readonly StepOutput[])[]): void;
}

/** Elements per elementwise chunk: big enough that a replay is worth its overhead. */
const EW: Shape = [64, 256];
const CHUNK = numel(EW);
/** Indices per gather chunk: gather keeps its source and a chunk of indices in one core's 64 KB. */
const GATHER_CHUNK = 2048;
/** Rows per RMSNorm chunk. */
const RMS_ROWS = 256;

type ArgSpec = { readonly shape: Shape; readonly dtype?: DType; readonly role?: 'activation' | 'weight' };

function contractProgram(name: string, args: Readonly<Record<string, ArgSpec>>, eqns: readonly object[], results: readonly string[]): { json: object; checked: CheckedProgram } {
  const json = {
    format: 'program@1', name: `xdna2-contract-${name}`,
    args: Object.entries(args).map(([n, a]) => ({ name: n, role: a.role ?? 'activation', dtype: a.dtype ?? 'f32', shape: [...a.shape] })),
    eqns, results, state: {},
  };
  return { json, checked: checkProgram(parseProgram(json)) };
}

/** The f32 values of `v`, as the f64 a tensor holds. */
const f32 = (v: readonly number[]) => Float64Array.from(Float32Array.from(v));

/** `values` cut into tensors of `shape`, the last one padded with `pad`. */
function chunked(values: Float64Array, shape: Shape, dtype: DType = 'f32', pad = 1): Tensor[] {
  const n = numel(shape);
  const out: Tensor[] = [];
  for (let s = 0; s < values.length; s += n) {
    const d = new Float64Array(n).fill(pad);
    d.set(values.subarray(s, Math.min(s + n, values.length)));
    out.push({ dtype, shape: [...shape], data: d });
  }
  return out;
}

/** Calls `fn` once per chunk of `size` over `n` elements: its index, first element and count. */
function forChunks(n: number, size: number, fn: (k: number, start: number, count: number) => void): void {
  for (let k = 0, s = 0; s < n; k++, s += size) fn(k, s, Math.min(size, n - s));
}

const data = (m: TensorMap, name: string) => m[name]!.data;

type BinaryOp = 'add' | 'sub' | 'mul' | 'div' | 'max' | 'ge';
type UnaryOp = 'neg' | 'recip' | 'exp' | 'log' | 'tanh' | 'erf' | 'sqrt';

// One element of a binary op, and the adder's second promise: a cancellation that leaves a small
// result is exact.
function checkPair(t: ContractTally, op: BinaryOp, g: number, w: number, a: number, b: number): void {
  t.check(g, w, [a, b]);
  if ((op === 'add' || op === 'sub') && Number.isFinite(w) && Math.abs(w) <= Math.min(Math.abs(a), Math.abs(b)) && g !== w) {
    t.extraFailure(`a cancellation is not exact: ${a} ${op} ${b} gave ${g}, exactly ${w}`);
  }
}

/** y = a op b over the cases, and z = a op `literal` (an inline literal: a core operand of its own). */
function binary(op: BinaryOp, c: PairCase, literal: number): OpPlan {
  const a = f32(c.a);
  const b = f32(c.b);
  const p = contractProgram(op, { a: { shape: EW }, b: { shape: EW } }, [
    { op, in: ['a', 'b'], out: 'y' }, { op, in: ['a', { lit: literal }], out: 'z' },
  ], ['y', 'z']);
  const bs = chunked(b, EW);
  return {
    programs: [{ ...p, weights: {}, chunks: chunked(a, EW).map((x, k) => ({ a: x, b: bs[k]! })) }],
    judge(t, got, want) {
      forChunks(a.length, CHUNK, (k, s, n) => {
        const g = got[0]![k]!.results;
        const w = want[0]![k]!.results;
        const [gy, wy, gz, wz] = [data(g, 'y'), data(w, 'y'), data(g, 'z'), data(w, 'z')];
        for (let i = 0; i < n; i++) {
          checkPair(t, op, gy[i]!, wy[i]!, a[s + i]!, b[s + i]!);
          checkPair(t, op, gz[i]!, wz[i]!, a[s + i]!, literal);
        }
      });
      if (op === 'add' || op === 'sub') t.note('cancellations (|result| <= the smaller operand) must be exact');
      t.note(`every first operand against the literal ${literal} too`);
    },
  };
}

function unary(op: UnaryOp, xs: readonly number[]): OpPlan {
  const x = f32(xs);
  const p = contractProgram(op, { x: { shape: EW } }, [{ op, in: ['x'], out: 'y' }], ['y']);
  return {
    programs: [{ ...p, weights: {}, chunks: chunked(x, EW).map((c) => ({ x: c })) }],
    judge(t, got, want) {
      forChunks(x.length, CHUNK, (k, s, n) => {
        const gy = data(got[0]![k]!.results, 'y');
        const wy = data(want[0]![k]!.results, 'y');
        for (let i = 0; i < n; i++) t.check(gy[i]!, wy[i]!, [x[s + i]!]);
      });
    },
  };
}

/** The last-axis reduction over each group of rows: one program per group, chunks of whole rows. */
function rows(op: 'reduce_sum' | 'reduce_max', groups: readonly RowGroup[]): OpPlan {
  const plans = groups.map((gr, j) => {
    const perChunk = Math.min(gr.rows, Math.max(1, Math.floor(CHUNK / gr.cols)));
    const shape = [perChunk, gr.cols];
    const x = f32(gr.data);
    const p = contractProgram(`${op}-${j}`, { x: { shape } }, [{ op, in: ['x'], out: 'y', axes: [1] }], ['y']);
    return { gr, x, perChunk, program: { ...p, weights: {}, chunks: chunked(x, shape).map((c) => ({ x: c })) } };
  });
  return {
    programs: plans.map((p) => p.program),
    judge(t, got, want) {
      plans.forEach(({ gr, x, perChunk }, j) => {
        forChunks(gr.rows, perChunk, (k, s, n) => {
          const gy = data(got[j]![k]!.results, 'y');
          const wy = data(want[j]![k]!.results, 'y');
          for (let i = 0; i < n; i++) t.check(gy[i]!, wy[i]!, [...x.subarray((s + i) * gr.cols, (s + i + 1) * gr.cols)]);
        });
      });
      if (op === 'reduce_sum') t.note('rows of 4096 columns');
    },
  };
}

function gather(r: () => number, bulk: number, edges: boolean): OpPlan {
  const { src, idx } = gatherCase(r, bulk, edges);
  const srcValues = Float64Array.from(new Float32Array(src.buffer));
  const srcTensor: Tensor = { dtype: 'f32', shape: [src.length], data: srcValues };
  const p = contractProgram('gather', { src: { shape: [src.length] }, idx: { shape: [GATHER_CHUNK], dtype: 'i32' } }, [
    { op: 'gather', in: ['src', 'idx'], out: 'y', axis: 0 },
  ], ['y']);
  const chunks = chunked(Float64Array.from(idx), [GATHER_CHUNK], 'i32', 0).map((c) => ({ src: srcTensor, idx: c }));
  return {
    programs: [{ ...p, weights: {}, chunks, raw: { src: new Uint8Array(src.buffer) } }],
    judge(t, got, want) {
      forChunks(idx.length, GATHER_CHUNK, (k, s, n) => {
        const bits = new Uint32Array(got[0]![k]!.raw['y']!.slice().buffer);
        const values = new Float32Array(bits.buffer);
        const wy = data(want[0]![k]!.results, 'y');
        for (let i = 0; i < n; i++) {
          const from = idx[s + i]!;
          t.check(values[i]!, wy[i]!, [srcValues[from]!]);
          // The oracle holds f64, which drops NaN payloads; the patterns are checked against the source's.
          if (bits[i] !== src[from]) t.extraFailure(`element ${s + i}: pattern 0x${bits[i]!.toString(16)}, the source's is 0x${src[from]!.toString(16)}`);
        }
      });
      t.note('bit patterns (NaN payloads, -0) checked against the source');
    },
  };
}

function rmsNorm(r: () => number, bulk: number, edges: boolean): OpPlan {
  const rowsN = Math.max(8, Math.ceil(bulk / RMS_COLS));
  const xs: number[] = [];
  // The edge: a first row of zeros (rms 0 plus the epsilon).
  for (let i = 0; i < rowsN * RMS_COLS; i++) xs.push(edges && i < RMS_COLS ? 0 : (i / RMS_COLS) % 7 === 1 ? randomF32(r, -60, 60) : uniformF32(r, -4, 4));
  const ws: number[] = [];
  for (let j = 0; j < RMS_COLS; j++) ws.push(uniformF32(r, -2, 2));
  const x = f32(xs);
  const w = f32(ws);
  const shape = [RMS_ROWS, RMS_COLS];
  const p = contractProgram('row_kernel', { x: { shape }, w: { shape: [RMS_COLS], role: 'weight' } }, [
    { op: 'row_kernel', in: ['x', 'w'], out: 'z', body: RMSNORM_BODY },
  ], ['z']);
  return {
    programs: [{ ...p, weights: { w: { dtype: 'f32', shape: [RMS_COLS], data: w } }, chunks: chunked(x, shape).map((c) => ({ x: c })) }],
    judge(t, got, want) {
      forChunks(x.length, numel(shape), (k, s, n) => {
        const gz = data(got[0]![k]!.results, 'z');
        const wz = data(want[0]![k]!.results, 'z');
        for (let i = 0; i < n; i++) {
          const row = Math.floor((s + i) / RMS_COLS);
          t.check(gz[i]!, wz[i]!, [...x.subarray(row * RMS_COLS, (row + 1) * RMS_COLS), w[i % RMS_COLS]!]);
        }
      });
      t.note(`RMSNorm, ${rowsN} rows of ${RMS_COLS} columns, in chunks of ${RMS_ROWS} rows`);
    },
  };
}

/** The programs and judge of `op`, its cases drawn from `r`: the edge cases too unless `edges` is false. */
export function planOp(op: ContractOp, r: () => number, bulk: number, edges = true): OpPlan {
  switch (op) {
    case 'add': case 'sub': return binary(op, addCases(r, bulk, op === 'sub', edges), 1);
    case 'mul': return binary(op, pairCases(r, bulk, 60, [[1 + 2 ** -12, 1 + 2 ** -12], [2 ** -63, 2 ** -63], [2 ** 64, 2 ** 64]], edges), 3);
    case 'div': return binary(op, pairCases(r, bulk, 60, [[1, 3], [2, 3], [1, 2 ** 126], [2 ** -126, 0.5]], edges), 3);
    case 'max': case 'ge': return binary(op, pairCases(r, bulk, 126, [], edges), 0);
    case 'neg': return unary(op, unaryCases(r, bulk, (g) => randomF32(g, -126, 127), [], edges));
    case 'recip': return unary(op, unaryCases(r, bulk, (g) => randomF32(g, -125, 125), [], edges));
    case 'exp': return unary(op, unaryCases(r, bulk, (g) => uniformF32(g, -90, 90), EXP_EXTRA, edges));
    case 'log': return unary(op, unaryCases(r, bulk, (g) => randomF32(g, -126, 127, true), LOG_EXTRA, edges));
    case 'tanh': case 'erf': return unary(op, unaryCases(r, bulk, (g) => (g() < 0.8 ? uniformF32(g, -10, 10) : randomF32(g, -126, 10)), SAT_EXTRA, edges));
    case 'sqrt': return unary(op, unaryCases(r, bulk, (g) => randomF32(g, -126, 127, true), [], edges));
    case 'reduce_sum': case 'reduce_max': return rows(op, rowCases(r, bulk, edges));
    case 'gather': return gather(r, bulk, edges);
    case 'row_kernel': return rmsNorm(r, bulk, edges);
  }
}
