/**
 * Host conformance: small programs of the oracle's kind, every op of the op table in each dtype the
 * oracle runs it in, reductions over every kind of axis set, gather on every axis, the data movement,
 * row kernels and carried state. Each must be admitted by the host target (no refusal at plan time)
 * and, run through the engine on the host device, give the oracle's results under host's numerics
 * policy (verify). What no single device can run (a collective) is listed with its reason.
 */
import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { parseProgram } from '../../src/ir/codec.js';
import { numel } from '../../src/ir/types.js';
import { roundToDtype } from '../../src/numerics/float16.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { checkProgram } from '../../src/ops/validate.js';
import { planProgram } from '../../src/planner/plan.js';
import { HOST_TARGET } from '../../src/targets/host/index.js';
import { loadHostKernels } from '../../src/devices/host/native.js';
import { tempDir } from '../jobs/helpers.js';

type Dt = 'f32' | 'f16' | 'bf16' | 'i32' | 'bool';
type Operand = string | { lit: number; dtype?: Dt };
interface Eqn { op: string; in: Operand[]; out: string | string[]; [attr: string]: unknown }
interface Case {
  readonly name: string;
  readonly args: readonly (readonly [string, Dt, readonly number[], ('activation' | 'state' | 'weight')?])[];
  readonly eqns: readonly Eqn[];
  readonly results: readonly string[];
  readonly state?: Readonly<Record<string, string>>;
  readonly steps?: number;
  /** Inputs by arg where the default random fill would not do (indices, positive operands). */
  readonly data?: Readonly<Record<string, (i: number) => number>>;
}

const FLOATS = ['f32', 'f16', 'bf16'] as const;
const NUMERIC = ['f32', 'f16', 'bf16', 'i32'] as const;
const BINARY = ['add', 'sub', 'mul', 'div', 'max', 'min', 'ge'] as const;
const UNARY = ['neg', 'recip', 'exp', 'log', 'tanh', 'erf', 'sqrt', 'rsqrt', 'abs', 'logistic', 'sin', 'cos'] as const;
/** Unary functions whose operand is made positive first (log, sqrt, rsqrt of a value |x| + 0.5). */
const POSITIVE = new Set(['log', 'sqrt', 'rsqrt']);

function binaryCase(d: Dt): Case {
  const eqns: Eqn[] = BINARY.map((op) => ({ op, in: ['a', 'b'], out: op }));
  // Each op once more against a literal (written in the dtype, as the oracle rounds it).
  eqns.push({ op: 'mul', in: ['a', { lit: d === 'i32' ? 3 : 0.3 }], out: 'mul_lit' }, { op: 'sub', in: [{ lit: d === 'i32' ? 7 : 1.7 }, 'b'], out: 'sub_lit' });
  return {
    name: `binary ops ${d}`, args: [['a', d, [3, 5]], ['b', d, [3, 5]]], eqns, results: eqns.map((e) => e.out as string),
    // i32 division by a divisor that is never zero.
    ...(d === 'i32' ? { data: { b: (i: number) => (i % 2 === 0 ? 1 : -1) * (1 + (i % 5)) } } : {}),
  };
}

function unaryCase(d: Dt): Case {
  const ops = d === 'i32' ? (['neg', 'abs'] as const) : UNARY;
  const eqns: Eqn[] = [];
  if (d !== 'i32') eqns.push({ op: 'abs', in: ['x'], out: 'ax' }, { op: 'add', in: ['ax', { lit: 0.5 }], out: 'px' });
  for (const op of ops) eqns.push({ op, in: [POSITIVE.has(op) ? 'px' : 'x'], out: `${op}_y` });
  return { name: `unary ops ${d}`, args: [['x', d, [4, 6]]], eqns, results: ops.map((op) => `${op}_y`) };
}

/**
 * Operands of an f32 sum or dot product: its contract is relative to the terms' magnitudes, which verify
 * holds relative to the result under the premise that the terms do not cancel (src/targets/propagate.ts).
 * f16, bf16 and i32 sums are the oracle's bit for bit, so they take signed operands.
 */
const positive = (i: number): number => Math.fround(0.25 + ((i * 37) % 23) / 8);

const AXES: readonly (readonly [string, readonly number[]])[] = [['first', [0]], ['middle', [1]], ['last', [2]], ['several', [0, 2]], ['all', [0, 1, 2]]];

