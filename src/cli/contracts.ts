/**
 * `npu-offload contracts --target xdna2|npu4|host [--op OP] [--workers N] [--json]`: runs every op the
 * target admits, compiled by its backend, on its simulated device over edge inputs and a random bulk,
 * and reports per op the worst error against its contract and whether it passes. The XDNA2 has a
 * contract per op (src/devices/xdna2/contracts.ts says what is compared with what); the NPU4 has one
 * narrowing contract, a normwise bound on each narrowed graph (src/contracts/npu4.ts); the host target has
 * a contract per op (src/targets/host/contracts.ts), checked on the real native kernels (src/contracts/host.ts).
 *
 * The device replays on this thread while the oracle's references are computed in parallel by a pool
 * of oracle workers (src/workers/oracle.worker.ts), which is destroyed before the command returns, so
 * the process can exit. `--exhaustive` sweeps one op over every input instead (contractsExhaustive.ts).
 */
import type { OracleTask } from '../actors/oracleTask.js';
import { createPool } from '../actors/pool.js';
import { runNpu4Contracts } from '../contracts/npu4.js';
import type { Npu4ContractReport } from '../contracts/npu4.js';
import type { ReferenceOracle, SweepOptions } from '../contracts/reference.js';
import { runXdna2Contracts } from '../contracts/xdna2.js';
import { runHostContracts } from '../contracts/host.js';
import type { HostContractReport } from '../contracts/host.js';
import { TARGET_NAMES, isTargetName, type TargetName } from '../targets/target.js';
import type { ContractReport } from '../contracts/xdna2.js';
import { UsageError } from '../errors/index.js';
import type { StepOutput } from '../oracle/types.js';
import { checkBulk } from '../contracts/bulk.js';
import type { CliCommand } from './command.js';
import { checkWorkers } from './limits.js';
import { intOption, jsonOption, targetOption } from './options.js';
import { contractsExhaustiveCommand } from './contractsExhaustive.js';
import type { Io } from './output.js';
import { EXIT } from './output.js';
import { reportSaid, saveReport, sweepProgress } from './contractsReport.js';
import { checkReportPath } from '../contracts/report.js';
import { NPU4_CONTRACT } from '../targets/npu4/index.js';

export interface ContractsOptions {
  readonly target: string;
  readonly op?: string;
  readonly json?: boolean;
  /** The random bulk's seed (default 1), so a failure can be replayed. */
  readonly seed?: number;
  /** Random elements per op (default 100000 on xdna2, 65536 on npu4). */
  readonly bulk?: number;
  /** Oracle workers computing the references (default 2); with --exhaustive, chunks swept at once. */
  readonly workers?: number;
  /** Sweep every input of --op instead (contractsExhaustive.ts). */
  readonly exhaustive?: boolean;
  /** --exhaustive, binary ops: fixed values of the other operand, and the swept operand. */
  readonly fixed?: number;
  readonly operand?: string;
  /** Write the HTML report here (contractsReport.ts). */
  readonly report?: string;
}

/** Default oracle workers: the device keeps the main thread, two workers keep up with it. */
const CONTRACT_WORKERS = 2;
// A reference task takes milliseconds; a deadline only guards against a hung worker.
const REFERENCE_DEADLINE_MS = 300_000;

function num(v: number): string {
  if (Object.is(v, -0)) return '-0';
  return !Number.isFinite(v) || (Number.isInteger(v) && Math.abs(v) < 1e6) ? String(v) : v.toPrecision(4);
}

function line(r: ContractReport): string {
  const w = r.worst;
  const worst = w === null ? 'nothing in the domain' : `worst error ${num(w.error)} = ${num(w.ratio)} of its bound ${num(w.bound)}`;
  return `${r.pass ? 'pass' : 'FAIL'}  ${r.op.padEnd(10)} ${r.contract}; ${worst}; ${r.inDomain}/${r.elements} in domain, ${r.failures} failures (vs ${r.reference})`;
}

