/** The size limits of a program: elements per tensor, bytes per step, equations, nesting depth. */
import { expect } from 'chai';
import { EngineError, InvalidOptions, ResourceLimit } from '../../src/errors/index.js';
import { parseProgram, parseProgramText } from '../../src/ir/codec.js';
import { DEFAULT_LIMITS, NO_LIMITS, measureJson, resolveLimits } from '../../src/ir/limits.js';
import type { Limits } from '../../src/ir/limits.js';
import { checkProgram } from '../../src/ops/validate.js';
import { rmsNorm } from './examples.js';
import { refusal } from './helpers.js';

type Json = Record<string, unknown>;

function prog(args: [string, string, number[]][], eqns: Json[], results: string[]): Json {
  return {
    format: 'program@1', name: 'p',
    args: args.map(([name, dtype, shape]) => ({ name, role: 'activation', dtype, shape })),
    eqns, results, state: {},
  };
}

/** The ResourceLimit `f` throws, as its wire fields. */
function limit(f: () => unknown): Record<string, unknown> {
  let caught: unknown;
  try { f(); } catch (e) { caught = e; }
  if (!(caught instanceof ResourceLimit)) throw new Error(`expected ResourceLimit, got ${caught instanceof EngineError ? caught.message : String(caught)}`);
  const { message: _m, ...fields } = caught.toWire();
  return fields;
}

const check = (json: unknown, limits?: Limits) => checkProgram(parseProgram(json, limits), limits);
const neg = (shape: number[]) => prog([['x', 'f32', shape]], [{ op: 'neg', in: ['x'], out: 'y' }], ['y']);

