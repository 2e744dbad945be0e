/**
 * The NPU4 contracts command: every op the target admits, compiled by the NPU4 backend and replayed on
 * the simulated device, is within the narrowing contract (normwise 1e-2 within ±65504, data movement
 * bit exact in FP16); and the check can fail: a device with one wrong kernel breaks exactly that op.
 */
import { expect } from 'chai';
import { contractsCommand } from '../../src/cli/contracts.js';
import { NPU4_CONTRACT_OPS, runNpu4Contracts } from '../../src/contracts/npu4.js';
import type { Npu4ContractReport } from '../../src/contracts/npu4.js';
import { withKernelFault } from '../../src/contracts/faultyDevice.js';
import type { KernelFault } from '../../src/contracts/faultyDevice.js';
import { Npu4SimDevice } from '../../src/devices/npu4/simDevice.js';
import { UsageError } from '../../src/errors/index.js';
import type { CheckedEqn } from '../../src/ir/checked.js';
import { roundF16 } from '../../src/numerics/float16.js';
import { OP_NAMES } from '../../src/ops/rule.js';
import { NPU4_CONTRACT, NPU4_TARGET } from '../../src/targets/npu4/index.js';

const PROGRAMS = ['chain', 'rms', 'linear'];

function io() {
  const out: string[] = [];
  return { out, io: { out: (l: string) => out.push(l), err: (l: string) => out.push(l) } };
}

const byOp = (reports: readonly Npu4ContractReport[]) => new Map(reports.map((r) => [r.op, r]));

/** A fresh simulated NPU4 whose kernel in `graph` is wrong. */
const faulty = (f: KernelFault) => () => withKernelFault(new Npu4SimDevice(), f);

describe('npu4 contracts: every admitted op through the NPU4 backend on the simulated device', function () {
  this.timeout(60_000);
  let reports: Npu4ContractReport[] = [];
  before(async () => { reports = await runNpu4Contracts({ target: 'npu4', bulk: 16_384 }); });

  it('covers exactly the ops the target admits in F32, plus three multi-op programs', () => {
    // An F32 equation of each op, as the admission rules see it (they read only dtypes and literals).
    const f32 = { dtype: 'f32', shape: [2] } as const;
    const admitted = OP_NAMES.filter((op) => {
      const e: CheckedEqn = { index: 0, op, eqn: { op, in: ['a', 'b'], out: 'y', attrs: {} }, ins: [f32, f32], outs: [f32] };
      return NPU4_TARGET.admission[op](e).admitted;
    });
    expect([...NPU4_CONTRACT_OPS].sort()).to.deep.equal([...admitted, ...PROGRAMS].sort());
    expect(reports.map((r) => r.op)).to.deep.equal([...NPU4_CONTRACT_OPS]);
  });

  it('every op passes, each with in-domain cases and the worst error within the bound', () => {
    for (const r of reports) {
      expect(r.pass, `${r.op}: ${r.notes.join('; ')}`).to.equal(true);
      expect(r.failures, r.op).to.equal(0);
      expect(r.inDomain, r.op).to.be.at.least(3);
      if (r.worst) expect(r.worst.error, r.op).to.be.at.most(NPU4_CONTRACT.normwise);
      if (r.group !== 'exact') expect(r.worst, r.op).to.not.equal(null);
    }
  });

  it('the errors are real: FP16 storage shows in every arithmetic op, and exact ops are bit for bit', () => {
    const m = byOp(reports);
    // Each stored value is up to 2^-11 off, so an honest FP16 result is visibly off the F32 oracle.
    for (const op of ['add', 'mul', 'div', 'exp', 'sqrt', 'matmul', 'chain']) expect(m.get(op)!.worst!.error, op).to.be.greaterThan(1e-4);
    for (const op of ['gather', 'transpose', 'convert', 'iota', 'dynamic_update_slice']) expect(m.get(op)!.mismatches, op).to.equal(0);
    // ge compares the FP16 values it holds: near ties flip against the F32 oracle, and only there.
    expect(m.get('ge')!.notes.join(' ')).to.match(/^[1-9]\d* element\(s\) differ from the F32 oracle/);
  });

  it('cases FP16 storage alone ruins are outside the domain, reported, and really over the bound', () => {
    const m = byOp(reports);
    for (const op of ['add', 'sub', 'reduce_sum']) {
      const o = m.get(op)!.outside!;
      expect(o.case, op).to.equal('cancel');
      expect(o.error, op).to.be.greaterThan(NPU4_CONTRACT.normwise);
    }
    const deep = m.get('neg')!.caseReports.find((c) => c.name === 'fp16-deep-subnormal')!;
    expect(deep.inDomain).to.equal(false);
    expect(deep.error).to.be.greaterThan(NPU4_CONTRACT.normwise);
    // The near-max cases stay in the domain: the contract's top end is exercised, not excluded.
    for (const op of ['add', 'mul', 'exp', 'reduce_sum', 'chain']) {
      expect(m.get(op)!.caseReports.find((c) => c.name === 'near-max')!.inDomain, op).to.equal(true);
    }
  });
});