function npu4Line(r: Npu4ContractReport): string {
  const w = r.worst === null ? '' : `; worst normwise ${num(r.worst.error)} = ${num(r.worst.ratio)} of the bound (${r.worst.case})`;
  const exact = r.group === 'exact' ? `; ${r.mismatches} bit mismatches` : '';
  return `${r.pass ? 'pass' : 'FAIL'}  ${r.op.padEnd(20)} ${r.contract}${w}${exact}; ${r.inDomain}/${r.cases} cases in domain, ${r.elements} result elements, ${r.failures} failures`;
}

/** The npu4 report. */
function npu4Report(reports: readonly Npu4ContractReport[], opts: ContractsOptions, io: Io): boolean {
  const pass = reports.every((r) => r.pass);
  // Written before anything is printed: a report that cannot be written leaves --json one document, the error.
  saveReport(opts, reports, pass, NPU4_CONTRACT.normwise);
  if (opts.json) io.out(JSON.stringify({ target: opts.target, simulated: true, pass, reports }));
  else {
    io.out(`contracts of npu4 on the simulated device, each op compiled by the NPU4 backend (${reports.length} op${reports.length === 1 ? '' : 's'}):`);
    for (const r of reports) {
      io.out(`  ${npu4Line(r)}`);
      if (r.outside) io.out(`        outside the domain, worst: ${r.outside.case} normwise ${num(r.outside.error)} (${r.outside.why})`);
      for (const n of r.notes) io.out(`        ${n}`);
    }
    io.out(pass ? 'every op is within the narrowing contract' : `${reports.filter((r) => !r.pass).length} op(s) break the narrowing contract`);
  }
  reportSaid(opts, io);
  return pass;
}

/** The xdna2 report. */
function xdna2Report(reports: readonly ContractReport[], opts: ContractsOptions, io: Io): boolean {
  const pass = reports.every((r) => r.pass);
  // Written before anything is printed: a report that cannot be written leaves --json one document, the error.
  saveReport(opts, reports, pass);
  if (opts.json) io.out(JSON.stringify({ target: opts.target, simulated: true, pass, reports }));
  else {
    io.out(`contracts of ${opts.target} on the simulated device, each op compiled by the XDNA2 backend (${reports.length} op${reports.length === 1 ? '' : 's'}):`);
    for (const r of reports) {
      io.out(`  ${line(r)}`);
      for (const n of r.notes) io.out(`        ${n}`);
    }
    io.out(pass ? 'every op is within its contract' : `${reports.filter((r) => !r.pass).length} op(s) break their contract`);
  }
  reportSaid(opts, io);
  return pass;
}

function hostLine(r: HostContractReport): string {
  const w = r.worst === null ? 'every element bit for bit the oracle\'s' : `worst error ${num(r.worst.error)} = ${num(r.worst.ratio)} of its bound ${num(r.worst.bound)} (${r.worst.program})`;
  return `${r.pass ? 'pass' : 'FAIL'}  ${r.op.padEnd(20)} ${r.contract}; ${w}; ${r.inDomain}/${r.elements} in domain, ${r.failures} failures`;
}

/** The host report. */
function hostReport(reports: readonly HostContractReport[], opts: ContractsOptions, io: Io): boolean {
  const pass = reports.every((r) => r.pass);
  // Written before anything is printed: a report that cannot be written leaves --json one document, the error.
  saveReport(opts, reports, pass);
  if (opts.json) io.out(JSON.stringify({ target: opts.target, simulated: false, pass, reports }));
  else {
    io.out(`contracts of host on this machine's CPU, each op compiled by the host backend and run by the native kernels (${reports.length} op${reports.length === 1 ? '' : 's'}):`);
    for (const r of reports) {
      io.out(`  ${hostLine(r)}`);
      const f = r.firstFailure;
      if (f !== null) io.out(`        first failure in ${f.program}: got ${num(f.got)}, the oracle ${num(f.want)}, error ${num(f.error)} > ${num(f.bound)}`);
    }
    io.out(pass ? 'every op is within its contract' : `${reports.filter((r) => !r.pass).length} op(s) break their contract`);
  }
  reportSaid(opts, io);
  return pass;
}

type Common = SweepOptions;

