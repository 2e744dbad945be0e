import { expect } from 'chai';
import { parseProgram, parseProgramText } from '../../src/ir/codec.js';
import type { Program } from '../../src/ir/types.js';
import { checkProgram } from '../../src/ops/validate.js';
import { everyAttr, rmsNorm, rmsStep } from '../ir/examples.js';
import { refusal } from '../ir/helpers.js';

type Json = Record<string, unknown>;
type Edit = (j: Json, eqns: Json[]) => void;

function check(json: unknown): ReturnType<typeof checkProgram> {
  return checkProgram(parseProgram(json));
}

/** The rms-step example with one edit, refused at `path`; returns the reason. */
function refused(edit: Edit, path: string, base: () => Json = rmsStep): string {
  const json = base();
  edit(json, json['eqns'] as Json[]);
  return refusal(() => check(json), 'InvalidProgram', path);
}

function body(eqns: Json[]): Json {
  return eqns[0]!['body'] as Json;
}

describe('ir/validate', () => {
  it('types every value of the spec examples', () => {
    const c = check(rmsStep());
    expect(c.types.get('y')).to.deep.equal({ dtype: 'f32', shape: [4, 64] });
    expect(c.eqns[2]!.ins[1]).to.deep.equal({ dtype: 'f32', shape: [] });
    expect(c.eqns.map((e) => e.op)).to.deep.equal(['add', 'exp', 'mul']);
    const n = check(rmsNorm());
    expect(n.types.get('y')).to.deep.equal({ dtype: 'f32', shape: [4, 64] });
    const all = check(everyAttr());
    expect(all.types.get('mx')).to.deep.equal({ dtype: 'f32', shape: [2] });
    expect(all.types.get('kv2')).to.deep.equal({ dtype: 'f32', shape: [8, 4] });
    expect(all.eqns[13]!.ins[3]).to.deep.equal({ dtype: 'i32', shape: [] });
  });

  it('refuses an unknown op at its op', () => {
    expect(refused((_, e) => { e[1]!['op'] = 'expm1'; }, '/eqns/1/op')).to.contain('expm1');
  });

  it('refuses a wrong operand count', () => {
    expect(refused((_, e) => { e[1]!['in'] = ['acc2', 'x']; }, '/eqns/1/in')).to.contain('exp takes 1 operand, got 2');
  });

  it('refuses a name used before it is defined, and one never defined', () => {
    expect(refused((j, e) => { j['eqns'] = [e[1], e[0], e[2]]; }, '/eqns/0/in/0')).to.contain('equation 1 defines it');
    expect(refused((_, e) => { e[2]!['in'] = ['f', { lit: 0.5 }]; }, '/eqns/2/in/0')).to.contain('not defined');
  });

  it('refuses a name defined twice: by two equations, by an equation and an arg, by two args', () => {
    expect(refused((_, e) => { e[1]!['out'] = 'acc2'; }, '/eqns/1/out')).to.contain('first by equation 0');
    expect(refused((_, e) => { e[1]!['out'] = 'w'; }, '/eqns/1/out')).to.contain('first by arg 1');
    refused((j) => { (j['args'] as Json[])[1]!['name'] = 'x'; }, '/args/1/name');
  });

  it('refuses unknown, missing and ill-typed attributes', () => {
    expect(refused((_, e) => { e[0]!['axes'] = [0]; }, '/eqns/0/axes')).to.contain('add has no attribute axes');
    expect(refused((_, e) => { e[1]!['op'] = 'convert'; }, '/eqns/1/dtype')).to.contain('needs attribute dtype');
    refused((_, e) => { Object.assign(e[1]!, { op: 'convert', dtype: 'f64' }); }, '/eqns/1/dtype');
    refused((_, e) => { Object.assign(e[1]!, { op: 'reduce_sum', axes: [0, 1.5] }); }, '/eqns/1/axes/1');
    refused((_, e) => { Object.assign(e[1]!, { op: 'reduce_sum', axes: 1 }); }, '/eqns/1/axes');
  });

  it('refuses axes the reduce rule rejects, pointing at the axis', () => {
    refused((_, e) => { Object.assign(e[1]!, { op: 'reduce_sum', axes: [2] }); }, '/eqns/1/axes/0');
    refused((_, e) => { Object.assign(e[1]!, { op: 'reduce_max', axes: [1, 0] }); }, '/eqns/1/axes/1');
  });

  it('refuses a shape mismatch and a dtype mismatch in add', () => {
    refused((j) => { (j['args'] as Json[])[0]!['shape'] = [4, 32]; }, '/eqns/0/in/1');
    expect(refused((j) => { (j['args'] as Json[])[0]!['dtype'] = 'f16'; }, '/eqns/0/in/1')).to.contain('f16');
  });

  it('refuses a matmul whose contracting dims differ', () => {
    expect(refused((_, e) => { e[1] = { op: 'matmul', in: ['acc2', 'x'], out: 'e' }; }, '/eqns/1/in/1')).to.contain('K = 64');
  });

  it('refuses literals an integer dtype cannot hold, and literals of no known dtype', () => {
    const ints = (): Json => ({
      format: 'program@1', name: 'ints',
      args: [{ name: 'i', role: 'activation', dtype: 'i32', shape: [3] }],
      eqns: [{ op: 'add', in: ['i', { lit: 1.5 }], out: 'j' }], results: ['j'], state: {},
    });
    expect(refused(() => undefined, '/eqns/0/in/1/lit', ints)).to.contain('not an integer');
    refused((_, e) => { e[0]!['in'] = ['i', { lit: 2 ** 31 }]; }, '/eqns/0/in/1/lit', ints);
    refused((_, e) => { e[0]!['in'] = ['i', { lit: 'inf' }]; }, '/eqns/0/in/1/lit', ints);
    refused((_, e) => { e[2]!['in'] = [{ lit: 1 }, { lit: 2 }]; }, '/eqns/2/in/0');
    expect(refused((_, e) => { e[1]!['in'] = [{ lit: 1 }]; }, '/eqns/1/in/0')).to.contain('dtype');
    refused((_, e) => { e[2]!['in'] = ['e', { lit: 1, dtype: 'i32' }]; }, '/eqns/2/in/1');
  });

  it('refuses bad state mappings', () => {
    refused((j) => { j['state'] = { acc: 'acc2', nope: 'y' }; }, '/state/nope');
    expect(refused((j) => { j['state'] = { acc: 'acc2', w: 'y' }; }, '/state/w')).to.contain('weight');
    refused((j) => { j['state'] = { acc: 'acc3' }; }, '/state/acc');
    expect(refused((j) => { (j['eqns'] as Json[]).push({ op: 'convert', in: ['y'], out: 'h', dtype: 'f16' }); j['state'] = { acc: 'h' }; }, '/state/acc'))
      .to.contain('f16');
    expect(refused((j) => { j['state'] = {}; }, '/state')).to.contain('acc');
    check({ ...rmsStep(), state: { acc: 'acc' } });
  });

  it('escapes "/" and "~" of names in pointers', () => {
    refused((j) => { j['state'] = { acc: 'acc2', 'a/b~c': 'y' }; }, '/state/a~1b~0c');
  });

  it('refuses a result naming an unknown value', () => {
    refused((j) => { j['results'] = ['y', 'z']; }, '/results/1');
  });

  it('refuses bad row_kernel body steps with a pointer inside the body', () => {
    expect(refused((_, e) => { (body(e)['steps'] as Json[])[1]!['op'] = 'matmul'; }, '/eqns/0/body/steps/1/op', rmsNorm))
      .to.contain('cannot be a row_kernel step');
    refused((_, e) => { (body(e)['steps'] as Json[])[2]!['in'] = ['zz', { lit: 64 }]; }, '/eqns/0/body/steps/2/in/0', rmsNorm);
    refused((_, e) => { (body(e)['steps'] as Json[])[4]!['in'] = ['mse', 'x']; }, '/eqns/0/body/steps/4/in', rmsNorm);
    refused((_, e) => { (body(e)['steps'] as Json[])[1]!['axes'] = [0]; }, '/eqns/0/body/steps/1/axes', rmsNorm);
    refused((_, e) => { (body(e)['steps'] as Json[])[2]!['in'] = ['ss', { lit: 0.5, dtype: 'i32' }]; }, '/eqns/0/body/steps/2/in/1/lit', rmsNorm);
    refused((_, e) => { body(e)['results'] = ['y', 'q']; }, '/eqns/0/body/results/1', rmsNorm);
    refused((_, e) => { body(e)['params'] = ['x']; }, '/eqns/0/body/params', rmsNorm);
    refused((_, e) => { body(e)['steps'] = 'none'; }, '/eqns/0/body/steps', rmsNorm);
  });

  it('refuses a row_kernel whose out does not name every result', () => {
    expect(refused((_, e) => { body(e)['results'] = ['y', 'rms']; }, '/eqns/0/out', rmsNorm)).to.contain('2 results');
  });

  it('refuses a program built in code with a bad arg shape or dtype', () => {
    const p: Program = { format: 'program@1', name: 'p', args: [{ name: 'x', role: 'weight', dtype: 'f32', shape: [2, -1] }], eqns: [], results: ['x'], state: {} };
    refusal(() => checkProgram(p), 'InvalidProgram', '/args/0/shape/1');
  });

  it('refuses bad JSON text at the root', () => {
    refusal(() => parseProgramText('{"format": program@1}'), 'InvalidProgram', '');
  });

  it('returns the program with attributes decoded, accepted again unchanged', () => {
    const c = check(everyAttr());
    expect(checkProgram(c.program).program).to.deep.equal(c.program);
  });
});
