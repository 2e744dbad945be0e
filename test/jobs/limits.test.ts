/** The engine's size limits: an option of createEngine, checked before anything is allocated or walked. */
import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { InvalidOptions, ResourceLimit } from '../../src/errors/index.js';
import { STEP_PROGRAM, rejectsWith, stepInputs, tempDir } from './helpers.js';

describe('engine: limits', function () {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  // One engine for the tests (each submits its own jobs): an engine's start, its actors' threads loading
  // their modules, is ~0.7 s of CPU, more than these tests.
  before(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir, limits: { elementsPerTensor: 8 } }); });
  after(async () => { await engine.close(); tmp.remove(); });

  it('refuses a program past the engine\'s limits as ResourceLimit, and runs one within them', async () => {
    const e = await rejectsWith(engine.submit({ program: { ...STEP_PROGRAM, args: STEP_PROGRAM.args.map((a) => ({ ...a, shape: [3, 3] })) }, target: 'cpu' }).result, 'ResourceLimit');
    expect(e.toWire()).to.deep.include({ what: 'elements-per-tensor', needed: 9, max: 8, place: '/args/0/shape' });
    const r = await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), verify: true }).result;
    expect(Array.from(r.state['acc']!.data)).to.deep.equal([0, -1, 1.5, 2, -0.5, 0.125]);
  });

  it('refuses an attribute nested a hundred thousand deep as ResourceLimit, not a crash', async () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const eqns = [{ ...STEP_PROGRAM.eqns[0]!, junk: deep }, ...STEP_PROGRAM.eqns.slice(1)];
    const e = await rejectsWith(engine.submit({ program: { ...STEP_PROGRAM, eqns }, target: 'cpu' }).result, 'ResourceLimit');
    expect(e.toWire()).to.deep.include({ what: 'json-depth', max: 64 });
    expect(String(e.toWire()['place'])).to.match(/^\/eqns\/0\/junk(\/0)+$/);
  });

  it('refuses an inputs key __proto__ by name instead of dropping it', async () => {
    const inputs = JSON.parse(`{"__proto__":{"dtype":"f32","shape":[2,3],"data":[0,0,0,0,0,0]},${JSON.stringify(stepInputs(1)).slice(1)}`) as object;
    expect(Object.keys(inputs)).to.include('__proto__');
    const e = await rejectsWith(engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs }).result, 'InvalidInput');
    expect(e.toWire()).to.deep.include({ path: '/__proto__' });
  });

  it('refuses limits that are not limits at createEngine, naming the field', () => {
    expect(() => createEngine({ limits: { equations: 0 } })).to.throw(InvalidOptions).with.property('field', 'limits.equations');
    expect(() => createEngine({ limits: { bogus: 1 } as never })).to.throw(InvalidOptions).with.property('field', 'limits.bogus');
    expect(new ResourceLimit('equations', 2, 1, '/eqns').toWire()).to.deep.equal({ code: 'ResourceLimit', message: '/eqns: equations 2 is past the limit 1', what: 'equations', needed: 2, max: 1, place: '/eqns' });
  });
});
