/**
 * What NPU4 contract verification runs, per op: one table (`NPU4_CONTRACT_CASES`, one row per op the
 * target admits, plus three multi-op programs) whose rows build small programs and the cases that drive
 * them (npu4Cases.ts). A case is one replay: activation contents and how its results are judged:
 * - `normwise`: every F32 result against the F32 oracle, by normwise relative error (the contract);
 * - `exact`: every result bit for bit against the oracle run on the FP16 values of the inputs (the
 *   values the device holds). For data movement over FP16 values that is the F32 oracle itself.
 */
import type { ProgramBuilder, Value } from '../ops/builder.js';
import { lit, program } from '../ops/builder.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { Tensor } from '../ir/tensor.js';
import type { DType, Shape } from '../ir/types.js';
import { isFloat, numel } from '../ir/types.js';
import { checkProgram } from '../ops/validate.js';
import type { TensorMap } from '../oracle/types.js';
import type { Gen, PairGen } from './npu4Cases.js';
import {
  ADD_EDGES, allF16, COMPARE_EDGES, COMPARE_PROFILES, DIV_EDGES, DIV_PROFILES, EXP_EDGES, EXP_PROFILES, finiteF16, MAX, MUL_EDGES,
  MUL_PROFILES, UNARY_EDGES, addProfiles, cycled, f32Pair, f32Tensor, indices, mag, oneOf, uni, unaryProfiles,
} from './npu4Cases.js';

/** One replay of a contract program and how its results are judged (see the file's doc). */
export interface ContractCase {
  readonly name: string;
  readonly program: CheckedProgram;
  readonly inputs: TensorMap;
  readonly check: 'normwise' | 'exact';
}

/** How an op's report reads: an arithmetic op, an exact one, or a representative multi-op program. */
export type ContractGroup = 'arithmetic' | 'exact' | 'program';

export interface OpCases {
  readonly group: ContractGroup;
  readonly cases: (r: () => number, bulk: number) => ContractCase[];
}

const EW: Shape = [64, 64];
const ROWS: Shape = [32, 256];
const MOVE: Shape = [256, 256];
// The finite FP16 values exactly fill 248 rows of 256.
const FINITE: Shape = [248, 256];

/** A checked program named after the op whose results `body` returns. */
function built(name: string, body: (p: ProgramBuilder) => Value[]): CheckedProgram {
  const p = program(`npu4-contract-${name}`);
  p.results(...body(p));
  return checkProgram(p.build());
}

/** Bulk cases of `shape` that cover at least `bulk` random elements. */
const bulkCount = (bulk: number, shape: Shape) => Math.max(1, Math.ceil(bulk / numel(shape)));

/** Cases of `prog` per profile (the bulk repeated), with F32 inputs drawn per arg by `inputs`. */
function profiled<P>(prog: CheckedProgram, profiles: Readonly<Record<string, P>>, bulk: number, shape: Shape, inputs: (g: P) => TensorMap, check: ContractCase['check'] = 'normwise'): ContractCase[] {
  return Object.entries(profiles).flatMap(([name, g]) => {
    const n = name === 'bulk' ? bulkCount(bulk, shape) : 1;
    return Array.from({ length: n }, (_, k): ContractCase => ({ name: n > 1 ? `${name}#${k}` : name, program: prog, inputs: inputs(g), check }));
  });
}

type BinaryOp = 'add' | 'sub' | 'mul' | 'div' | 'max' | 'ge';

function binary(op: BinaryOp, profiles: Readonly<Record<string, PairGen>>, edges: readonly (readonly [number, number])[], check: ContractCase['check'] = 'normwise'): OpCases {
  return {
    group: op === 'ge' ? 'exact' : 'arithmetic',
    cases(r, bulk) {
      const prog = built(op, (p) => [p.named('y')[op](p.activation('a', 'f32', EW), p.activation('b', 'f32', EW))]);
      const pair = (g: PairGen, e: typeof edges = []) => { const [a, b] = f32Pair(EW, r, g, e); return { a, b }; };
      // The range edges ride in front of a near-max tensor, so the tensor's norm is near-max too.
      const edge: ContractCase = { name: 'range-edge', program: prog, inputs: pair(profiles['near-max']!, edges), check };
      return [edge, ...profiled(prog, profiles, bulk, EW, (g) => pair(g), check)];
    },
  };
}

