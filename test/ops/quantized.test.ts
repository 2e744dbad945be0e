import { expect } from 'chai';
import { CapabilityMissing, IndexOutOfRange, ResourceLimit } from '../../src/errors/index.js';
import { parseProgram } from '../../src/ir/codec.js';
import { quantTensor, tensor, type Tensor } from '../../src/ir/tensor.js';
import { QUANT_DTYPES, type DType, type QuantDType } from '../../src/ir/types.js';
import { roundToDtype } from '../../src/numerics/float16.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { program } from '../../src/ops/builder.js';
import { OP_NAMES, type OpName } from '../../src/ops/rule.js';
import { checkProgram } from '../../src/ops/validate.js';
import { runStep } from '../../src/oracle/evaluate.js';
import { planProgram } from '../../src/planner/plan.js';
import { CPU_TARGET, XDNA2_TARGET } from '../../src/targets/index.js';
import { refusal } from '../ir/helpers.js';
import { randomBlocks, refDequant } from '../numerics/quantRef.js';

type Json = Record<string, unknown>;

/** A program over a q4_0 weight w [4, 32], an f32 activation x [4, 32] and i32 indices i [2]. */
function over(eqn: Json, extra: { args?: Json[]; results?: string[] } = {}): Json {
  return {
    format: 'program@1', name: 'q',
    args: [
      { name: 'w', role: 'weight', dtype: 'q4_0', shape: [4, 32] },
      { name: 'x', role: 'activation', dtype: 'f32', shape: [4, 32] },
      { name: 'i', role: 'activation', dtype: 'i32', shape: [2] },
      ...(extra.args ?? []),
    ],
    eqns: [{ out: 'y', ...eqn }],
    results: extra.results ?? ['y'],
  };
}

const check = (json: unknown) => checkProgram(parseProgram(json));

/** Every op but the three that take a quantized weight (and iota, which takes no operand), given w. */
const REFUSED = {
  add: { op: 'add', in: ['w', 'x'] }, sub: { op: 'sub', in: ['x', 'w'] }, mul: { op: 'mul', in: ['w', 'x'] },
  div: { op: 'div', in: ['w', 'x'] }, max: { op: 'max', in: ['x', 'w'] }, min: { op: 'min', in: ['w', 'x'] },
  ge: { op: 'ge', in: ['w', 'x'] },
  neg: { op: 'neg', in: ['w'] }, recip: { op: 'recip', in: ['w'] }, exp: { op: 'exp', in: ['w'] }, log: { op: 'log', in: ['w'] },
  tanh: { op: 'tanh', in: ['w'] }, erf: { op: 'erf', in: ['w'] }, sqrt: { op: 'sqrt', in: ['w'] }, rsqrt: { op: 'rsqrt', in: ['w'] },
  abs: { op: 'abs', in: ['w'] }, logistic: { op: 'logistic', in: ['w'] }, sin: { op: 'sin', in: ['w'] }, cos: { op: 'cos', in: ['w'] },
  reduce_sum: { op: 'reduce_sum', in: ['w'], axes: [1] }, reduce_max: { op: 'reduce_max', in: ['w'], axes: [0] },
  reshape: { op: 'reshape', in: ['w'], shape: [128] }, transpose: { op: 'transpose', in: ['w'], perm: [1, 0] },
  broadcast: { op: 'broadcast', in: ['w'], shape: [4, 32], dims: [0, 1] },
  slice: { op: 'slice', in: ['w'], start: [0, 0], limit: [2, 32] },
  concat: { op: 'concat', in: ['x', 'w'], axis: 0 },
  dynamic_update_slice: { op: 'dynamic_update_slice', in: ['x', 'w', { lit: 0 }, { lit: 0 }] },
  row_kernel: { op: 'row_kernel', in: ['w'], body: { params: ['a'], steps: [{ op: 'neg', in: ['a'], out: 'b' }], results: ['b'] } },
  all_reduce: { op: 'all_reduce', in: ['w'], reduce: 'sum' },
} as const satisfies Record<Exclude<OpName, 'matmul' | 'gather' | 'convert' | 'iota' | 'matmul_id'>, Json>;

