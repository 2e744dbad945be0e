/**
 * The probes the feature matrix asks each admission table about: for every op, the variants where an
 * answer may differ (a literal operand or not, the last axis or another, a row kernel body), each built
 * for every dtype. A probe is a plain equation over named args; the matrix types it with the format's
 * own validation, so a combination the format refuses shows as such instead of as a target's refusal.
 */
import type { OpName, ValueType } from '../ops/rule.js';
import type { DType, Eqn, Operand, RowBody } from '../ir/types.js';

/** One variant of an op, built for a dtype: the args it reads and the equation. */
export interface Probe {
  readonly variant: string;
  build(d: DType): { readonly args: Readonly<Record<string, ValueType>>; readonly eqn: Eqn };
}

const M: number[] = [2, 8];
const t = (dtype: DType, shape: readonly number[]): ValueType => ({ dtype, shape });
const eq = (op: OpName, ins: readonly Operand[], attrs: Record<string, unknown> = {}): Eqn => ({ op, in: ins, out: 'y', attrs });

const binary: readonly Probe[] = [
  { variant: 'tensor, tensor', build: (d) => ({ args: { a: t(d, M), b: t(d, M) }, eqn: eq('add', ['a', 'b']) }) },
  { variant: 'tensor, literal', build: (d) => ({ args: { a: t(d, M) }, eqn: eq('add', ['a', { lit: 1 }]) }) },
  { variant: 'tensor, named scalar', build: (d) => ({ args: { a: t(d, M), s: t(d, []) }, eqn: eq('add', ['a', 's']) }) },
];
const unary: readonly Probe[] = [{ variant: 'tensor', build: (d) => ({ args: { a: t(d, M) }, eqn: eq('neg', ['a']) }) }];
const reduce: readonly Probe[] = [
  { variant: 'last axis', build: (d) => ({ args: { a: t(d, M) }, eqn: eq('reduce_sum', ['a'], { axes: [1] }) }) },
  { variant: 'other axis', build: (d) => ({ args: { a: t(d, M) }, eqn: eq('reduce_sum', ['a'], { axes: [0] }) }) },
];

const step = (op: string, ins: readonly Operand[], out: string) => ({ op, in: ins, out });
const RMS_STEPS = [
  step('mul', ['x', 'x'], 'sq'), step('reduce_sum', ['sq'], 'ss'), step('div', ['ss', { lit: 64 }], 'ms'),
  step('add', ['ms', { lit: 1e-6 }], 'mse'), step('sqrt', ['mse'], 'rms'), step('div', ['x', 'rms'], 'xn'),
];

/** The row kernel bodies the matrix probes, by name: the norms the targets admit and refuse. */
export const ROW_BODIES: Readonly<Record<string, { readonly params: number; readonly body: RowBody }>> = {
  'RMSNorm': { params: 1, body: { params: ['x'], steps: RMS_STEPS, results: ['xn'] } },
  'RMSNorm with weight': { params: 2, body: { params: ['x', 'w'], steps: [...RMS_STEPS, step('mul', ['xn', 'w'], 'y')], results: ['y'] } },
  'LayerNorm': {
    params: 1,
    body: { params: ['x'], steps: [
      step('reduce_sum', ['x'], 's'), step('div', ['s', { lit: 64 }], 'mean'), step('sub', ['x', 'mean'], 'xc'),
      step('mul', ['xc', 'xc'], 'sq'), step('reduce_sum', ['sq'], 'ss'), step('div', ['ss', { lit: 64 }], 'var'),
      step('add', ['var', { lit: 1e-5 }], 've'), step('sqrt', ['ve'], 'sd'), step('div', ['xc', 'sd'], 'y'),
    ], results: ['y'] },
  },
  'softmax': {
    params: 1,
    body: { params: ['x'], steps: [
      step('reduce_max', ['x'], 'm'), step('sub', ['x', 'm'], 'xs'), step('exp', ['xs'], 'e'),
      step('reduce_sum', ['e'], 's'), step('div', ['e', 's'], 'y'),
    ], results: ['y'] },
  },
  'exp then sum': { params: 1, body: { params: ['x'], steps: [step('exp', ['x'], 'e'), step('reduce_sum', ['e'], 's'), step('div', ['e', 's'], 'y')], results: ['y'] } },
  'signed row sum': { params: 1, body: { params: ['x'], steps: [step('reduce_sum', ['x'], 's')], results: ['s'] } },
};