function reduceCase(d: Dt, op: 'reduce_sum' | 'reduce_max'): Case {
  const eqns: Eqn[] = AXES.map(([what, axes]) => ({ op, in: ['x'], out: what, axes: [...axes] }));
  return {
    name: `${op} ${d} over first, middle, last, several and all axes`, args: [['x', d, [3, 4, 5]]], eqns, results: AXES.map(([w]) => w),
    ...(d === 'f32' && op === 'reduce_sum' ? { data: { x: positive } } : {}),
  };
}

function matmulCase(d: Dt, batch: boolean): Case {
  const [a, b] = batch ? [[2, 3, 4], [2, 4, 5]] : [[3, 7], [7, 4]];
  return {
    name: `matmul ${d}${batch ? ' batched' : ''}`, args: [['a', d, a], ['b', d, b]], eqns: [{ op: 'matmul', in: ['a', 'b'], out: 'y' }], results: ['y'],
    ...(d === 'f32' ? { data: { a: positive, b: positive } } : {}),
  };
}

function gatherCase(d: Dt, axis: number): Case {
  return {
    name: `gather ${d} along axis ${axis}`, args: [['t', d, [3, 4, 5]], ['i', 'i32', [2, 2]]],
    eqns: [{ op: 'gather', in: ['t', 'i'], out: 'y', axis }], results: ['y'],
    data: { i: (k) => [2, 0, 1, 2][k]! % [3, 4, 5][axis]! },
  };
}

function movementCase(d: Dt): Case {
  return {
    name: `movement ${d}: reshape, transpose, broadcast, slice, concat, dynamic_update_slice`,
    args: [['x', d, [2, 3, 4]], ['u', d, [1, 2, 2]], ['s', 'i32', []]],
    eqns: [
      { op: 'reshape', in: ['x'], out: 'r', shape: [6, 4] },
      { op: 'transpose', in: ['x'], out: 't', perm: [2, 0, 1] },
      { op: 'broadcast', in: ['r'], out: 'b', shape: [2, 6, 4], dims: [1, 2] },
      { op: 'slice', in: ['x'], out: 'sl', start: [0, 1, 0], limit: [2, 3, 4], stride: [1, 1, 2] },
      { op: 'concat', in: ['x', 'x'], out: 'c', axis: 1 },
      { op: 'dynamic_update_slice', in: ['x', 'u', { lit: 1, dtype: 'i32' }, 's', { lit: 2, dtype: 'i32' }], out: 'du' },
    ],
    results: ['r', 't', 'b', 'sl', 'c', 'du'],
    data: { s: () => 1 },
  };
}

function iotaCase(d: Dt): Case {
  return {
    name: `iota ${d}`, args: [],
    eqns: [{ op: 'iota', in: [], out: 'y0', shape: [3, 4], dimension: 0, dtype: d }, { op: 'iota', in: [], out: 'y1', shape: [3, 4], dimension: 1, dtype: d }],
    results: ['y0', 'y1'],
  };
}

function convertCase(from: Dt): Case {
  const to = (['f32', 'f16', 'bf16', 'i32'] as const).filter((t) => t !== from);
  return {
    name: `convert from ${from} to every dtype`, args: [['x', from, [2, 5]]],
    eqns: [...to.map((t) => ({ op: 'convert', in: ['x'], out: `to_${t}`, dtype: t })), { op: 'ge', in: ['x', { lit: 0 }], out: 'g' }, { op: 'convert', in: ['g'], out: 'from_bool', dtype: from }],
    results: [...to.map((t) => `to_${t}`), 'g', 'from_bool'],
  };
}

const SOFTMAX = { params: ['x'], steps: [
  { op: 'reduce_max', in: ['x'], out: 'm' }, { op: 'sub', in: ['x', 'm'], out: 'd' }, { op: 'exp', in: ['d'], out: 'e' },
  { op: 'reduce_sum', in: ['e'], out: 's' }, { op: 'div', in: ['e', 's'], out: 'y' },
], results: ['y'] };
const RMSNORM = { params: ['x', 'w'], steps: [
  { op: 'mul', in: ['x', 'x'], out: 'sq' }, { op: 'reduce_sum', in: ['sq'], out: 'ss' }, { op: 'div', in: ['ss', { lit: 16 }], out: 'ms' },
  { op: 'add', in: ['ms', { lit: 1e-6 }], out: 'mse' }, { op: 'sqrt', in: ['mse'], out: 'rms' }, { op: 'div', in: ['x', 'rms'], out: 'xn' },
  { op: 'mul', in: ['xn', 'w'], out: 'y' },
], results: ['y'] };

