/** The contract report's data, as the page (reportHtml.ts) draws it and report.ts builds it. */
import type { BinadeStat } from '../numerics/binades.js';

/** One op of the report, as the page draws it. */
export interface ReportOp {
  readonly op: string;
  readonly contract: string;
  readonly pass: boolean;
  /** What one tally counts: an element (per-element sweeps) or a case (the NPU4's normwise cases). */
  readonly unit: 'element' | 'case';
  readonly checked: number;
  readonly inDomain: number;
  readonly failures: number;
  /** The worst in-domain input, as people read it; null when none is in the domain. */
  readonly worst: { readonly input: string; readonly error: number; readonly bound: number; readonly ratio: number } | null;
  readonly binades: readonly BinadeStat[];
  readonly notes: readonly string[];
}

/** The whole report. */
export interface ContractReportData {
  readonly target: string;
  readonly pass: boolean;
  /** When the sweep ran (ISO 8601), and how it was asked for (the command line's flags). */
  readonly generated: string;
  readonly how: string;
  readonly ops: readonly ReportOp[];
}