const rand = mulberry32(42);
const randomF32 = (n: number) => Array.from({ length: n }, () => Math.fround((rand() * 2 - 1) * 4));

/** The dot product of every row of `a` [.., M, K] with every weight row [.., N, K], in k order, rounded once. */
function refMatmul(a: Tensor, w: Float64Array, n: number, dtype: DType): number[] {
  const r = a.shape.length;
  const m = a.shape[r - 2]!;
  const k = a.shape[r - 1]!;
  const batch = a.data.length / (m * k);
  const out: number[] = [];
  for (let p = 0; p < batch; p++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = -0;
        for (let q = 0; q < k; q++) acc += a.data[(p * m + i) * k + q]! * w[(p * n + j) * k + q]!;
        out.push(roundToDtype(dtype, acc));
      }
    }
  }
  return out;
}

/** Shapes [batch..., M, N, K] with N not a multiple of anything and K whole blocks; q4nx_q41 rows are whole tiles. */
const MATMUL_SHAPES: Readonly<Record<QuantDType, readonly (readonly number[])[]>> = {
  q4_0: [[1, 7, 32], [3, 13, 96], [2, 2, 5, 64]],
  q4_1: [[1, 7, 32], [3, 13, 96], [2, 2, 5, 64]],
  q8_0: [[1, 7, 32], [3, 13, 96], [2, 2, 5, 64]],
  q4_k: [[1, 5, 256], [3, 11, 512], [2, 1, 3, 256]],
  q6_k: [[1, 5, 256], [3, 11, 512], [2, 1, 3, 256]],
  q4nx_q41: [[1, 32, 256], [3, 64, 512], [2, 2, 32, 256]],
};