/** exp of a row minus its max, scaled by its sum, and tanh of the row times a literal: two libm steps on exact operands. */
const EXP_TANH = { params: ['x'], steps: [
  { op: 'reduce_max', in: ['x'], out: 'm' }, { op: 'sub', in: ['x', 'm'], out: 'd' }, { op: 'exp', in: ['d'], out: 'e' },
  { op: 'reduce_sum', in: ['e'], out: 's' }, { op: 'mul', in: ['e', 's'], out: 'y' },
  { op: 'mul', in: ['x', { lit: 0.5 }], out: 'h' }, { op: 'tanh', in: ['h'], out: 't' },
], results: ['y', 't'] };

const I32_ROW = { params: ['x'], steps: [
  { op: 'reduce_max', in: ['x'], out: 'm' }, { op: 'sub', in: ['x', 'm'], out: 'd' }, { op: 'mul', in: ['d', { lit: 3 }], out: 't' },
  { op: 'abs', in: ['t'], out: 'a' }, { op: 'reduce_sum', in: ['a'], out: 's' },
], results: ['t', 's'] };

function stateCase(d: Dt, carried: 'intermediate' | 'result'): Case {
  return {
    name: `state ${d} carried from ${carried === 'intermediate' ? 'an intermediate' : 'a result'}`,
    args: [['x', d, [4]], ['acc', d, [4], 'state']],
    eqns: [{ op: 'add', in: ['acc', 'x'], out: 'acc2' }, { op: 'mul', in: ['acc2', { lit: 2 }], out: 'y' }],
    results: carried === 'intermediate' ? ['y'] : ['y', 'acc2'], state: { acc: 'acc2' }, steps: 3,
  };
}

export const CONFORMANCE: readonly Case[] = [
  ...NUMERIC.map(binaryCase),
  ...NUMERIC.map(unaryCase),
  ...NUMERIC.flatMap((d) => [reduceCase(d, 'reduce_sum'), reduceCase(d, 'reduce_max')]),
  {
    name: 'reduce_sum and reduce_max f16 of rank 5 over axes that merge', args: [['x', 'f16', [2, 3, 2, 2, 3]]],
    eqns: [{ op: 'reduce_sum', in: ['x'], out: 's', axes: [0, 1] }, { op: 'reduce_max', in: ['x'], out: 'm', axes: [1, 2, 4] }], results: ['s', 'm'],
  },
  ...NUMERIC.map((d) => matmulCase(d, false)), matmulCase('f32', true), matmulCase('bf16', true),
  ...[0, 1, 2].map((axis) => gatherCase('f32', axis)), gatherCase('f16', 1), gatherCase('bf16', 2), gatherCase('i32', 1),
  ...NUMERIC.map(movementCase),
  ...NUMERIC.map(iotaCase),
  ...NUMERIC.map(convertCase),
  { name: 'row_kernel softmax f32', args: [['x', 'f32', [3, 16]]], eqns: [{ op: 'row_kernel', in: ['x'], out: 'y', body: SOFTMAX }], results: ['y'] },
  { name: 'row_kernel rmsnorm f32', args: [['x', 'f32', [3, 16]], ['w', 'f32', [16], 'weight']], eqns: [{ op: 'row_kernel', in: ['x', 'w'], out: 'y', body: RMSNORM }], results: ['y'] },
  ...(['f16', 'bf16'] as const).map((d): Case => ({
    name: `row_kernel rmsnorm ${d}`, args: [['x', d, [3, 16]], ['w', d, [16], 'weight']], eqns: [{ op: 'row_kernel', in: ['x', 'w'], out: 'y', body: RMSNORM }], results: ['y'],
  })),
  { name: 'row_kernel softmax f16 (a libm step: exp within 1 f16 ulp, its bound derived through the sum and div)', args: [['x', 'f16', [3, 16]]], eqns: [{ op: 'row_kernel', in: ['x'], out: 'y', body: SOFTMAX }], results: ['y'] },
  { name: 'row_kernel bf16 with exp and tanh', args: [['x', 'bf16', [3, 16]]], eqns: [{ op: 'row_kernel', in: ['x'], out: ['y', 't'], body: EXP_TANH }], results: ['y', 't'] },
  { name: 'row_kernel i32: a row minus its max, and its sum', args: [['x', 'i32', [3, 8]]], eqns: [{ op: 'row_kernel', in: ['x'], out: ['d', 's'], body: I32_ROW }], results: ['d', 's'] },
  ...FLOATS.flatMap((d) => [stateCase(d, 'intermediate'), stateCase(d, 'result')]),
];

