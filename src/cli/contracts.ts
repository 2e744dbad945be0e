/**
 * `npu-offload contracts --target xdna2|npu4 [--op OP] [--json]`: runs every op the target admits on
 * its simulated device over edge inputs and a random bulk, and reports per op the worst error against
 * its contract and whether it passes. The XDNA2 has a contract per op (src/devices/xdna2/contracts.ts
 * says what is compared with what); the NPU4 has one narrowing contract, a normwise bound on each
 * narrowed graph, verified per op through the whole compile pipeline (src/devices/npu4/contracts.ts).
 */
import { runContracts } from '../devices/xdna2/contracts.js';
import type { ContractReport } from '../devices/xdna2/contracts.js';
import { runNpu4Contracts } from '../engine/contracts/npu4.js';
import type { Npu4ContractReport } from '../engine/contracts/npu4.js';
import { UsageError } from '../errors.js';
import type { Io } from './output.js';
import { EXIT } from './output.js';

export interface ContractsOptions {
  readonly target: string;
  readonly op?: string;
  readonly json?: boolean;
  /** The random bulk's seed (default 1), so a failure can be replayed. */
  readonly seed?: number;
  /** Random elements per op (default 100000 on xdna2, 65536 on npu4). */
  readonly bulk?: number;
}

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

/** The npu4 branch: asynchronous, since it compiles, loads and replays through a session. */
async function npu4Contracts(opts: ContractsOptions, io: Io): Promise<number> {
  const reports = await runNpu4Contracts({
    target: 'npu4',
    ...(opts.op !== undefined ? { op: opts.op } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.bulk !== undefined ? { bulk: opts.bulk } : {}),
  });
  const pass = reports.every((r) => r.pass);
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
  return pass ? EXIT.ok : EXIT.refused;
}

/** Verifies a target's contracts; exit 0 when every op passes, 1 when one fails (npu4: a promise of it). */
export function contractsCommand(opts: ContractsOptions, io: Io): number | Promise<number> {
  if (opts.target === 'npu4') return npu4Contracts(opts, io);
  if (opts.target !== 'xdna2') throw new UsageError(`contracts are verified for --target xdna2 or npu4 only, got ${JSON.stringify(opts.target)}`);
  const reports = runContracts({
    target: 'xdna2',
    ...(opts.op !== undefined ? { op: opts.op } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.bulk !== undefined ? { bulk: opts.bulk } : {}),
  });
  const pass = reports.every((r) => r.pass);
  if (opts.json) io.out(JSON.stringify({ target: opts.target, simulated: true, pass, reports }));
  else {
    io.out(`contracts of ${opts.target} on the simulated core (${reports.length} op${reports.length === 1 ? '' : 's'}):`);
    for (const r of reports) {
      io.out(`  ${line(r)}`);
      for (const n of r.notes) io.out(`        ${n}`);
    }
    io.out(pass ? 'every op is within its contract' : `${reports.filter((r) => !r.pass).length} op(s) break their contract`);
  }
  return pass ? EXIT.ok : EXIT.refused;
}