describe('ir/limits', () => {
  it('refuses an arg of more elements than a tensor may hold, counted exactly', () => {
    expect(limit(() => check(neg([1e9, 1e9])))).to.deep.equal({ code: 'ResourceLimit', what: 'elements-per-tensor', needed: 1e18, max: 2 ** 28, place: '/args/0/shape' });
    expect(limit(() => check(neg(new Array<number>(64).fill(2))))).to.deep.include({ what: 'elements-per-tensor', needed: 2 ** 64, place: '/args/0/shape' });
    // One element past the limit, and the limit itself.
    expect(limit(() => check(neg([2 ** 14, 2 ** 14 + 1])))).to.deep.include({ needed: 2 ** 28 + 2 ** 14 });
    expect(check(neg([2 ** 14, 2 ** 14])).types.get('y')).to.deep.equal({ dtype: 'f32', shape: [2 ** 14, 2 ** 14] });
    // A zero extent holds nothing, however large the others.
    expect(check(neg([2 ** 53 - 1, 2 ** 53 - 1, 0])).types.get('y')!.shape).to.deep.equal([2 ** 53 - 1, 2 ** 53 - 1, 0]);
  });

  it('refuses an equation result past the limit before anything runs: iota [1e9]', () => {
    const iota = prog([], [{ op: 'iota', in: [], out: 'y', dtype: 'f32', shape: [1e9], dimension: 0 }], ['y']);
    expect(limit(() => check(iota))).to.deep.equal({ code: 'ResourceLimit', what: 'elements-per-tensor', needed: 1e9, max: 2 ** 28, place: '/eqns/0/out' });
    const two = prog([['x', 'f32', [4]]], [{ op: 'row_kernel', in: ['x'], out: ['a', 'b'], body: { params: ['v'], steps: [{ op: 'reduce_sum', in: ['v'], out: 's' }], results: ['v', 's'] } }], ['a']);
    expect(limit(() => check(two, resolveLimits({ elementsPerTensor: 3 })))).to.deep.include({ place: '/args/0/shape' });
    expect(check(two, resolveLimits({ elementsPerTensor: 4 })).types.get('b')!.shape).to.deep.equal([]);
  });

  it('compares reshape element counts exactly: [2^53-1, 3] is not [6755399441055743, 4]', () => {
    const json = prog([['x', 'f32', [2 ** 53 - 1, 3]]], [{ op: 'reshape', in: ['x'], out: 'y', shape: [6755399441055743, 4] }], ['y']);
    // As doubles both products are 27021597764222972.
    expect((2 ** 53 - 1) * 3).to.equal(6755399441055743 * 4);
    expect(limit(() => check(json))).to.deep.include({ what: 'elements-per-tensor', place: '/args/0/shape' });
    const reason = refusal(() => check(json, NO_LIMITS), 'InvalidProgram', '/eqns/0/shape');
    expect(reason).to.equal('shape [6755399441055743, 4] holds 27021597764222972 elements, the operand [9007199254740991, 3] holds 27021597764222973');
  });

  it('refuses a program whose values together pass the byte limit, at the value that crossed it', () => {
    // Nine args of 2^27 elements: 1 GiB each as the engine holds them (8 bytes an element), 8 GiB allowed.
    const args = Array.from({ length: 9 }, (_, i): [string, string, number[]] => [`a${i}`, 'f16', [2 ** 27]]);
    expect(limit(() => check(prog(args, [], ['a0'])))).to.deep.equal({ code: 'ResourceLimit', what: 'program-bytes', needed: 9 * 2 ** 30, max: 2 ** 33, place: '/args/8/shape' });
    expect(check(prog(args.slice(0, 8), [], ['a0'])).program.args).to.have.length(8);
    const eqns = [{ op: 'neg', in: ['a0'], out: 'n' }];
    expect(limit(() => check(prog(args.slice(0, 8), eqns, ['n'])))).to.deep.include({ what: 'program-bytes', place: '/eqns/0/out' });
    expect(check(prog(args.slice(0, 8), eqns, ['n']), resolveLimits({ programBytes: 9 * 2 ** 30 })).types.get('n')).to.exist;
  });

  it('counts the values a step holds at once, not the sum of all of them', () => {
    // x [100] (800 bytes held) then a chain of ten negs: 8800 bytes in all, at most x and two links live.
    const chain = (read: (i: number) => string, results: string[]) => prog([['x', 'f32', [100]]],
      Array.from({ length: 10 }, (_, i) => ({ op: i === 9 ? 'add' : 'neg', in: i === 9 ? [`n${i - 1}`, read(i)] : [i === 0 ? 'x' : `n${i - 1}`], out: `n${i}` })), results);
    const limits = resolveLimits({ programBytes: 3000 });
    // The last add reads n8 and x: at most x and two links live (2400 bytes), under 3000.
    expect(check(chain(() => 'x', ['n9']), limits).types.get('n9')!.shape).to.deep.equal([100]);
    // Negative control: the last add reads n0 too, so n0 lives through the chain: x, n0, n1 and n2 are 3200 bytes.
    expect(limit(() => check(chain(() => 'n0', ['n9']), limits))).to.deep.equal({ code: 'ResourceLimit', what: 'program-bytes', needed: 3200, max: 3000, place: '/eqns/2/out' });
    // Results are held to the end: every link a result, the third one passes.
    expect(limit(() => check(chain(() => 'x', Array.from({ length: 10 }, (_, i) => `n${i}`)), limits))).to.deep.include({ needed: 3200, place: '/eqns/2/out' });
    // A value nobody reads is held only by its own equation.
    const unread = prog([['x', 'f32', [100]]], Array.from({ length: 10 }, (_, i) => ({ op: 'neg', in: ['x'], out: `u${i}` })), ['u9']);
    expect(check(unread, resolveLimits({ programBytes: 2 * 800 })).types.get('u9')).to.exist;
  });

  it('refuses three million equations before decoding one', () => {
    const e = { op: 'neg', in: ['x'], out: 'y' };
    const json = prog([['x', 'f32', [1]]], new Array<Json>(3_000_000).fill(e), ['y']);
    expect(limit(() => parseProgram(json))).to.deep.equal({ code: 'ResourceLimit', what: 'equations', needed: 3_000_000, max: 100_000, place: '/eqns' });
    const decoded = { format: 'program@1' as const, name: 'p', args: [], eqns: Array(100_001).fill({ ...e, attrs: {} }), results: [], state: {} };
    expect(limit(() => checkProgram(decoded))).to.deep.include({ what: 'equations', needed: 100_001 });
    expect(limit(() => parseProgram(prog([['x', 'f32', [1]]], [e, e, e], ['y']), resolveLimits({ equations: 2 })))).to.deep.include({ needed: 3, max: 2 });
  });

  it('refuses an attribute nested too deep at its pointer, without overflowing the stack', () => {
    const depth = 200_000;
    const text = JSON.stringify(neg([2])).replace('"out":"y"', `"out":"y","junk":${'['.repeat(depth)}${']'.repeat(depth)}`);
    const f = limit(() => parseProgramText(text));
    expect(f).to.deep.include({ what: 'json-depth', needed: depth + 3, max: 64 });
    expect(f['place']).to.equal(`/eqns/0/junk${'/0'.repeat(64 - 3)}`);
    // The deepest document of the format's own examples is far inside the limit.
    expect(measureJson(rmsNorm(), DEFAULT_LIMITS.jsonDepth)).to.deep.equal({ depth: 8 });
    expect(check(rmsNorm(), resolveLimits({ jsonDepth: 8 })).eqns).to.have.length(1);
    expect(limit(() => check(rmsNorm(), resolveLimits({ jsonDepth: 7 })))).to.deep.include({ needed: 8, max: 7 });
  });

  it('measures a cyclic object without looping', () => {
    const a: Json = { b: [] };
    (a['b'] as unknown[]).push(a);
    expect(measureJson(a, 64).depth).to.equal(2);
  });

  it('takes limits over the defaults and refuses a limit that is not one, naming it', () => {
    expect(resolveLimits(undefined)).to.equal(DEFAULT_LIMITS);
    expect(resolveLimits({ equations: 5 })).to.deep.equal({ ...DEFAULT_LIMITS, equations: 5 });
    expect(resolveLimits({ jsonDepth: Infinity }).jsonDepth).to.equal(Infinity);
    const bad = (v: unknown, field: string) => {
      expect(() => resolveLimits(v)).to.throw(InvalidOptions).with.property('field', field);
    };
    bad({ equations: 0 }, 'limits.equations');
    bad({ elementsPerTensor: 1.5 }, 'limits.elementsPerTensor');
    bad({ programBytes: '8' }, 'limits.programBytes');
    bad({ fileBytes: 1 }, 'limits.fileBytes');
    bad([], 'limits');
  });
});
