/**
 * The XDNA2 contracts: every admitted op, compiled by the XDNA2 backend and replayed through a Session
 * on the simulated device, is within its published contract, the references computed on an oracle pool;
 * and the check can fail: a device whose core has an adder 3 units off breaks exactly what adds.
 */
import { expect } from 'chai';
import type { OracleTask } from '../../src/actors/oracleTask.js';
import type { ActorPool } from '../../src/actors/pool.js';
import { createPool } from '../../src/actors/pool.js';
import { contractsCommand } from '../../src/cli/contracts.js';
import { makeCoreMath, XDNA2_PRIMS } from '../../src/devices/xdna2/coreMath.js';
import { awayFromZero } from '../../src/devices/xdna2/f32.js';
import type { ContractReport } from '../../src/contracts/xdna2.js';
import { CONTRACT_OPS, runXdna2Contracts } from '../../src/contracts/xdna2.js';
import type { ReferenceOracle } from '../../src/contracts/reference.js';
import { UsageError } from '../../src/errors/index.js';
import type { StepOutput } from '../../src/oracle/types.js';
import { XDNA2_CONTRACTS } from '../../src/targets/xdna2/index.js';

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

const BULK = 20_000;

describe('xdna2 contracts: every admitted op through the XDNA2 backend on the simulated device', function () {
  this.timeout(60_000);
  let pool: ActorPool<OracleTask, StepOutput[]>;
  let tasks = 0;
  let oracle: ReferenceOracle;
  let reports: ContractReport[] = [];
  let threadsSeen = 0;

  before(async () => {
    pool = createPool<OracleTask, StepOutput[]>({
      name: 'oracle', entry: new URL('../../src/workers/oracle.worker.js', import.meta.url), workers: 2, restart: { max: 1, windowMs: 60_000 },
    });
    oracle = (task) => { tasks++; threadsSeen = Math.max(threadsSeen, pool.threadIds.length); return pool.run(task); };
    reports = await runXdna2Contracts({ target: 'xdna2', bulk: BULK, oracle });
  });

  after(async () => {
    await pool.destroy();
    expect(pool.threadIds).to.deep.equal([]);
  });

  it('covers every op the target admits, and every one passes on edge inputs and the bulk', () => {
    expect(reports.map((r) => r.op)).to.deep.equal([...Object.keys(XDNA2_CONTRACTS), 'row_kernel']);
    for (const r of reports) {
      expect(r.pass, `${r.op}: ${JSON.stringify(r.worst)} ${r.notes.join('; ')}`).to.equal(true);
      expect(r.failures).to.equal(0);
      // A reduction judges one element per row: a few long rows and the edge rows.
      const rowsOnly = r.op === 'reduce_sum' || r.op === 'reduce_max';
      expect(r.inDomain, r.op).to.be.greaterThan(rowsOnly ? 10 : 30);
      if (!rowsOnly) expect(r.elements, r.op).to.be.at.least(BULK);
      if (r.worst) expect(r.worst.ratio, r.op).to.be.at.most(1);
    }
    // The bounds are not vacuous: the adder and sqrt use a real share of theirs.
    const by = new Map(reports.map((r) => [r.op, r]));
    expect(by.get('add')!.worst!.ratio).to.be.greaterThan(0.3);
    expect(by.get('sqrt')!.worst!.ratio).to.be.greaterThan(0.05);
    // gather passes only if every pattern survived, signalling NaNs (which no f64 tensor can carry) too.
    expect(by.get('gather')!.notes).to.include('bit patterns (NaN payloads, -0) checked against the source');
  });

  it('computed the references on the pool: many tasks over both workers', () => {
    expect(tasks).to.be.greaterThan(CONTRACT_OPS.length);
    expect(threadsSeen).to.equal(2);
  });

  it('the pool and the calling thread give the same references, so the same reports', async () => {
    const inThread = await runXdna2Contracts({ target: 'xdna2', op: 'exp', bulk: 3000, seed: 7 });
    const pooled = await runXdna2Contracts({ target: 'xdna2', op: 'exp', bulk: 3000, seed: 7, oracle });
    expect(pooled).to.deep.equal(inThread);
  });

  it('NEGATIVE CONTROL: a device whose adder is off by 3 ulps breaks add, sub, the row sum and the norm', async () => {
    const broken = await runXdna2Contracts({ target: 'xdna2', math: offBy3, bulk: 5000, oracle });
    const failed = broken.filter((r) => !r.pass).map((r) => r.op);
    expect(failed).to.include.members(['add', 'sub', 'reduce_sum', 'row_kernel']);
    const add = broken.find((r) => r.op === 'add')!;
    expect(add.failures).to.be.greaterThan(1000);
    // The cancellations are exact on the real core and not on this one.
    expect(add.notes.some((n) => n.startsWith('a cancellation is not exact'))).to.equal(true);
    expect(reports.find((r) => r.op === 'add')!.notes.some((n) => n.startsWith('a cancellation is not exact'))).to.equal(false);
    // What does not add is untouched.
    for (const op of ['mul', 'div', 'neg', 'ge', 'max', 'gather']) expect(broken.find((r) => r.op === op)!.pass, op).to.equal(true);
  });

  it('runs one op alone with the cases of a full run, replays a seed, and refuses an op or target it does not verify', async () => {
    const a = await runXdna2Contracts({ target: 'xdna2', op: 'sqrt', bulk: BULK, oracle });
    expect(a).to.have.length(1);
    expect(a[0]).to.deep.equal(reports.find((r) => r.op === 'sqrt'));
    let err: unknown;
    await runXdna2Contracts({ target: 'xdna2', op: 'matmul' }).catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(UsageError);
    expect(CONTRACT_OPS).to.not.include('min');
  });
});

describe('xdna2 contracts: the contracts command', function () {
  this.timeout(60_000);

  it('prints one line per op and exits 0 when all pass', async () => {
    const t = io();
    expect(await contractsCommand({ target: 'xdna2', op: 'sqrt', bulk: 2000 }, t.io)).to.equal(0);
    expect(t.out.join('\n')).to.match(/pass\s+sqrt\s+rel 4e-7/);
  });

  it('--json gives the reports', async () => {
    const t = io();
    expect(await contractsCommand({ target: 'xdna2', op: 'gather', json: true, bulk: 2000, workers: 1 }, t.io)).to.equal(0);
    const doc = JSON.parse(t.out[0]!) as { pass: boolean; reports: { op: string; pass: boolean }[] };
    expect(doc.pass).to.equal(true);
    expect(doc.reports.map((r) => r.op)).to.deep.equal(['gather']);
  });

  it('refuses another target, an unknown op and zero workers as usage errors', async () => {
    for (const o of [{ target: 'cpu' }, { target: 'xdna2', op: 'matmul' }, { target: 'xdna2', workers: 0 }]) {
      let err: unknown;
      await contractsCommand(o, io().io).catch((e: unknown) => { err = e; });
      expect(err, JSON.stringify(o)).to.be.instanceOf(UsageError);
    }
  });
});
