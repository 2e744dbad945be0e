import { expect } from 'chai';
import { contractsCommand } from '../../../src/cli/contracts.js';
import { makeCoreMath, XDNA2_PRIMS } from '../../../src/devices/xdna2/coreMath.js';
import { CONTRACT_OPS, runContracts } from '../../../src/devices/xdna2/contracts.js';
import { awayFromZero } from '../../../src/devices/xdna2/f32.js';
import { UsageError } from '../../../src/errors.js';
import { XDNA2_CONTRACTS } from '../../../src/targets/xdna2.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

// The negative control: the same core with an adder that lands 3 units away from its true result.
const offBy3 = makeCoreMath({
  ...XDNA2_PRIMS,
  add: (a, b) => {
    const s = XDNA2_PRIMS.add(a, b);
    return Number.isFinite(s) ? awayFromZero(s, 3) : s;
  },
});

describe('xdna2 contracts: every admitted op on the simulated core', () => {
  it('covers every op the target admits, and every one passes on edge inputs and a 100k bulk', () => {
    const reports = runContracts({ target: 'xdna2' });
    expect(reports.map((r) => r.op)).to.deep.equal([...Object.keys(XDNA2_CONTRACTS), 'row_kernel']);
    for (const r of reports) {
      expect(r.pass, `${r.op}: ${JSON.stringify(r.worst)} ${r.notes.join('; ')}`).to.equal(true);
      expect(r.failures).to.equal(0);
      expect(r.inDomain, r.op).to.be.greaterThan(30);
      if (r.op !== 'reduce_sum' && r.op !== 'reduce_max') expect(r.elements, r.op).to.be.at.least(100000);
      if (r.worst) expect(r.worst.ratio, r.op).to.be.at.most(1);
    }
    // The bounds are not vacuous: the adder and sqrt use a real share of theirs.
    const by = new Map(reports.map((r) => [r.op, r]));
    expect(by.get('add')!.worst!.ratio).to.be.greaterThan(0.3);
    expect(by.get('sqrt')!.worst!.ratio).to.be.greaterThan(0.05);
  });

  it('NEGATIVE CONTROL: an adder off by 3 ulps breaks add, sub, the row sum and the norm', () => {
    const reports = runContracts({ target: 'xdna2', math: offBy3, bulk: 20000 });
    const failed = reports.filter((r) => !r.pass).map((r) => r.op);
    expect(failed).to.include.members(['add', 'sub', 'reduce_sum', 'row_kernel']);
    const add = reports.find((r) => r.op === 'add')!;
    expect(add.failures).to.be.greaterThan(1000);
    // What does not add is untouched.
    for (const op of ['mul', 'div', 'neg', 'ge', 'max', 'gather']) expect(reports.find((r) => r.op === op)!.pass, op).to.equal(true);
  });

  it('runs one op alone, replays a seed, and refuses an op or target it does not verify', () => {
    const a = runContracts({ target: 'xdna2', op: 'exp', seed: 4, bulk: 5000 });
    const b = runContracts({ target: 'xdna2', op: 'exp', seed: 4, bulk: 5000 });
    expect(a).to.have.length(1);
    expect(a).to.deep.equal(b);
    expect(() => runContracts({ target: 'xdna2', op: 'matmul' })).to.throw(UsageError);
    expect(CONTRACT_OPS).to.not.include('min');
  });
});

describe('xdna2 contracts: the contracts command', () => {
  it('prints one line per op and exits 0 when all pass', () => {
    const t = io();
    expect(contractsCommand({ target: 'xdna2', op: 'sqrt', bulk: 2000 }, t.io)).to.equal(0);
    expect(t.out.join('\n')).to.match(/pass\s+sqrt\s+rel 4e-7/);
  });

  it('--json gives the reports', () => {
    const t = io();
    expect(contractsCommand({ target: 'xdna2', op: 'gather', json: true, bulk: 2000 }, t.io)).to.equal(0);
    const doc = JSON.parse(t.out[0]!) as { pass: boolean; reports: { op: string; pass: boolean }[] };
    expect(doc.pass).to.equal(true);
    expect(doc.reports.map((r) => r.op)).to.deep.equal(['gather']);
  });

  it('refuses another target as a usage error', () => {
    expect(() => contractsCommand({ target: 'cpu' }, io().io)).to.throw(UsageError);
  });
});
