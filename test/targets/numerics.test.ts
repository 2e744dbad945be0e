/** One place decides a program's numerics on a target: its numerics policy, read by plan and verification alike. */
import { expect } from 'chai';
import { verifySteps } from '../../src/jobs/verify.js';
import { program } from '../../src/ops/builder.js';
import { tensor } from '../../src/ir/tensor.js';
import { checkProgram } from '../../src/ops/validate.js';
import { runProgram } from '../../src/oracle/index.js';
import type { StepOutput } from '../../src/oracle/index.js';
import { planReport } from '../../src/planner/report.js';
import { resolveTarget } from '../../src/targets/index.js';
import { programNumerics } from '../../src/targets/numerics.js';
import { npu4Target } from '../../src/targets/npu4/index.js';
import { programTolerance } from '../../src/targets/propagate.js';

function sumProgram() {
  const p = program('sum');
  const x = p.activation('x', 'f32', [2, 8]);
  const i = p.activation('i', 'i32', [4]);
  p.results(p.named('y').add(x, x), p.named('j').reshape(i, [2, 2]));
  return checkProgram(p.build());
}

describe('targets/numerics', () => {
  const checked = sumProgram();
  const x = tensor('f32', [2, 8], Array.from({ length: 16 }, (_, k) => k + 1));
  const inputs = { weights: {}, state: {}, steps: [{ x, i: tensor('i32', [4], [1, 2, 3, 4]) }] };
  const [want] = runProgram(checked, inputs);
  // The device's y off by 0.4% in one element: within normwise 1e-2, far outside Exact.
  const off: StepOutput = { results: { ...want!.results, y: tensor('f32', [2, 8], want!.results['y']!.data.map((v, k) => (k === 15 ? v * 1.004 : v))) }, state: {} };

  it('npu4 holds every program to NarrowStorage: normwise 1e-2 for floats, exact for integers', () => {
    const n = programNumerics(checked, resolveTarget('npu4'));
    expect(n.numericsClass).to.equal('NarrowStorage');
    expect(n.tolerance).to.deep.equal({ y: { kind: 'normwise', rel: 0.01 }, j: { kind: 'exact' } });
    expect(n.assumptions['y']![0]).to.match(/stored in FP16: magnitudes up to 65504/);
    expect(n.assumptions['j']).to.deep.equal([]);
    expect(programNumerics(checked, npu4Target({ contract: { normwise: 0.05, maxMagnitude: 1000 } })).tolerance['y']).to.deep.equal({ kind: 'normwise', rel: 0.05 });
  });

  it('the plan report and the verification of a run read the same class and tolerances', () => {
    for (const name of ['cpu', 'xdna2', 'npu4'] as const) {
      const target = resolveTarget(name);
      const plan = planReport(checked, target).numerics;
      expect(plan, name).to.deep.equal(programNumerics(checked, target));
      const v = verifySteps(name, checked, [off], [want!]);
      expect(v.numericsClass, name).to.equal(plan.numericsClass);
      for (const r of ['y', 'j']) expect(v.steps[0]![r]!.tolerance, `${name} ${r}`).to.deep.equal(plan.tolerance[r]);
    }
    expect(verifySteps('npu4', checked, [off], [want!]).pass).to.equal(true);
    expect(verifySteps('cpu', checked, [off], [want!]).pass).to.equal(false);
  });

  it('cpu is Exact and xdna2 propagates its contracts', () => {
    expect(programNumerics(checked, resolveTarget('cpu'))).to.deep.equal({ numericsClass: 'Exact', tolerance: { y: { kind: 'exact' }, j: { kind: 'exact' } }, assumptions: { y: [], j: [] } });
    expect(programNumerics(checked, resolveTarget('xdna2'))).to.deep.equal(programTolerance(checked, resolveTarget('xdna2')));
  });
});