/**
 * What no CPU target can run, with the reason: the op table's one collective. Anything the oracle runs
 * but host refuses must be listed here, or the test above fails.
 */
export const NO_CPU_RUNS = { all_reduce: 'a collective: it reduces across devices, and a single device has no peers' } as const;

/**
 * What the host refuses though a CPU could run it, with the reason (not a capability any CPU lacks): a
 * row kernel in f16 or bf16 whose bound cannot be derived, e.g. a libm step of a value already inexact
 * (exp of an exp). An f16 or bf16 row kernel with a libm step on exact operands (a softmax) runs (above).
 */
export const HOST_REFUSES = { 'row_kernel.f16.<libm op>': 'no derived bound for a libm step of an inexact value in f16/bf16' } as const;

/** The program JSON of a case. */
function programOf(c: Case) {
  return {
    format: 'program@1', name: c.name.replace(/[^a-z0-9]+/gi, '-'),
    args: c.args.map(([name, dtype, shape, role]) => ({ name, role: role ?? 'activation', dtype, shape: [...shape] })),
    eqns: c.eqns, results: [...c.results], state: { ...(c.state ?? {}) },
  };
}

/** Seeded inputs of a case: floats in [-3, 3] rounded to their dtype, small i32s; one tensor per step for activations. */
function inputsOf(c: Case, seed: number): Record<string, unknown> {
  const r = mulberry32(seed);
  const out: Record<string, unknown> = {};
  for (const [name, dtype, shape, role] of c.args) {
    const one = () => {
      const n = numel(shape);
      const f = c.data?.[name];
      const data = Array.from({ length: n }, (_, i) => f ? f(i) : dtype === 'i32' ? Math.floor(r() * 19) - 9 : roundToDtype(dtype, r() * 6 - 3));
      return { dtype, shape: [...shape], data };
    };
    out[name] = (role ?? 'activation') === 'activation' && (c.steps ?? 1) > 1 ? Array.from({ length: c.steps! }, one) : one();
  }
  return out;
}

function hostBuilt(): boolean {
  try { loadHostKernels(); return true; } catch { return false; }
}

describe('host conformance: programs of the oracle\'s kind run on host with the oracle\'s results', function () {
  this.timeout(120_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  before(function () {
    if (!hostBuilt()) this.skip();
    tmp = tempDir();
    engine = createEngine({ cacheDir: tmp.dir });
  });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- both are unset when before() skipped
  after(async () => { await engine?.close(); tmp?.remove(); });

  it(`holds at least 40 programs covering every op of the op table but the collective`, () => {
    expect(CONFORMANCE.length).to.be.at.least(40);
    const ops = new Set(CONFORMANCE.flatMap((c) => c.eqns.map((e) => e.op)));
    const all = [...BINARY, ...UNARY, 'convert', 'reduce_sum', 'reduce_max', 'matmul', 'gather', 'reshape', 'transpose', 'broadcast', 'slice', 'concat', 'iota', 'dynamic_update_slice', 'row_kernel'];
    expect(all.filter((op) => !ops.has(op))).to.deep.equal([]);
  });

  it('host admits every equation of every program (no refusal at plan time)', () => {
    const refused: string[] = [];
    for (const c of CONFORMANCE) {
      try {
        planProgram(checkProgram(parseProgram(programOf(c))), HOST_TARGET);
      } catch (e) {
        refused.push(`${c.name}: ${String(e)}`);
      }
    }
    expect(refused).to.deep.equal([]);
  });

  for (const [k, c] of CONFORMANCE.entries()) {
    it(`${c.name}: the oracle's results on host`, async () => {
      const r = await engine.submit({ program: programOf(c), target: 'host', inputs: inputsOf(c, 1000 + k), verify: true }).result;
      expect(r.target).to.equal('host');
      const v = r.verification!;
      expect(v.pass, JSON.stringify(v.firstFailure ?? null)).to.equal(true);
    });
  }
});
