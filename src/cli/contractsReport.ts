/**
 * What `contracts` adds around a sweep: the HTML report of `--report FILE.html` (src/contracts/report.ts
 * builds its data, reportHtml.ts the page) and the bar over ops on a terminal (progress.ts).
 */
import type { SweepReports } from '../contracts/report.js';
import { reportOps, writeContractReport } from '../contracts/report.js';
import type { OpProgress } from '../contracts/reference.js';
import type { Io } from './output.js';
import { createProgress, type Progress } from './progress.js';

/** The flags the report reads. */
export interface ReportFlags {
  readonly target: string;
  readonly op?: string;
  readonly seed?: number;
  readonly bulk?: number;
  readonly json?: boolean;
  readonly report?: string;
}

/** The command line that reproduces the sweep, as the page shows it. */
function howOf(f: ReportFlags): string {
  const parts = ['npu-offload contracts', `--target ${f.target}`];
  if (f.op !== undefined) parts.push(`--op ${f.op}`);
  if (f.seed !== undefined) parts.push(`--seed ${f.seed}`);
  if (f.bulk !== undefined) parts.push(`--bulk ${f.bulk}`);
  return parts.join(' ');
}

/** Writes the report when --report was given (`normwiseBound`: the NPU4 contract's); reportSaid says where. */
export function saveReport(f: ReportFlags, reports: SweepReports, pass: boolean, normwiseBound?: number): void {
  if (f.report === undefined) return;
  writeContractReport(f.report, { target: f.target, pass, generated: new Date().toISOString(), how: howOf(f), ops: reportOps(reports, normwiseBound) });
}

/** Says where the report went (not with --json, whose stdout is one document), after the summary. */
export function reportSaid(f: ReportFlags, io: Io): void {
  if (f.report !== undefined && !f.json) io.out(`report written to ${f.report}`);
}

/** The bar over a sweep's ops, and the callback the sweep tells. */
export function sweepProgress(f: ReportFlags): { readonly bar: Progress; readonly onProgress: OpProgress } {
  const bar = createProgress(`contracts ${f.target} {bar} {value}/{total} ops | {op} done | {duration_formatted}`, f.json === undefined ? {} : { json: f.json });
  // Drawn from the first op's end on: the sweep knows its op count, the command does not.
  // Stopped at the last op, before the sweep's report lines are printed under it.
  return { bar, onProgress: (done, total, op) => { bar.update(done, total, { op }); if (done === total) bar.stop(); } };
}