function unary(op: 'neg' | 'exp' | 'sqrt', profiles: Readonly<Record<string, Gen>>, edges: readonly number[]): OpCases {
  return {
    group: 'arithmetic',
    cases(r, bulk) {
      const prog = built(op, (p) => [p.named('y')[op](p.activation('x', 'f32', EW))]);
      const edge: ContractCase = { name: 'edges', program: prog, inputs: { x: f32Tensor(EW, r, profiles['near-max']!, edges) }, check: 'normwise' };
      return [edge, ...profiled(prog, profiles, bulk, EW, (g) => ({ x: f32Tensor(EW, r, g) }))];
    },
  };
}

/** Rows that sum to nearly nothing: each value followed by nearly its negation. */
function cancellingRows(r: () => number): Tensor {
  const t = f32Tensor(ROWS, r, mag(2 ** -4, 2 ** 10));
  for (let i = 1; i < t.data.length; i += 2) t.data[i] = Math.fround(-t.data[i - 1]! * (1 + uni(-(2 ** -9), 2 ** -9)(r)));
  return t;
}

function reduction(op: 'reduce_sum' | 'reduce_max'): OpCases {
  return {
    group: 'arithmetic',
    cases(r, bulk) {
      const prog = built(op, (p) => {
        const x = p.activation('x', 'f32', ROWS);
        return [op === 'reduce_sum' ? p.named('y').reduceSum(x, [1]) : p.named('y').reduceMax(x, [1])];
      });
      const cols = ROWS[1]!;
      // Two rows holding one ±65504 each: the largest sum in range.
      const rowEdges = [MAX, ...new Array<number>(cols - 1).fill(0), -MAX, ...new Array<number>(cols - 1).fill(-0)];
      // A sum of 256 stays in range when every term is below 255.
      const profiles: Record<string, Gen> = op === 'reduce_max' ? { ...unaryProfiles(false) } : {
        'near-max': mag(128, 255, true), 'fp16-min-normal': mag(2 ** -14, 2 ** -10, true), 'fp16-subnormal': mag(2 ** -24, 2 ** -14),
        'mixed': mag(2 ** -20, 2 ** 7), 'bulk': oneOf(uni(-1, 1), mag(2 ** -8, 2 ** 4, true)),
      };
      const out = profiled(prog, profiles, bulk, ROWS, (g) => ({ x: f32Tensor(ROWS, r, g) }));
      out.unshift({ name: 'range-edge', program: prog, inputs: { x: f32Tensor(ROWS, r, profiles['near-max']!, rowEdges) }, check: 'normwise' });
      if (op === 'reduce_sum') out.push({ name: 'cancel', program: prog, inputs: { x: cancellingRows(r) }, check: 'normwise' });
      return out;
    },
  };
}

/** A matmul [16, 64] x [64, 32]: dot products of 64 terms. */
const matmul: OpCases = {
  group: 'arithmetic',
  cases(r, bulk) {
    const prog = built('matmul', (p) => [p.named('y').matmul(p.activation('a', 'f32', [16, 64]), p.activation('b', 'f32', [64, 32]))]);
    // Terms below 31.9^2, 64 of them: every dot product stays in range.
    const profiles: Record<string, readonly [Gen, Gen]> = {
      'near-max': [uni(0, 31.9), uni(0, 31.9)], 'fp16-min-normal': [mag(2 ** -7, 2 ** -5, true), mag(2 ** -7, 2 ** -5, true)],
      'fp16-subnormal': [mag(2 ** -24, 2 ** -14), uni(-1, 1)], 'mixed': [mag(2 ** -12, 2 ** 4), mag(2 ** -12, 2 ** 2)], 'bulk': [uni(-1, 1), uni(-1, 1)],
    };
    return profiled(prog, profiles, bulk, [16, 64], ([ga, gb]) => ({ a: f32Tensor([16, 64], r, ga), b: f32Tensor([64, 32], r, gb) }));
  },
};

/** Convert F32 to FP16 (one rounding, the oracle's too) and FP16 to F32 (exact), bit for bit. */
const convert: OpCases = {
  group: 'exact',
  cases(r, bulk) {
    const down = built('convert-f32-f16', (p) => [p.named('y').convert(p.activation('x', 'f32', EW), 'f16')]);
    const up = built('convert-f16-f32', (p) => [p.named('y').convert(p.activation('x', 'f16', FINITE), 'f32')]);
    const cases = profiled(down, unaryProfiles(false), bulk, EW, (g) => ({ x: f32Tensor(EW, r, g, UNARY_EDGES) }), 'exact');
    // NaN and infinities stay out: an F32 result that is not within ±65504 is refused by the session.
    cases.push({ name: 'f16-to-f32 every finite FP16', program: up, inputs: { x: cycled('f16', FINITE, finiteF16()) }, check: 'exact' });
    return cases;
  },
};

