/**
 * The data of the contract report (`contracts --report FILE.html`): per op, its verdict, its worst
 * input and its error against its bound binade by binade of the input, whatever target swept it. A
 * per-element sweep (xdna2's, and any target whose sweep yields ContractReports) tallies each element
 * in the binade of its largest operand (ContractTally); the NPU4's sweep judges whole cases by a
 * normwise error, so each case counts once, in the binade of its largest |input| (CaseReport.scale).
 * The page itself is reportHtml.ts.
 */
import type { HostContractReport } from './host.js';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError } from '../errors/index.js';
import { writeOutputFile } from '../io/write.js';
import { BinadeTally } from '../numerics/binades.js';
import type { ContractReport } from '../devices/xdna2/contractTally.js';
import type { Npu4ContractReport } from './npu4Tally.js';
import { reportHtml } from './reportHtml.js';
import type { ContractReportData, ReportOp } from './reportTypes.js';

export type { ContractReportData, ReportOp } from './reportTypes.js';

/** A target's sweep result: per-element ContractReports or the NPU4's per-case reports. */
export type SweepReports = readonly ContractReport[] | readonly Npu4ContractReport[] | readonly HostContractReport[];

function num(v: number): string {
  if (Object.is(v, -0)) return '-0';
  return !Number.isFinite(v) || (Number.isInteger(v) && Math.abs(v) < 1e6) ? String(v) : v.toPrecision(6);
}

/** A per-element op. */
function elementOp(r: ContractReport): ReportOp {
  const w = r.worst;
  return {
    op: r.op, contract: `${r.contract} (vs ${r.reference})`, pass: r.pass, unit: 'element',
    checked: r.elements, inDomain: r.inDomain, failures: r.failures,
    worst: w === null ? null : { input: `${r.op}(${w.operands.map(num).join(', ')}) gave ${num(w.got)}, the reference ${num(w.want)}`, error: w.error, bound: w.bound, ratio: w.ratio },
    binades: r.binades, notes: r.notes,
  };
}

/** An NPU4 op: each case one count, its normwise error against the bound (exact cases: 0, or Infinity on a mismatch). */
function npu4Op(r: Npu4ContractReport, bound: number): ReportOp {
  const t = new BinadeTally();
  for (const c of r.caseReports) {
    const exact = c.check === 'exact';
    const bad = exact ? c.mismatches > 0 : !(c.error <= bound);
    const ratio = exact ? (c.mismatches > 0 ? Infinity : 0) : c.error / bound;
    t.add(c.scale, c.inDomain, ratio, exact ? c.mismatches : c.error, bad);
  }
  const w = r.worst;
  const scale = w === null ? undefined : r.caseReports.find((c) => c.name === w.case)?.scale;
  return {
    op: r.op, contract: r.contract, pass: r.pass, unit: 'case', checked: r.cases, inDomain: r.inDomain, failures: r.failures,
    worst: w === null ? null : { input: `case ${w.case}${scale === undefined ? '' : `, largest |input| ${num(scale)}`}`, error: w.error, bound, ratio: w.ratio },
    binades: t.stats(), notes: r.notes,
  };
}

/** A host op: per element, plotted by the binade of the reference result (its inputs vary by program). */
function hostOp(r: HostContractReport): ReportOp {
  const w = r.worst;
  return {
    op: r.op, contract: r.contract, pass: r.pass, unit: 'element', checked: r.elements, inDomain: r.inDomain, failures: r.failures,
    worst: w === null ? null : { input: `${w.program}: got ${num(w.got)}, the reference ${num(w.want)}`, error: w.error, bound: w.bound, ratio: w.ratio },
    binades: r.binades,
    notes: ['plotted by the binade of the reference result'],
  };
}

/** The report's ops from a sweep's result, whichever kind it is. */
export function reportOps(reports: SweepReports, normwiseBound?: number): ReportOp[] {
  return (reports as readonly (ContractReport | Npu4ContractReport | HostContractReport)[]).map((r) => {
    if ('caseReports' in r) return npu4Op(r, normwiseBound ?? (r.worst !== null && r.worst.ratio > 0 ? r.worst.error / r.worst.ratio : 1));
    if ('programFailures' in r) return hostOp(r);
    return elementOp(r);
  });
}

/** Refuses, before a sweep starts, a report path whose directory is missing or not writable. */
export function checkReportPath(file: string): void {
  const dir = dirname(file);
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true) throw new UsageError(`cannot write the report ${file}: ${dir} is not a directory`);
  try { accessSync(dir, constants.W_OK); } catch { throw new UsageError(`cannot write the report ${file}: ${dir} is not writable`); }
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory() === true) throw new UsageError(`cannot write the report ${file}: it is a directory`);
}

/** Writes the report page to `file` (a failure is a UsageError naming it). */
export function writeContractReport(file: string, data: ContractReportData): void {
  writeOutputFile(file, reportHtml(data));
}