const rowKernel: readonly Probe[] = Object.entries(ROW_BODIES).map(([name, { params, body }]) => ({
  variant: `${name} [4, 64]`,
  build: (d: DType) => ({
    args: (params === 2 ? { x: t(d, [4, 64]), w: t(d, [64]) } : { x: t(d, [4, 64]) }) as Record<string, ValueType>,
    eqn: eq('row_kernel', params === 2 ? ['x', 'w'] : ['x'], { body }),
  }),
}));

const one = (variant: string, args: (d: DType) => Record<string, ValueType>, e: (d: DType) => Eqn): readonly Probe[] =>
  [{ variant, build: (d) => ({ args: args(d), eqn: e(d) }) }];
const a = (d: DType) => ({ a: t(d, M) });

/** Every op's probes: a mapped type over OpName, so a new op refuses to compile until it has a row. */
export const PROBES: { readonly [P in OpName]: readonly Probe[] } = {
  add: binary, sub: binary, mul: binary, div: binary, max: binary, min: binary, ge: binary,
  neg: unary, recip: unary, exp: unary, log: unary, tanh: unary, erf: unary, sqrt: unary, rsqrt: unary,
  abs: unary, logistic: unary, sin: unary, cos: unary,
  convert: [
    { variant: 'to f32', build: (d) => ({ args: a(d), eqn: eq('convert', ['a'], { dtype: 'f32' }) }) },
    { variant: 'to i32', build: (d) => ({ args: a(d), eqn: eq('convert', ['a'], { dtype: 'i32' }) }) },
  ],
  reduce_sum: reduce, reduce_max: reduce,
  matmul: one('[2, 4] x [4, 3]', (d) => ({ a: t(d, [2, 4]), b: t(d, [4, 3]) }), () => eq('matmul', ['a', 'b'])),
  gather: [
    { variant: 'i32 indices, last axis', build: (d) => ({ args: { a: t(d, M), i: t('i32', [3]) }, eqn: eq('gather', ['a', 'i'], { axis: 1 }) }) },
    { variant: 'i32 indices, other axis', build: (d) => ({ args: { a: t(d, M), i: t('i32', [3]) }, eqn: eq('gather', ['a', 'i'], { axis: 0 }) }) },
    { variant: 'literal index', build: (d) => ({ args: a(d), eqn: eq('gather', ['a', { lit: 1 }], { axis: 0 }) }) },
  ],
  reshape: one('[2, 8] to [16]', a, () => eq('reshape', ['a'], { shape: [16] })),
  transpose: one('perm [1, 0]', a, () => eq('transpose', ['a'], { perm: [1, 0] })),
  broadcast: one('[8] to [2, 8]', (d) => ({ a: t(d, [8]) }), () => eq('broadcast', ['a'], { shape: M, dims: [1] })),
  slice: one('[0:1, 0:8]', a, () => eq('slice', ['a'], { start: [0, 0], limit: [1, 8] })),
  concat: one('two, axis 0', (d) => ({ a: t(d, M), b: t(d, M) }), () => eq('concat', ['a', 'b'], { axis: 0 })),
  iota: one('[8]', () => ({}), (d) => eq('iota', [], { shape: [8], dimension: 0, dtype: d })),
  dynamic_update_slice: one('literal start', (d) => ({ a: t(d, M), b: t(d, [1, 8]) }), () => eq('dynamic_update_slice', ['a', 'b', { lit: 0 }, { lit: 0 }])),
  row_kernel: rowKernel,
  all_reduce: one('sum', a, () => eq('all_reduce', ['a'], { reduce: 'sum' })),
  matmul_id: one('[2, 1, 4] x experts [3, 5, 4] by ids [2, 2]', (d) => ({ x: t(d, [2, 1, 4]), w: t(d, [3, 5, 4]), ids: t('i32', [2, 2]) }), () => eq('matmul_id', ['x', 'w', 'ids'])),
};