/**
 * Each target's contract sweep and its report, or null where there is none: the cpu target is the
 * oracle itself.
 */
const SWEEPS = {
  cpu: null,
  xdna2: async (c: Common, opts: ContractsOptions, io: Io) => xdna2Report(await runXdna2Contracts({ target: 'xdna2', ...c }), opts, io),
  npu4: async (c: Common, opts: ContractsOptions, io: Io) => npu4Report(await runNpu4Contracts({ target: 'npu4', ...c }), opts, io),
  host: async (c: Common, opts: ContractsOptions, io: Io) => hostReport(await runHostContracts({ target: 'host', ...c }), opts, io),
} as const satisfies Record<TargetName, ((c: Common, opts: ContractsOptions, io: Io) => Promise<boolean>) | null>;

/** The targets whose contracts this command verifies. */
export const CONTRACT_TARGETS = TARGET_NAMES.filter((t) => SWEEPS[t] !== null);

/** Verifies a target's contracts, the references on an oracle pool; resolves 0 when every op passes, 1 when one fails. */
export async function contractsCommand(opts: ContractsOptions, io: Io): Promise<number> {
  if (opts.exhaustive === true && opts.report !== undefined) throw new UsageError('--report is written from the edge and bulk sweep; an --exhaustive sweep has none yet (drop --report or --exhaustive)');
  if (opts.exhaustive === true) return contractsExhaustiveCommand(opts, io);
  if (opts.report !== undefined) checkReportPath(opts.report);
  if (opts.fixed !== undefined || opts.operand !== undefined) throw new UsageError('--fixed and --operand belong to --exhaustive');
  const sweep = isTargetName(opts.target) ? SWEEPS[opts.target] : null;
  if (sweep === null) throw new UsageError(`contracts are verified for --target ${CONTRACT_TARGETS.join(' or ')} only, got ${JSON.stringify(opts.target)}`);
  const workers = checkWorkers(opts.workers, CONTRACT_WORKERS);
  checkBulk(opts.bulk);
  const pool = createPool<OracleTask, StepOutput[]>({
    name: 'oracle', entry: new URL('../workers/oracle.worker.js', import.meta.url), workers, restart: { max: 2, windowMs: 60_000 },
  });
  const oracle: ReferenceOracle = (task) => pool.run(task, { deadlineMs: REFERENCE_DEADLINE_MS });
  const progress = sweepProgress(opts);
  const common = {
    oracle, onProgress: progress.onProgress,
    ...(opts.op !== undefined ? { op: opts.op } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.bulk !== undefined ? { bulk: opts.bulk } : {}),
  };
  try {
    const pass = await sweep(common, opts, io);
    return pass ? EXIT.ok : EXIT.refused;
  } finally {
    progress.bar.stop();
    // No worker may outlive the command: a live thread would keep the process from exiting.
    await pool.destroy();
  }
}

/** `contracts --target xdna2|npu4|host`. */
export const contracts: CliCommand = {
  register(cli, { io, action }) {
    cli.command('contracts')
      .description('run every admitted op on the target\'s device over the edges of its domain and report the worst error against its contract')
      .addOption(targetOption(CONTRACT_TARGETS))
      .option('--op <op>', 'one op only')
      .addOption(intOption('--seed <n>', 'seed of the random bulk'))
      .addOption(intOption('--bulk <n>', 'random elements per op'))
      .addOption(intOption('--workers <n>', 'oracle workers computing the references in parallel (default 2); with --exhaustive, chunks swept at once (default: the cores)'))
      .option('--exhaustive', 'sweep every input of --op (every f32, every FP16 on npu4); binary ops: one operand against fixed values of the other')
      .addOption(intOption('--fixed <n>', 'with --exhaustive, binary ops: fixed values of the other operand (default 256: the edges, then random)'))
      .option('--operand <a|b>', 'with --exhaustive, binary ops: the swept operand (default a)')
      .option('--report <file.html>', 'also write a self-contained HTML page: per op, error against its bound per binade of the input, the worst input and the verdict')
      .addOption(jsonOption())
      .action(action((o: ContractsOptions) => contractsCommand(o, io)));
  },
};
