import { expect } from 'chai';
import { createEngine } from '../../src/jobs/engine.js';
import { ulpDistance } from '../../src/numerics/ulp.js';
import { tempDir } from './helpers.js';

const TWICE = {
  format: 'program@1', name: 'twice',
  args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4] }],
  eqns: [{ op: 'mul', in: ['x', { lit: 2 }], out: 'y' }],
  results: ['y'], state: {},
};
const INPUTS = { x: [{ dtype: 'f32', shape: [4], data: [1, -2.5, 0.75, 3] }, { dtype: 'f32', shape: [4], data: [4, 5, 6, 7] }] };

describe('engine: verification fails when the device is wrong', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => { tmp = tempDir(); });
  afterEach(() => { tmp.remove(); });

  async function verified(ulps: number) {
    const engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { wrongKernel: { graph: 'twice', index: 2, ulps } } } });
    try {
      return await engine.submit({ program: TWICE, target: 'cpu', inputs: INPUTS, verify: true }).result;
    } finally {
      await engine.close();
    }
  }

  it('a device 1 ulp off in one element fails verification, naming the step, the result and the element', async () => {
    const r = await verified(1);
    // The device's y[2] is the oracle's 1.5 moved by exactly one f32 ulp; the rest are right.
    expect(ulpDistance('f32', r.steps[0]!['y']!.data[2]!, 1.5)).to.equal(1);
    expect(Array.from(r.steps[0]!['y']!.data).filter((_, i) => i !== 2)).to.deep.equal([2, -5, 6]);
    const v = r.verification!;
    expect(v.numericsClass).to.equal('Exact');
    expect(v.pass).to.equal(false);
    expect(v.steps.map((s) => s['y']!.pass)).to.deep.equal([false, false]);
    const worst = v.steps[0]!['y']!.worst!;
    expect([worst.index, worst.want]).to.deep.equal([2, 1.5]);
    expect(v.steps[0]!['y']!.reason).to.contain('at index 2');
    expect([v.firstFailure?.step, v.firstFailure?.result, v.firstFailure?.comparison.worst?.index]).to.deep.equal([0, 'y', 2]);
  });

  it('the same device moved by 0 ulps passes: the failure above is the wrong element, nothing else', async () => {
    const r = await verified(0);
    expect(r.verification?.pass).to.equal(true);
    expect(r.verification?.firstFailure).to.equal(undefined);
    expect(r.steps.map((s) => Array.from(s['y']!.data))).to.deep.equal([[2, -5, 1.5, 6], [8, 10, 12, 14]]);
  });
});
