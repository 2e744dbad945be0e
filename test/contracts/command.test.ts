/**
 * The contracts command's oracle pool: its workers compute the references while the command runs, and
 * none is left once it resolves (a worker left behind would hold memory and, busy, keep the process
 * alive). Node's diagnostic report lists every live worker thread of the process, so the test sees the
 * threads themselves and not the pool's own account of them. And the CLI as a user runs it, --workers
 * included, through main(argv, io) in this process (test/cli/inProcess.ts: exit code, output, nothing left open).
 */
import { expect } from 'chai';
import { contractsCommand } from '../../src/cli/contracts.js';
import type { ContractsOptions } from '../../src/cli/contracts.js';
import { cliHere } from '../cli/inProcess.js';

const quiet = { out: () => undefined, err: () => undefined };

/** Live worker threads of this process. */
function liveWorkers(): number {
  const report = process.report.getReport() as { workers?: unknown[] };
  return report.workers?.length ?? 0;
}

/** Runs the command in this process; returns its outcome and the most worker threads seen while it ran. */
async function observed(opts: ContractsOptions): Promise<{ code: number | Error; peak: number; after: number }> {
  const before = liveWorkers();
  let peak = 0;
  const timer = setInterval(() => { peak = Math.max(peak, liveWorkers() - before); }, 5);
  const code = await contractsCommand(opts, quiet).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  clearInterval(timer);
  // A pool left behind may still be starting its threads: give them time to show.
  await new Promise((r) => setTimeout(r, 200));
  return { code, peak, after: liveWorkers() - before };
}

describe('contracts command: the oracle pool', function () {
  this.timeout(60_000);

  it('xdna2: the references run on worker threads, and none is left once the command resolves', async () => {
    const r = await observed({ target: 'xdna2', op: 'add', bulk: 20_000, workers: 2 });
    expect(r.code).to.equal(0);
    expect(r.peak).to.be.at.least(1);
    expect(r.after).to.equal(0);
  });

  it('npu4: the same', async () => {
    const r = await observed({ target: 'npu4', op: 'exp', bulk: 8192, workers: 3 });
    expect(r.code).to.equal(0);
    expect(r.peak).to.be.at.least(1);
    expect(r.after).to.equal(0);
  });

  it('a command that fails (an op the target does not verify) leaves no worker either', async () => {
    const r = await observed({ target: 'npu4', op: 'log' });
    expect(r.code).to.be.instanceOf(Error);
    expect(r.after).to.equal(0);
  });
});

describe('contracts command: the CLI, through main(argv, io) as bin.js runs it', function () {
  this.timeout(60_000);
  // In this process (test/cli/inProcess.ts): cliHere fails the call if it hung, called process.exit or left
  // anything open that would keep a process of its own from exiting (a worker, a timer); its status is the
  // exit code bin.js would set. A child process per call cost more than the calls themselves.

  it('xdna2 --workers 2: prints its report and exits 0', async () => {
    const r = await cliHere(['contracts', '--target', 'xdna2', '--op', 'add', '--bulk', '2000', '--workers', '2']);
    expect(r.status, r.err).to.equal(0);
    expect(r.out).to.match(/pass\s+add\s+2 x 2\^-23 of the larger operand/);
  });

  it('npu4 --json --workers 1: the reports as JSON, exit 0', async () => {
    const r = await cliHere(['contracts', '--target', 'npu4', '--op', 'sqrt', '--bulk', '1024', '--workers', '1', '--json']);
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as { pass: boolean; reports: { op: string }[] };
    expect(doc.pass).to.equal(true);
    expect(doc.reports.map((x) => x.op)).to.deep.equal(['sqrt']);
  });

  it('a usage error (an unknown op, zero workers) exits with the usage code', async () => {
    for (const args of [['--op', 'matmul'], ['--workers', '0']]) {
      const r = await cliHere(['contracts', '--target', 'xdna2', ...args]);
      expect(r.status, args.join(' ')).to.equal(2);
    }
  });
});
