/**
 * Judging one NPU4 contract case: the device's results and the session's refusal are told apart by their
 * shape, not by a result's name (a program whose result is named `refused` is still judged on its values).
 */
import { expect } from 'chai';
import { judgeCase } from '../../src/contracts/npu4Tally.js';
import type { CaseRun } from '../../src/contracts/npu4Tally.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { tensor } from '../../src/ir/tensor.js';

const y = tensor('f32', [3], [1, 2, 3]);
// judgeCase reads the case's name, check and inputs, not its program.
const c = { name: 'refused-named', program: {} as CheckedProgram, inputs: { a: y }, check: 'normwise' } as const;

describe('npu4 contracts: judging one case', () => {
  it('judges a result named "refused" on its values, as any other result', () => {
    const run: CaseRun = { c, got: { results: { refused: y } }, want: { refused: y }, wantF16: { refused: y } };
    const r = judgeCase(run, 1e-2, 65504);
    expect(r.error).to.equal(0);
    expect(r.inDomain).to.equal(true);
    expect(r.why).to.equal(undefined);
  });

  it('negative control: a refusal is reported as one, with the session\'s reason', () => {
    const run: CaseRun = { c, got: { refused: 'NarrowingRangeResult: y leaves ±65504' }, want: { refused: y }, wantF16: { refused: y } };
    const r = judgeCase(run, 1e-2, 65504);
    expect(r.error).to.equal(Infinity);
    expect(r.why).to.equal('the session refused it: NarrowingRangeResult: y leaves ±65504');
  });

  it('negative control: a wrong result under that name is caught', () => {
    const run: CaseRun = { c, got: { results: { refused: tensor('f32', [3], [1, 2, 4]) } }, want: { refused: y }, wantF16: { refused: y } };
    expect(judgeCase(run, 1e-2, 65504).error).to.be.greaterThan(1e-2);
  });
});
