import { expect } from 'chai';
import { CPU_TARGET } from '../../src/targets/cpu/index.js';
import { F32_EPS, describeContract, withinContract } from '../../src/targets/contract.js';
import { XDNA2_CONTRACTS } from '../../src/targets/xdna2/index.js';
import { planProgram, refusalsOf } from '../../src/planner/plan.js';
import { prog, rmsBody } from './helpers.js';

const c = XDNA2_CONTRACTS;

describe('op contracts', () => {
  it('add: within 2 x 2^-23 of the larger operand, measured against that operand', () => {
    const a = 3, b = -1;
    expect(withinContract(c.add, 2 + 2 * F32_EPS * 3, 2, [a, b]).ok).to.equal(true);
    const over = withinContract(c.add, 2 + 2.5 * F32_EPS * 3, 2, [a, b]);
    expect(over).to.deep.include({ inDomain: true, ok: false });
    expect(over.bound).to.be.closeTo(6 * F32_EPS, 1e-20);
  });
  it('mul is bit exact: -0 is not +0, one ulp is a failure', () => {
    expect(withinContract(c.mul, -0, 0, [-1, 0]).ok).to.equal(false);
    expect(withinContract(c.mul, 6 * (1 + F32_EPS), 6, [2, 3]).ok).to.equal(false);
    expect(withinContract(c.mul, 6, 6, [2, 3]).ok).to.equal(true);
  });
  it('outside the domain nothing is promised, and the check says so', () => {
    const far = withinContract(c.exp, 0, Math.exp(100), [100]);
    expect(far).to.deep.include({ inDomain: false, ok: true });
    expect(withinContract(c.log, NaN, Math.log(1e-40), [1e-40]).inDomain).to.equal(false);
    expect(withinContract(c.mul, 0, 1e-39, [1e-20, 1e-19]).inDomain).to.equal(false);
    expect(withinContract(c.max, 1, NaN, [NaN, 1]).inDomain).to.equal(false);
  });
  it('exp: abs 2e-6 + rel 1e-5 on [-87, 88]', () => {
    const want = Math.exp(10);
    expect(withinContract(c.exp, want * (1 + 0.9e-5), want, [10]).ok).to.equal(true);
    expect(withinContract(c.exp, want * (1 + 1.1e-5), want, [10]).ok).to.equal(false);
    expect(withinContract(c.exp, 1.9e-6, 0, [-87]).ok).to.equal(true);
  });
  it('sqrt: rel 4e-7 on positive normals; a last-axis sum against the row magnitudes', () => {
    expect(withinContract(c.sqrt, 2 * (1 + 3.9e-7), 2, [4]).ok).to.equal(true);
    expect(withinContract(c.sqrt, 2 * (1 + 4.1e-7), 2, [4]).ok).to.equal(false);
    const row = [1, -1, 1, -1];
    // 2 x 4 x 2^-23 x 4: a cancelling row still gets an absolute bound from its magnitudes.
    expect(withinContract(c.reduce_sum, 31 * F32_EPS, 0, row).ok).to.equal(true);
    expect(withinContract(c.reduce_sum, 33 * F32_EPS, 0, row).ok).to.equal(false);
  });
  it('describes a contract as error; domain', () => {
    expect(describeContract(c.exp)).to.equal('abs 2e-6 + rel 1e-5; operands in [-87, 88]');
    expect(describeContract(c.add)).to.equal('2 x 2^-23 of the larger operand; finite operands, finite normal result');
  });
});

describe('cpu target is unchanged', () => {
  it('admits every op but the collective, with no contract (the oracle itself)', () => {
    const p = prog([['x', 'f32', [4, 64]], ['w', 'f32', [64, 64]]], [
      { op: 'matmul', in: ['x', 'w'], out: 'h' },
      { op: 'row_kernel', in: ['h'], out: 'r', body: { params: ['x'], steps: [{ op: 'sub', in: ['x', { lit: 1 }], out: 'y' }], results: ['y'] } },
      { op: 'row_kernel', in: ['r'], out: 'n', body: rmsBody(false) },
    ], ['n']);
    for (const e of p.eqns) expect(CPU_TARGET.admission[e.op](e)).to.deep.equal({ admitted: true });
    expect(refusalsOf(p, CPU_TARGET)).to.deep.equal([]);
    expect(planProgram(p, CPU_TARGET).regions).to.deep.equal([{ eqns: [0, 1, 2] }]);
    const ar = prog([['x', 'f32', [4]]], [{ op: 'all_reduce', in: ['x'], out: 'y', reduce: 'sum' }], ['y']);
    expect(refusalsOf(ar, CPU_TARGET).map((e) => e.fields())).to.deep.equal([{ eqn: 0, op: 'all_reduce', capability: 'collective.all_reduce' }]);
    expect(() => planProgram(ar, CPU_TARGET)).to.throw(/collective\.all_reduce/);
  });
});
