import { expect } from 'chai';
import { lit, program } from '../../../src/ops/builder.js';
import { checkProgram } from '../../../src/ops/validate.js';
import type { Literal } from '../../../src/ir/types.js';
import { narrowLiteral, narrowToDevicePrecision } from '../../../src/compiler/openvino/narrow.js';
import { runProgram } from '../../../src/oracle/evaluate.js';
import { representative } from './programs.js';

describe('compiler/openvino/narrow', () => {
  it('converts each F32 arg once on entry and each F32 result and state value once on exit', () => {
    const n = narrowToDevicePrecision(representative());
    const eqns = n.program.eqns;
    const converts = eqns.filter((e) => e.op === 'convert');
    // Entry: x and w (idx and pos are i32, acc is read only by the scatter, so it is converted too).
    expect(eqns.slice(0, 3).map((e) => [e.in[0], e.out, e.attrs['dtype']])).to.deep.equal([
      ['x', 'x.f16', 'f16'], ['w', 'w.f16', 'f16'], ['acc', 'acc.f16', 'f16'],
    ]);
    // Exit: results t and g, then state acc's next value acc2, each under its own name.
    expect(eqns.slice(-3).map((e) => [e.in[0], e.out, e.attrs['dtype']])).to.deep.equal([
      ['t.f16', 't', 'f32'], ['g.f16', 'g', 'f32'], ['acc2.f16', 'acc2', 'f32'],
    ]);
    expect(converts).to.have.length(6);
    // Nothing in between is converted, and every value inside computes in FP16.
    for (const e of n.eqns.slice(3, -3)) {
      expect(e.op, `equation ${e.index}`).to.not.equal('convert');
      expect(e.outs[0]!.dtype, `equation ${e.index}`).to.be.oneOf(['f16', 'i32', 'bool']);
    }
    expect(n.program.results).to.deep.equal(['t', 'g']);
    expect(n.program.state).to.deep.equal({ acc: 'acc2' });
    expect(n.types.get('t')).to.deep.equal({ dtype: 'f32', shape: [2] });
  });

  it('narrows F32 literals to FP16, saturating an additive one beyond range to the sentinel', () => {
    const n = narrowToDevicePrecision(representative());
    const lits = n.program.eqns.flatMap((e) => e.in.filter((o): o is Literal => typeof o === 'object'));
    expect(lits).to.deep.include({ lit: 0.5, dtype: 'f16' });
    expect(lits).to.deep.include({ lit: -65504, dtype: 'f16' });
    expect(lits).to.deep.include({ lit: 0, dtype: 'i32' });
    expect(narrowLiteral(1e9)).to.equal(65504);
    expect(narrowLiteral(-Infinity)).to.equal(-Infinity);
    expect(narrowLiteral(0.1)).to.equal(0.0999755859375);
    expect(Object.is(narrowLiteral(-0), -0)).to.equal(true);
  });

  it('hands an F32 arg returned or carried unchanged through, without a convert', () => {
    const p = program('pass');
    const x = p.activation('x', 'f32', [3]);
    const s = p.state('s', 'f32', [3]);
    p.results(x, p.named('y').exp(x));
    p.carry(s, s);
    const n = narrowToDevicePrecision(checkProgram(p.build()));
    expect(n.program.eqns.map((e) => [e.op, e.in[0], e.out])).to.deep.equal([
      ['convert', 'x', 'x.f16'], ['exp', 'x.f16', 'y.f16'], ['convert', 'y.f16', 'y'],
    ]);
  });

  it('renames around names already taken and narrows F32 converts and iotas inside the graph', () => {
    const p = program('names');
    const x = p.activation('x', 'f32', [3]);
    const taken = p.named('x.f16').neg(x);
    const io = p.named('io').iota([3], 0, 'f32');
    const h = p.named('h').convert(p.named('sum').add(taken, io), 'f16');
    p.results(p.named('back').convert(h, 'f32'));
    const n = narrowToDevicePrecision(checkProgram(p.build()));
    expect(n.program.eqns[0]).to.deep.include({ op: 'convert', out: 'x.f16.1' });
    expect(n.program.eqns.find((e) => e.out === 'io')!.attrs['dtype']).to.equal('f16');
    expect(n.program.eqns.find((e) => e.out === 'back.f16')!.attrs['dtype']).to.equal('f16');
    expect(n.program.eqns.at(-1)).to.deep.include({ op: 'convert', out: 'back' });
  });

  it('keeps the program\'s meaning: the narrowed oracle is the F32 one within FP16 storage', () => {
    const p = program('close');
    const x = p.activation('x', 'f32', [4]);
    p.results(p.named('y').add(p.mul(x, lit(3)), 1));
    const checked = checkProgram(p.build());
    const inputs = { x: { dtype: 'f32' as const, shape: [4], data: new Float64Array([1, 2.5, -3, 100.125]) } };
    const want = runProgram(checked, { weights: {}, state: {}, steps: [inputs] });
    const got = runProgram(narrowToDevicePrecision(checked), { weights: {}, state: {}, steps: [inputs] });
    expect(Array.from(got[0]!.results['y']!.data)).to.deep.equal([4, 8.5, -8, 301.5]);
    expect(Array.from(want[0]!.results['y']!.data)).to.deep.equal([4, 8.5, -8, 301.375]);
  });
});