/** Float args of `prog` filled by cycling `values` (each arg from its own offset), I32 args by `ints`. */
function movementInputs(prog: CheckedProgram, values: Float64Array, ints: TensorMap, dtype: DType): TensorMap {
  const out: Record<string, Tensor> = { ...ints };
  prog.program.args.forEach((a, k) => {
    if (isFloat(a.dtype)) out[a.name] = cycled(dtype, a.shape, values, k * 7919);
  });
  return out;
}

/**
 * A data-movement op, judged three ways: an F16 program over every FP16 bit pattern (NaNs and
 * infinities too), an F32 program over every finite FP16 value (the narrowing carries them exactly),
 * both bit for bit; and the F32 program over general F32 values, which the narrowing rounds once on
 * entry, judged by the contract.
 */
function movement(name: string, body: (p: ProgramBuilder, d: DType) => Value[], ints: (r: () => number) => TensorMap = () => ({})): OpCases {
  return {
    group: 'exact',
    cases(r) {
      const f16 = built(`${name}-f16`, (p) => body(p, 'f16'));
      const f32 = built(`${name}-f32`, (p) => body(p, 'f32'));
      const general = Float64Array.from({ length: numel(MOVE) }, () => Math.fround(mag(2 ** -20, MAX)(r)));
      return [
        { name: 'f16 every bit pattern', program: f16, inputs: movementInputs(f16, allF16(), ints(r), 'f16'), check: 'exact' },
        { name: 'f32 every finite FP16 value', program: f32, inputs: movementInputs(f32, finiteF16(), ints(r), 'f32'), check: 'exact' },
        { name: 'f32 general values', program: f32, inputs: movementInputs(f32, general, ints(r), 'f32'), check: 'normwise' },
      ];
    },
  };
}

/** iota has no inputs: exact in FP16 up to 2048, rounded by FP16 beyond it (an F32 iota is narrowed). */
const iota: OpCases = {
  group: 'exact',
  cases() {
    const mk = (name: string, shape: Shape, d: DType) => built(`iota-${name}`, (p) => [p.named('y').iota(shape, shape.length - 1, d)]);
    return [
      { name: 'f16 [2048]', program: mk('f16', [2048], 'f16'), inputs: {}, check: 'exact' },
      { name: 'f32 [4, 2048]', program: mk('f32', [4, 2048], 'f32'), inputs: {}, check: 'exact' },
      { name: 'f32 [4, 4096] (beyond 2048)', program: mk('f32-long', [4, 4096], 'f32'), inputs: {}, check: 'normwise' },
    ];
  },
};

/** A representative multi-op program over F32 args drawn per profile. */
function multi(name: string, shapes: Readonly<Record<string, Shape>>, body: (p: ProgramBuilder, a: Readonly<Record<string, Value>>) => Value, profiles: Readonly<Record<string, Readonly<Record<string, Gen>>>>): OpCases {
  return {
    group: 'program',
    cases(r, bulk) {
      const prog = built(name, (p) => {
        const args = Object.fromEntries(Object.entries(shapes).map(([n, s]) => [n, p.activation(n, 'f32', s)]));
        return [body(p, args)];
      });
      const first = Object.values(shapes)[0]!;
      return profiled(prog, profiles, bulk, first, (gens) => Object.fromEntries(Object.entries(shapes).map(([n, s]) => [n, f32Tensor(s, r, gens[n]!)])));
    },
  };
}

const v = (a: Readonly<Record<string, Value>>, n: string): Value => a[n]!;

