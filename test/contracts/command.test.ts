/**
 * The contracts command's oracle pool: its workers compute the references while the command runs, and
 * none is left once it resolves (a worker left behind would hold memory and, busy, keep the process
 * alive). Node's diagnostic report lists every live worker thread of the process, so the test sees the
 * threads themselves and not the pool's own account of them. And the CLI as a user runs it, --workers
 * included, in a process of its own.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { contractsCommand } from '../../src/cli/contracts.js';
import type { ContractsOptions } from '../../src/cli/contracts.js';

const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));
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

/** Runs the CLI in a child process (killed after `timeoutMs`). */
function cli(args: readonly string[], timeoutMs = 30_000): Promise<{ code: number | null; signal: string | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout) => {
      const e = error as (Error & { code?: number | string; signal?: string | null }) | null;
      resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : null, signal: e?.signal ?? null, stdout });
    });
  });
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

describe('contracts command: in a process of its own', function () {
  this.timeout(60_000);

  it('xdna2 --workers 2: prints its report and exits 0', async () => {
    const r = await cli(['contracts', '--target', 'xdna2', '--op', 'add', '--bulk', '2000', '--workers', '2']);
    expect(r.signal).to.equal(null);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/pass\s+add\s+2 x 2\^-23 of the larger operand/);
  });

  it('npu4 --json --workers 1: the reports as JSON, exit 0', async () => {
    const r = await cli(['contracts', '--target', 'npu4', '--op', 'sqrt', '--bulk', '1024', '--workers', '1', '--json']);
    expect(r.signal).to.equal(null);
    expect(r.code).to.equal(0);
    const doc = JSON.parse(r.stdout) as { pass: boolean; reports: { op: string }[] };
    expect(doc.pass).to.equal(true);
    expect(doc.reports.map((x) => x.op)).to.deep.equal(['sqrt']);
  });

  it('a usage error (an unknown op, zero workers) exits with the usage code', async () => {
    for (const args of [['--op', 'matmul'], ['--workers', '0']]) {
      const r = await cli(['contracts', '--target', 'xdna2', ...args]);
      expect(r.signal, args.join(' ')).to.equal(null);
      expect(r.code, args.join(' ')).to.equal(2);
    }
  });
});
