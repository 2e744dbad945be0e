/** What the format refuses rather than accepting silently: overflowing numbers, literals that round to infinity, names that cannot be keys. */
import { expect } from 'chai';
import { parseProgram, parseProgramText } from '../../src/ir/codec.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { runStep } from '../../src/oracle/index.js';
import { tensor } from '../../src/ir/tensor.js';
import { rmsNorm } from './examples.js';
import { refusal } from './helpers.js';

const TEXT = '{"format":"program@1","name":"p","args":[{"name":"x","role":"activation","dtype":"DT","shape":[2]}],'
  + '"eqns":[{"op":"mul","in":["x",{"lit":LIT}],"out":"y"}],"results":["y"],"state":{}}';
const text = (dtype: string, lit: string) => TEXT.replace('DT', dtype).replace('LIT', lit);
const check = (t: string) => checkProgram(parseProgramText(t));

describe('ir: no silent acceptance', () => {
  it('refuses a number that overflows to infinity (1e999) where it stands; the string "inf" is an infinity', () => {
    expect(refusal(() => check(text('f32', '1e999')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.match(/not a finite number.*write "inf"/);
    expect(refusal(() => check(text('f32', '-1e999')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.match(/1e999/);
    const body = JSON.stringify(rmsNorm()).replace('0.000001', '-1e999');
    expect(body).to.contain('-1e999');
    expect(refusal(() => check(body), 'InvalidProgram', '/eqns/0/body/steps/3/in/1/lit')).to.match(/not a finite number/);
    expect(refusal(() => check(TEXT.replace('DT', 'f32').replace('LIT', '1').replace('[2]', '[1e999]')), 'InvalidProgram', '/args/0/shape/0')).to.match(/not a finite number/);
    const inf = check(text('f32', '"inf"'));
    expect(inf.program.eqns[0]!.in[1]).to.deep.equal({ lit: Infinity });
  });

  it('refuses a float literal that rounds to infinity in its dtype: f16 1e6, bf16 and f32 past their ranges', () => {
    expect(refusal(() => check(text('f16', '1e6')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.equal('a f16 literal: 1000000 rounds to infinity in f16 (its largest finite value is 65504); write "inf" for an infinity');
    expect(refusal(() => check(text('f16', '-65520')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.match(/-65520 rounds to -infinity in f16.*write "-inf"/);
    expect(refusal(() => check(text('bf16', '3.4e38')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.match(/rounds to infinity in bf16/);
    expect(refusal(() => check(text('f32', '3.5e38')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.match(/rounds to infinity in f32/);
    // A typed literal against another dtype's operand, and one inside a row kernel body, are judged in their own dtype.
    expect(refusal(() => check(text('f32', '1e6,"dtype":"f16"')), 'InvalidProgram', '/eqns/0/in/1/lit')).to.match(/in f16/);
    const body = program('b');
    const x = body.activation('x', 'f16', [2, 4]);
    expect(() => body.rowKernel([x], (b, v) => b.mul(v, 1e5))).to.throw(/\/eqns\/0\/body\/steps\/0\/in\/1\/lit: a f16 literal: 100000 rounds to infinity/);
    // The largest value that rounds to 65504 is still an f16 literal, and the oracle uses 65504.
    const near = check(text('f16', '65519'));
    const y = runStep(near, { weights: {}, state: {}, activations: { x: tensor('f16', [2], [1, -1]) } }).results['y']!;
    expect([...y.data]).to.deep.equal([65504, -65504]);
  });

  it('refuses value names that are not plain names, with the pointer of the definition', () => {
    const named = (n: string) => text('f32', '2').replace(/"x"/g, JSON.stringify(n));
    expect(refusal(() => check(named('__proto__')), 'InvalidProgram', '/args/0/name')).to.match(/"__proto__" starts with "__", which is reserved/);
    for (const n of ['a b', 'x-y', '1x', 'x/y', 'é', 'x\u001b[31m']) {
      expect(refusal(() => check(named(n)), 'InvalidProgram', '/args/0/name'), n).to.match(/is not a plain name/);
    }
    for (const n of ['layers.0.w', '_x', 'X1', 'a_b.c']) expect(check(named(n)).program.args[0]!.name).to.equal(n);
    const out = (o: unknown) => parseProgram({ format: 'program@1', name: 'p', args: [], eqns: [{ op: 'iota', in: [], out: o, dtype: 'i32', shape: [2], dimension: 0 }], results: [], state: {} });
    refusal(() => out('y,z'), 'InvalidProgram', '/eqns/0/out');
    refusal(() => out(['ok', 'constructor()']), 'InvalidProgram', '/eqns/0/out/1');
    // A program built in code is held to the same rule, where validation meets each name.
    expect(() => program('p').activation('a b', 'f32', [1])).to.throw(/\/args\/0\/name: an arg's name: "a b" is not a plain name/);
    const decoded = { format: 'program@1' as const, name: 'p', args: [], eqns: [{ op: 'iota', in: [], out: '__y', attrs: { dtype: 'i32', shape: [1], dimension: 0 } }], results: [], state: {} };
    refusal(() => checkProgram(decoded), 'InvalidProgram', '/eqns/0/out');
    const body = JSON.stringify(rmsNorm()).replace('"params":["x","w"]', '"params":["x","w-1"]');
    expect(body).to.contain('w-1');
    refusal(() => check(body), 'InvalidProgram', '/eqns/0/body/params/1');
    refusal(() => check(JSON.stringify(rmsNorm()).replace('"out":"ss"', '"out":"s s"')), 'InvalidProgram', '/eqns/0/body/steps/1/out');
  });
});