/** Every op NPU4_TARGET admits, plus three representative programs, in report order. */
export const NPU4_CONTRACT_CASES = {
  add: binary('add', addProfiles(1), ADD_EDGES),
  sub: binary('sub', addProfiles(-1), ADD_EDGES.map(([a, b]) => [a, -b] as const)),
  mul: binary('mul', MUL_PROFILES, MUL_EDGES),
  div: binary('div', DIV_PROFILES, DIV_EDGES),
  max: binary('max', COMPARE_PROFILES, COMPARE_EDGES),
  ge: binary('ge', COMPARE_PROFILES, COMPARE_EDGES, 'exact'),
  neg: unary('neg', unaryProfiles(false), UNARY_EDGES),
  exp: unary('exp', EXP_PROFILES, EXP_EDGES),
  sqrt: unary('sqrt', unaryProfiles(true), UNARY_EDGES.map(Math.abs)),
  reduce_sum: reduction('reduce_sum'),
  reduce_max: reduction('reduce_max'),
  matmul,
  convert,
  gather: movement('gather', (p, d) => {
    const src = p.activation('x', d, MOVE);
    const idx = p.activation('idx', 'i32', [64]);
    return [p.named('y0').gather(src, idx, 0), p.named('y1').gather(src, idx, 1)];
  }, (r) => ({ idx: indices([64], r, 256) })),
  reshape: movement('reshape', (p, d) => [p.named('y').reshape(p.activation('x', d, MOVE), [64, 4, 256])]),
  transpose: movement('transpose', (p, d) => [p.named('y').transpose(p.activation('x', d, MOVE), [1, 0])]),
  broadcast: movement('broadcast', (p, d) => [p.named('y').broadcast(p.activation('x', d, MOVE), [2, 256, 256], [1, 2])]),
  slice: movement('slice', (p, d) => [p.named('y').slice(p.activation('x', d, MOVE), [1, 3], [255, 256], [2, 3])]),
  concat: movement('concat', (p, d) => [p.named('y').concat([p.activation('x', d, MOVE), p.activation('u', d, [16, 256])], 0)]),
  iota,
  dynamic_update_slice: movement('dus', (p, d) => {
    const x = p.activation('x', d, MOVE);
    const u = p.activation('u', d, [16, 256]);
    return [p.named('y').dynamicUpdateSlice(x, u, [p.activation('pos', 'i32', []), lit(0, 'i32')])];
  }, (r) => ({ pos: { dtype: 'i32', shape: [], data: Float64Array.of(Math.floor(r() * 241)) } })),
  // An elementwise chain (a SiLU-like gate): h = x*y + x, z = h / (exp(-h) + 1) * sqrt(max(h, 0) + 1).
  chain: multi('chain', { x: EW, y: EW }, (p, a) => {
    const h = p.named('h').add(p.named('xy').mul(v(a, 'x'), v(a, 'y')), v(a, 'x'));
    const s = p.named('s').div(h, p.named('e1').add(p.named('e').exp(p.named('nh').neg(h)), 1));
    return p.named('z').mul(s, p.named('r').sqrt(p.named('r1').add(p.named('relu').max(h, 0), 1)));
  }, {
    // x <= 40, y <= 39: h <= 1600 and z <= 1600 * 40.01, inside 65504.
    'near-max': { x: uni(30, 40), y: uni(30, 39) }, 'fp16-min-normal': { x: mag(2 ** -14, 2 ** -10), y: uni(-1, 1) },
    'mixed': { x: mag(2 ** -12, 2.5), y: mag(2 ** -12, 2.5) }, 'bulk': { x: uni(-2.5, 2.5), y: uni(-2.5, 2.5) },
  }),
  // A row sum inside a chain: the root mean square of each row of 256.
  rms: multi('rms', { x: ROWS }, (p, a) => {
    const ss = p.named('ss').reduceSum(p.named('sq').mul(v(a, 'x'), v(a, 'x')), [1]);
    return p.named('y').sqrt(p.named('ms').div(ss, ROWS[1]!));
  }, {
    // |x| < 16: 256 squares sum below 65504.
    'near-max': { x: mag(12, 15.99) }, 'fp16-min-normal': { x: mag(2 ** -7, 2 ** -5) }, 'mixed': { x: mag(2 ** -12, 8) }, 'bulk': { x: uni(-1, 1) },
  }),
  // A matmul layer: max(x w + b, 0).
  linear: multi('linear', { x: [16, 64], w: [64, 32], b: [32] }, (p, a) => {
    const m = p.named('m').matmul(v(a, 'x'), v(a, 'w'));
    return p.named('y').max(p.named('mb').add(m, p.named('bb').broadcast(v(a, 'b'), [16, 32], [1])), 0);
  }, {
    'near-max': { x: uni(0, 31.9), w: uni(0, 31.9), b: uni(0, 100) }, 'mixed': { x: mag(2 ** -12, 16), w: mag(2 ** -12, 4), b: mag(2 ** -12, 16) },
    'bulk': { x: uni(-1, 1), w: uni(-1, 1), b: uni(-1, 1) },
  }),
} as const satisfies Readonly<Record<string, OpCases>>;

/** An op (or program) of NPU4 contract verification. */
export type Npu4ContractOp = keyof typeof NPU4_CONTRACT_CASES;
/** Every op verified, in report order. */
export const NPU4_CONTRACT_OPS = Object.keys(NPU4_CONTRACT_CASES) as Npu4ContractOp[];