describe('npu4 contracts: negative controls', function () {
  this.timeout(60_000);

  it('an exp kernel 2% off breaks exp and nothing else', async () => {
    const device = faulty({ graph: 'npu4-contract-exp', fault: (x) => x * 1.02 });
    const m = byOp(await Promise.all(['exp', 'add', 'chain'].map((op) => runNpu4Contracts({ target: 'npu4', op, bulk: 4096, device }))).then((r) => r.flat()));
    expect(m.get('exp')!.pass).to.equal(false);
    expect(m.get('exp')!.failures).to.be.greaterThan(5);
    // The bulk is 2% off; near the top the wrong results leave ±65504 and the session refuses them.
    expect(m.get('exp')!.caseReports.find((c) => c.name === 'bulk')!.error).to.be.closeTo(0.02, 0.002);
    expect(m.get('exp')!.caseReports.find((c) => c.name === 'near-max')!.why).to.match(/NarrowingRangeResult/);
    expect(m.get('add')!.pass).to.equal(true);
    expect(m.get('chain')!.pass).to.equal(true);
  });

  it('a transpose that moves one element by one FP16 step breaks the exact check', async () => {
    // One element one FP16 step up: far inside the normwise bound, still a broken data movement.
    const fault = (x: number, i: number) => (i === 77 && Number.isFinite(x) ? roundF16(x + Math.max(Math.abs(x) * 2 ** -10, 2 ** -24)) : x);
    const [r] = await runNpu4Contracts({ target: 'npu4', op: 'transpose', device: faulty({ graph: 'npu4-contract-transpose-f16', fault }) });
    expect(r!.pass).to.equal(false);
    expect(r!.mismatches).to.equal(1);
    expect(r!.notes.join(' ')).to.match(/f16 every bit pattern: 1 element/);
  });

  it('a kernel that drops the bias of a matmul layer breaks it', async () => {
    const [r] = await runNpu4Contracts({ target: 'npu4', op: 'linear', bulk: 4096, device: faulty({ graph: 'npu4-contract-linear', fault: (x) => Math.max(0, x - 0.5) }) });
    expect(r!.pass).to.equal(false);
  });
});

describe('npu4 contracts: the command', function () {
  this.timeout(60_000);

  it('replays a seed, runs one op alone, and refuses an op it does not verify', async () => {
    const a = await runNpu4Contracts({ target: 'npu4', op: 'div', seed: 4, bulk: 4096 });
    const b = await runNpu4Contracts({ target: 'npu4', op: 'div', seed: 4, bulk: 4096 });
    expect(a).to.have.length(1);
    expect(a).to.deep.equal(b);
    let err: unknown;
    await runNpu4Contracts({ target: 'npu4', op: 'log' }).catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(UsageError);
  });

  it('prints one line per op and exits 0; --json gives the reports', async () => {
    const t = io();
    expect(await contractsCommand({ target: 'npu4', op: 'sqrt', bulk: 4096 }, t.io)).to.equal(0);
    expect(t.out.join('\n')).to.match(/pass\s+sqrt\s+normwise 0.01 within ±65504; worst normwise/);
    const j = io();
    expect(await contractsCommand({ target: 'npu4', op: 'gather', json: true }, j.io)).to.equal(0);
    const doc = JSON.parse(j.out[0]!) as { pass: boolean; reports: { op: string; mismatches: number }[] };
    expect(doc.pass).to.equal(true);
    expect(doc.reports.map((r) => [r.op, r.mismatches])).to.deep.equal([['gather', 0]]);
  });

  it('still refuses a target it does not verify as a usage error', async () => {
    let err: unknown;
    await contractsCommand({ target: 'cpu' }, io().io).catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(UsageError);
  });
});
