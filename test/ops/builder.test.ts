import { expect } from 'chai';
import { InvalidProgram } from '../../src/errors/index.js';
import { lit, program } from '../../src/ops/builder.js';
import { programToJson } from '../../src/ir/codec.js';
import type { RowBody } from '../../src/ir/types.js';
import { everyAttr, rmsNorm, rmsStep } from '../ir/examples.js';
import { refusal } from '../ir/helpers.js';

describe('ir/builder', () => {
  it('builds the spec\'s rms-step example exactly as the hand-written JSON', () => {
    const p = program('rms-step');
    const x = p.activation('x', 'f32', [4, 64]);
    p.weight('w', 'f32', [64]);
    const acc = p.state('acc', 'f32', [4, 64]);
    const acc2 = p.named('acc2').add(acc, x);
    const e = p.named('e').exp(acc2);
    const y = p.named('y').mul(e, 0.5);
    p.results(y);
    p.carry(acc, acc2);
    expect(programToJson(p.build())).to.deep.equal(rmsStep());
  });

  it('builds the spec\'s row_kernel example from a body callback', () => {
    const p = program('rms-norm');
    const x = p.activation('x', 'f32', [4, 64]);
    const w = p.weight('w', 'f32', [64]);
    const [y] = p.named('y').rowKernel([x, w], (b, xr, wr) => {
      const ss = b.named('ss').reduceSum(b.named('sq').mul(xr, xr));
      const mse = b.named('mse').add(b.named('ms').div(ss, 64), 1e-6);
      const xn = b.named('xn').div(xr, b.named('rms').sqrt(mse));
      return b.named('y').mul(xn, wr);
    });
    expect(y).to.deep.equal({ name: 'y', dtype: 'f32', shape: [4, 64] });
    p.results(y!);
    expect(programToJson(p.build())).to.deep.equal(rmsNorm());
  });

  it('builds the every-attr program exactly as the hand-written JSON', () => {
    const json = everyAttr();
    const p = program('every-attr');
    const a = p.activation('a', 'f32', [2, 3]);
    const b = p.weight('b', 'f32', [3, 4]);
    const i = p.activation('i', 'i32', [2]);
    const kv = p.state('kv', 'f32', [8, 4]);
    const m = p.named('m').matmul(a, b);
    const m3 = p.named('m3').add(p.named('m2').min(p.named('m1').max(m, -Infinity), lit(Infinity, 'f32')), -0);
    const h = p.named('h').convert(m3, 'f16');
    const r = p.named('r').reduceSum(m3, [1]);
    const rs = p.named('rs').reshape(p.named('tr').transpose(m3, [1, 0]), [8]);
    const br = p.named('br').broadcast(r, [2, 4], [0]);
    const sl = p.named('sl').slice(m3, [0, 0], [2, 4], [1, 2]);
    const cc = p.named('cc').concat([m3, br], 0);
    const io = p.named('io').iota([2, 4], 1, 'i32');
    const g = p.named('g').gather(b, i, 0);
    const kv2 = p.named('kv2').dynamicUpdateSlice(kv, cc, [lit(4, 'i32'), lit(0)]);
    const body: RowBody = {
      params: ['v'],
      steps: [
        { op: 'reduce_max', in: ['v'], out: 'mx' },
        { op: 'sub', in: ['v', 'mx'], out: 'd' },
        { op: 'exp', in: ['d'], out: 'sm' },
        { op: 'mul', in: ['sm', { lit: NaN }], out: 'unused' },
      ],
      results: ['mx', 'sm'],
    };
    const [mx, sm] = p.named('mx', 'sm').rowKernel([m3], body);
    const ar = p.named('ar').allReduce(sm!);
    p.results(h, rs, sl, io, g, mx!, ar);
    p.carry(kv, kv2);
    expect(mx).to.deep.equal({ name: 'mx', dtype: 'f32', shape: [2] });
    expect(programToJson(p.build())).to.deep.equal(json);
  });

  it('generates t0, t1, ... skipping names already taken', () => {
    const p = program('names');
    const t0 = p.activation('t0', 'f32', [3]);
    p.weight('t2', 'f32', [3]);
    const a = p.exp(t0);
    const b = p.neg(a);
    const c = p.abs(b);
    expect([a.name, b.name, c.name]).to.deep.equal(['t1', 't3', 't4']);
    p.results(c);
    expect(p.build().eqns.map((e) => e.out)).to.deep.equal(['t1', 't3', 't4']);
  });

  it('infers types as it goes and takes numbers as literals of the other operand\'s dtype', () => {
    const p = program('types');
    const x = p.activation('x', 'bf16', [2, 5]);
    expect(p.reduceMax(x, [1])).to.deep.include({ dtype: 'bf16', shape: [2] });
    expect(p.ge(x, 0)).to.deep.include({ dtype: 'bool', shape: [2, 5] });
    expect(p.convert(x, 'f32')).to.deep.include({ dtype: 'f32', shape: [2, 5] });
    const k = p.iota([4], 0, 'i32');
    expect(p.mul(k, 3)).to.deep.include({ dtype: 'i32', shape: [4] });
  });

  it('refuses a mistake at the call, with the pointer the equation would have', () => {
    const p = program('bad');
    const x = p.activation('x', 'f32', [4, 64]);
    const w = p.weight('w', 'f32', [64]);
    p.exp(x);
    expect(refusal(() => p.add(x, w), 'InvalidProgram', '/eqns/1/in/1')).to.contain('[64]');
    refusal(() => p.matmul(x, x), 'InvalidProgram', '/eqns/1/in/1');
    refusal(() => p.reduceSum(x, [0, 0]), 'InvalidProgram', '/eqns/1/axes/1');
    refusal(() => p.add(p.iota([2], 0, 'i32'), 0.5), 'InvalidProgram', '/eqns/2/in/1/lit');
    refusal(() => p.rowKernel([x], (b, r) => b.step('matmul', r, r)), 'InvalidProgram', '/eqns/2/body/steps/0/op');
    refusal(() => p.named('x').exp(x), 'InvalidProgram', '/eqns/2/out');
    expect(p.build().eqns).to.have.length(2);
  });

  it('refuses values of another program, an arg named after a generated value, and a missing carry', () => {
    const p = program('a');
    const x = p.activation('x', 'f32', [2]);
    const y = program('b').activation('x', 'f32', [3]);
    expect(() => p.exp(y)).to.throw(InvalidProgram, /not a value of program a/);
    p.exp(x);
    refusal(() => p.weight('t0', 'f32', [2]), 'InvalidProgram', '/args/1/name');
    refusal(() => p.weight('w', 'f64' as 'f32', [2]), 'InvalidProgram', '/args/1/dtype');
    p.state('s', 'f32', [2]);
    expect(refusal(() => p.build(), 'InvalidProgram', '/state')).to.contain('state arg s has no entry');
  });
});
