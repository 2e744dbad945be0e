import { expect } from 'chai';
import { parseProgram, parseProgramText } from '../../src/ir/codec.js';
import { decodeInputs } from '../../src/ir/inputsCodec.js';
import { checkProgram } from '../../src/ops/validate.js';
import { rmsStep } from './examples.js';
import { refusal } from './helpers.js';

const checked = checkProgram(parseProgram(rmsStep()));

function t(dtype: string, shape: number[], fill = 0): Record<string, unknown> {
  return { dtype, shape, data: new Array<number>(shape.reduce((a, b) => a * b, 1)).fill(fill) };
}

function inputs(x: unknown): Record<string, unknown> {
  return { x, w: t('f32', [64], 2), acc: t('f32', [4, 64], 3) };
}

describe('ir/inputsCodec', () => {
  it('splits weights, initial state and one activation map per step', () => {
    const got = decodeInputs(inputs([t('f32', [4, 64], 1), t('f32', [4, 64], 2), t('f32', [4, 64], 3)]), checked);
    expect(Object.keys(got.weights)).to.deep.equal(['w']);
    expect(Object.keys(got.state)).to.deep.equal(['acc']);
    expect(got.state['acc']!.data[0]).to.equal(3);
    expect(got.steps.map((s) => s['x']!.data[0])).to.deep.equal([1, 2, 3]);
  });

  it('reuses a single activation tensor for every step', () => {
    expect(decodeInputs(inputs(t('f32', [4, 64], 5)), checked).steps).to.have.length(1);
    const got = decodeInputs(inputs(t('f32', [4, 64], 5)), checked, 4);
    expect(got.steps.map((s) => s['x']!.data[0])).to.deep.equal([5, 5, 5, 5]);
  });

  it('refuses unknown and missing names', () => {
    expect(refusal(() => decodeInputs({ ...inputs(t('f32', [4, 64])), 'y/z': t('f32', [1]) }, checked), 'InvalidInput', '/y~1z'))
      .to.contain('no arg named');
    const missing = inputs(t('f32', [4, 64]));
    delete missing['acc'];
    expect(refusal(() => decodeInputs(missing, checked), 'InvalidInput', '/acc')).to.contain('state acc is not supplied');
    refusal(() => decodeInputs([], checked), 'InvalidInput', '');
  });

  it('refuses a wrong dtype or shape at the tensor of that step', () => {
    const x = [t('f32', [4, 64]), t('f32', [4, 64]), t('f16', [4, 64])];
    expect(refusal(() => decodeInputs(inputs(x), checked), 'InvalidInput', '/x/2/dtype')).to.contain('activation x is f32');
    refusal(() => decodeInputs(inputs([t('f32', [4, 64]), t('f32', [64, 4])]), checked), 'InvalidInput', '/x/1/shape');
    refusal(() => decodeInputs({ ...inputs(t('f32', [4, 64])), w: t('f32', [63]) }, checked), 'InvalidInput', '/w/shape');
    refusal(() => decodeInputs(inputs([t('f32', [4, 64]), { dtype: 'f32', shape: [1, 2], data: [0, 'x'] }]), checked), 'InvalidInput', '/x/1/data/1');
  });

  it('refuses step counts that disagree, empty arrays and per-step weights', () => {
    expect(refusal(() => decodeInputs(inputs([t('f32', [4, 64]), t('f32', [4, 64])]), checked, 3), 'InvalidInput', '/x'))
      .to.contain('3 steps were asked for');
    refusal(() => decodeInputs(inputs([]), checked), 'InvalidInput', '/x');
    refusal(() => decodeInputs({ ...inputs(t('f32', [4, 64])), w: [t('f32', [64])] }, checked), 'InvalidInput', '/w');
    refusal(() => decodeInputs(inputs(t('f32', [4, 64])), checked, 0), 'InvalidInput', '');
  });

  it('requires every activation array to agree on the step count', () => {
    const two = checkProgram(parseProgram({
      format: 'program@1', name: 'two',
      args: [{ name: 'a', role: 'activation', dtype: 'i32', shape: [] }, { name: 'b', role: 'activation', dtype: 'i32', shape: [] }],
      eqns: [{ op: 'add', in: ['a', 'b'], out: 'c' }], results: ['c'], state: {},
    }));
    const s = (v: number): unknown => ({ dtype: 'i32', shape: [], data: [v] });
    expect(refusal(() => decodeInputs({ a: [s(1), s(2)], b: [s(1)] }, two), 'InvalidInput', '/b')).to.contain('a has 2');
    const ok = decodeInputs({ a: [s(1), s(2)], b: s(7) }, two);
    expect(ok.steps.map((m) => [m['a']!.data[0], m['b']!.data[0]])).to.deep.equal([[1, 7], [2, 7]]);
  });

  it('refuses a name __proto__: as an arg (a reserved name) and as an inputs key (no arg has it)', () => {
    const text = '{"format":"program@1","name":"p","args":[{"name":"__proto__","role":"state","dtype":"f32","shape":[1]}],'
      + '"eqns":[{"op":"neg","in":["__proto__"],"out":"n"}],"results":["n"],"state":{"__proto__":"n"}}';
    expect(refusal(() => parseProgramText(text), 'InvalidProgram', '/args/0/name')).to.match(/"__proto__" starts with "__", which is reserved/);
    const prog = checkProgram(parseProgramText(text.replace(/__proto__/g, 'p')));
    const r = refusal(() => decodeInputs(JSON.parse('{"p":{"dtype":"f32","shape":[1],"data":[2]},"__proto__":{"dtype":"f32","shape":[1],"data":[2]}}'), prog), 'InvalidInput', '/__proto__');
    expect(r).to.contain('no arg named "__proto__"');
  });
});