describe('ops/quantized: the three ops that take a quantized weight', () => {
  for (const dtype of QUANT_DTYPES) {
    it(`matmul by ${dtype} equals an f64 reference over the independently dequantized weight`, () => {
      MATMUL_SHAPES[dtype].forEach((dims, s) => {
        const [m, n, k] = dims.slice(-3) as [number, number, number];
        const batch = dims.slice(0, -3);
        const p = program('mm');
        const x = p.activation('x', 'f32', [...batch, m, k]);
        const w = p.weight('w', dtype, [...batch, n, k]);
        p.results(p.named('y').matmul(x, w));
        const checked = checkProgram(p.build());
        expect(checked.types.get('y')).to.deep.equal({ dtype: 'f32', shape: [...batch, m, n] });
        const bytes = randomBlocks(dtype, [...batch, n, k], 10 * s + 3);
        const xs = tensor('f32', [...batch, m, k], randomF32(batch.reduce((a, b) => a * b, 1) * m * k));
        const y = runStep(checked, { weights: { w: quantTensor(dtype, [...batch, n, k], bytes) }, state: {}, activations: { x: xs } }).results['y']!;
        const want = refMatmul(xs, refDequant(dtype, [...batch, n, k], bytes), n, 'f32');
        expect(Array.from(y.data), `${dtype} ${dims.join('x')}`).to.deep.equal(want);
      });
    });
  }

  it('matmul by a quantized weight takes the f16 or bf16 of its left operand and rounds once to it', () => {
    for (const dt of ['f16', 'bf16'] as const) {
      const p = program('mm');
      const x = p.activation('x', dt, [2, 64]);
      const w = p.weight('w', 'q8_0', [3, 64]);
      p.results(p.named('y').matmul(x, w));
      const checked = checkProgram(p.build());
      const bytes = randomBlocks('q8_0', [3, 64], 5);
      const xs = tensor(dt, [2, 64], randomF32(128).map((v) => roundToDtype(dt, v)));
      const y = runStep(checked, { weights: { w: quantTensor('q8_0', [3, 64], bytes) }, state: {}, activations: { x: xs } }).results['y']!;
      expect(y.dtype).to.equal(dt);
      expect(Array.from(y.data)).to.deep.equal(refMatmul(xs, refDequant('q8_0', [3, 64], bytes), 3, dt));
    }
  });

  it('gather takes rows along an unblocked axis as f32, and refuses an index outside the axis', () => {
    const bytes = randomBlocks('q4_k', [6, 256], 8);
    const ref = refDequant('q4_k', [6, 256], bytes);
    const p = program('embed');
    const ids = p.activation('ids', 'i32', [3]);
    const table = p.weight('table', 'q4_k', [6, 256]);
    p.results(p.named('rows').gather(table, ids, 0));
    const checked = checkProgram(p.build());
    const weights = { table: quantTensor('q4_k', [6, 256], bytes) };
    const rows = runStep(checked, { weights, state: {}, activations: { ids: tensor('i32', [3], [5, 0, 5]) } }).results['rows']!;
    expect(rows.dtype).to.equal('f32');
    expect(rows.shape).to.deep.equal([3, 256]);
    const row = (r: number) => Array.from(ref.subarray(r * 256, (r + 1) * 256), Math.fround);
    expect(Array.from(rows.data)).to.deep.equal([...row(5), ...row(0), ...row(5)]);
    expect(() => runStep(checked, { weights, state: {}, activations: { ids: tensor('i32', [3], [0, 6, 1]) } })).to.throw(IndexOutOfRange);

    // A batch of tables [2, 32, 256] gathered along axis 1: two rows of each matrix.
    const tb = randomBlocks('q4nx_q41', [2, 32, 256], 9);
    const tref = refDequant('q4nx_q41', [2, 32, 256], tb);
    const q = program('embed3');
    const i2 = q.activation('i', 'i32', [2]);
    const t3 = q.weight('t', 'q4nx_q41', [2, 32, 256]);
    q.results(q.named('r').gather(t3, i2, 1));
    const out = runStep(checkProgram(q.build()), { weights: { t: quantTensor('q4nx_q41', [2, 32, 256], tb) }, state: {}, activations: { i: tensor('i32', [2], [31, 2]) } }).results['r']!;
    expect(out.shape).to.deep.equal([2, 2, 256]);
    const at = (mtx: number, r: number) => Array.from(tref.subarray((mtx * 32 + r) * 256, (mtx * 32 + r + 1) * 256), Math.fround);
    expect(Array.from(out.data)).to.deep.equal([...at(0, 31), ...at(0, 2), ...at(1, 31), ...at(1, 2)]);
  });

  it('refuses a blocked axis that is not a multiple of the block size, at the dimension', () => {
    const arg = (dtype: string, shape: number[]) => ({ ...over({ op: 'convert', in: ['w'], dtype: 'f32' }), args: [{ name: 'w', role: 'weight', dtype, shape }] });
    expect(refusal(() => check(arg('q4_0', [4, 48])), 'InvalidProgram', '/args/0/shape/1')).to.match(/48 is not a multiple of its block size 32/);
    refusal(() => check(arg('q6_k', [2, 2, 128])), 'InvalidProgram', '/args/0/shape/2');
    refusal(() => check(arg('q4nx_q41', [40, 256])), 'InvalidProgram', '/args/0/shape/0');
    refusal(() => check(arg('q4nx_q41', [32, 300])), 'InvalidProgram', '/args/0/shape/1');
    refusal(() => check(arg('q8_0', [])), 'InvalidProgram', '/args/0/shape');
    // In the builder, at the declaration.
    expect(() => program('b').weight('w', 'q4_1', [3, 31])).to.throw(/not a multiple of its block size 32/);
  });

  it('refuses a quantized operand of every other op, at the operand', () => {
    for (const op of OP_NAMES) {
      if (op === 'matmul' || op === 'gather' || op === 'convert' || op === 'iota' || op === 'matmul_id') continue;
      const eqn: Json = REFUSED[op];
      const k = (eqn['in'] as unknown[]).indexOf('w');
      const why = refusal(() => check(over(eqn)), 'InvalidProgram', `/eqns/0/in/${k}`);
      expect(why, op).to.match(new RegExp(`^${op} does not take a quantized operand`));
    }
    // The three, where they do not take one.
    expect(refusal(() => check(over({ op: 'matmul', in: ['w', 'x'] })), 'InvalidProgram', '/eqns/0/in/0')).to.match(/only as its right operand/);
    expect(refusal(() => check(over({ op: 'matmul_id', in: ['w', 'w', 'x'] })), 'InvalidProgram', '/eqns/0/in/0')).to.match(/only as its experts/);
    refusal(() => check(over({ op: 'gather', in: ['x', 'w'], axis: 0 })), 'InvalidProgram', '/eqns/0/in/1');
    refusal(() => check(over({ op: 'convert', in: ['w'], dtype: 'i32' })), 'InvalidProgram', '/eqns/0/dtype');
    refusal(() => check(over({ op: 'convert', in: ['x'], dtype: 'q4_0' })), 'InvalidProgram', '/eqns/0/dtype');
    refusal(() => check(over({ op: 'gather', in: ['w', 'i'], axis: 1 })), 'InvalidProgram', '/eqns/0/axis');
    refusal(() => check(over({ op: 'matmul', in: ['i', 'w'] })), 'InvalidProgram', '/eqns/0/in/0');
    const wide = { args: [{ name: 'w2', role: 'weight', dtype: 'q4_0', shape: [4, 64] }] };
    expect(refusal(() => check(over({ op: 'matmul', in: ['x', 'w2'] }, wide)), 'InvalidProgram', '/eqns/0/in/1')).to.match(/its K = 64 .* differs from K = 32/);
    const builder = program('b');
    const w = builder.weight('w', 'q4_0', [4, 32]);
    expect(() => builder.add(w, w)).to.throw(/add does not take a quantized operand/);
  });

  it('refuses a quantized activation, state, result or literal', () => {
    const conv = { op: 'convert', in: ['w'], dtype: 'f32' };
    for (const role of ['activation', 'state']) {
      const json = { ...over(conv), args: [{ name: 'w', role, dtype: 'q4_0', shape: [4, 32] }], state: role === 'state' ? { w: 'w' } : {} };
      expect(refusal(() => check(json), 'InvalidProgram', '/args/0/dtype')).to.match(/only ever a weight/);
    }
    refusal(() => check(over(conv, { results: ['w'] })), 'InvalidProgram', '/results/0');
    refusal(() => check(over({ op: 'add', in: ['x', { lit: 1, dtype: 'q4_0' }] })), 'InvalidProgram', '/eqns/0/in/1/dtype');
  });

  it('counts a quantized weight by its bytes, not its elements, against the limits', () => {
    // 151936 x 4096 is 622M elements, past the 2^28 elements a tensor of floats may have: 350 MB of q4_0 blocks.
    const big = { ...over({ op: 'gather', in: ['w', 'i'], axis: 0 }), args: [
      { name: 'w', role: 'weight', dtype: 'q4_0', shape: [151936, 4096] },
      { name: 'i', role: 'activation', dtype: 'i32', shape: [2] },
    ] };
    expect(check(big).types.get('y')).to.deep.equal({ dtype: 'f32', shape: [2, 4096] });
    const small = { ...over({ op: 'convert', in: ['w'], dtype: 'f32' }), args: [{ name: 'w', role: 'weight', dtype: 'q4_0', shape: [4, 64] }] };
    let caught: unknown;
    try { checkProgram(parseProgram(small), { elementsPerTensor: 2 ** 28, programBytes: 100, equations: 10, jsonDepth: 64 }); } catch (e) { caught = e; }
    expect(caught).to.be.instanceOf(ResourceLimit);
    expect((caught as ResourceLimit).toWire()).to.include({ what: 'program-bytes', needed: 144, place: '/args/0/shape' });
  });

  it('is admitted by the CPU target and refused, typed, by a target that takes no quantized weight', () => {
    const checked = check(over({ op: 'matmul', in: ['x', 'w'] }, { args: [] }));
    expect(() => planProgram(checked, CPU_TARGET)).not.to.throw();
    expect(() => planProgram(checked, XDNA2_TARGET)).to.throw(CapabilityMissing).with.property('capability', 'dtype.q4_0');
  });
});
