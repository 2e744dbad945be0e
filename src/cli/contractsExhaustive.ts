/**
 * `npu-offload contracts --target xdna2|npu4 --op OP --exhaustive [--fixed N] [--operand a|b]
 * [--workers N] [--seed N] [--json]`: sweeps one op over every input (src/contracts/exhaustive.ts) and
 * reports the worst input, the share in the domain, every in-domain input outside the contract (the
 * first thousand, and the count), the binades they fall in and the cross-check of the references.
 * A progress bar goes to stderr when both stdout and stderr are terminals and --json is not given.
 */
import type { ExhaustiveReport, SweptElement } from '../contracts/exhaustive.js';
import { runExhaustive } from '../contracts/exhaustive.js';
import { UsageError } from '../errors/index.js';
import type { Io } from './output.js';
import { EXIT } from './output.js';
import { checkWorkers } from './limits.js';
import { createProgress } from './progress.js';

export interface ExhaustiveCliOptions {
  readonly target: string;
  readonly op?: string;
  readonly json?: boolean;
  readonly seed?: number;
  readonly bulk?: number;
  readonly workers?: number;
  readonly fixed?: number;
  readonly operand?: string;
  /** Show the progress bar (default: both stdout and stderr are terminals, and not --json). */
  readonly progress?: boolean;
}

function num(v: number): string {
  if (Object.is(v, -0)) return '-0';
  return !Number.isFinite(v) || (Number.isInteger(v) && Math.abs(v) < 1e6) ? String(v) : v.toPrecision(6);
}

function call(r: ExhaustiveReport, e: SweptElement): string {
  if (r.operand === null) return `${r.op}(${num(e.input)} ${e.bits})`;
  const [a, b] = r.operand === 'a' ? [`${num(e.input)} ${e.bits}`, num(e.other!)] : [num(e.other!), `${num(e.input)} ${e.bits}`];
  return `${r.op}(${a}, ${b})`;
}

function element(r: ExhaustiveReport, e: SweptElement): string {
  const what = e.kind === 'cancellation' ? 'a cancellation that is not exact' : `error ${num(e.error)} = ${num(e.ratio)} of its bound ${num(e.bound)}`;
  return `${call(r, e)} gave ${num(e.got)}, the reference ${num(e.want)}: ${what}`;
}

/** The report for people. */
function lines(r: ExhaustiveReport): string[] {
  const what = r.inputs === 'f16' ? 'FP16' : 'f32';
  const n = r.fixed?.length ?? 0;
  const swept = r.operand === null ? `every ${what} input` : `every ${what} value of operand ${r.operand} against ${n} fixed value${n === 1 ? '' : 's'}`;
  const out = [`exhaustive sweep of ${r.op} on ${r.target} (simulated${r.crossCheck ? ', the core run natively' : ''}), ${swept}:`];
  out.push(`  ${r.pass ? 'pass' : 'FAIL'}  ${r.op}  ${r.contract} (vs ${r.reference})`);
  out.push(`        ${r.elements} inputs, ${r.inDomain} in the domain (${(100 * r.share).toFixed(2)}%), ${r.failures} outside the contract`);
  out.push(r.worst === null ? '        nothing in the domain' : `        worst: ${element(r, r.worst)}`);
  const c = r.crossCheck;
  if (c !== null) {
    const distance = c.tolerance.startsWith('bit') ? '' : `; largest distance ${c.maxReferenceUlps} f64 ulps`;
    out.push(`        cross-check on ${c.samples} sampled inputs: ${c.coreMismatches} mismatches between the native and the TypeScript core, ${c.referenceDisagreements} disagreements between the native reference and the TypeScript oracle (tolerance ${c.tolerance}${distance})`);
    for (const x of c.examples) out.push(`          ${x}`);
  }
  if (r.binades.length > 0) {
    out.push(`        failures by binade of the swept operand:`);
    for (const b of r.binades) out.push(`          ${b.range}: ${b.failures}`);
  }
  for (const f of r.byFixed.slice(0, 20)) out.push(`        against ${num(f.other)}: ${f.failures} failures`);
  if (r.failing.length > 0) {
    out.push(`        ${r.failures > r.failing.length ? `the first ${r.failing.length} of ${r.failures}` : `all ${r.failures}`} inputs outside the contract:`);
    for (const e of r.failing) out.push(`          ${element(r, e)}`);
  }
  for (const n of r.notes) out.push(`        ${n}`);
  out.push(`  ${(r.ms / 1000).toFixed(1)} s, ${(r.inputsPerSecond / 1e6).toFixed(1)} M inputs/s`);
  return out;
}

/** A bar over inputs on stderr (src/cli/progress.ts), or null. */
function progressBar(opts: ExhaustiveCliOptions, op: string): { update: (done: number, total: number) => void; stop: () => void } | null {
  const bar = createProgress(`sweep ${op} {bar} {percentage}% | {m}/{totalM} M inputs | eta {eta_formatted}`, opts);
  if (!bar.shown) return null;
  return { update: (done, total) => bar.update(done, total, { m: (done / 1e6).toFixed(0), totalM: (total / 1e6).toFixed(0) }), stop: () => bar.stop() };
}

/** Runs the sweep; resolves 0 when the op passes, 1 when it does not. */
export async function contractsExhaustiveCommand(opts: ExhaustiveCliOptions, io: Io): Promise<number> {
  if (opts.target !== 'xdna2' && opts.target !== 'npu4') throw new UsageError(`contracts are verified for --target xdna2 or npu4 only, got ${JSON.stringify(opts.target)}`);
  if (opts.op === undefined) throw new UsageError('--exhaustive sweeps one op: give --op');
  if (opts.bulk !== undefined) throw new UsageError('--bulk sets the random bulk; an exhaustive sweep has none (drop --bulk or --exhaustive)');
  if (opts.operand !== undefined && opts.operand !== 'a' && opts.operand !== 'b') throw new UsageError(`--operand is a or b, got ${JSON.stringify(opts.operand)}`);
  // The machine's bound on threads, as the other commands' --workers have.
  if (opts.workers !== undefined) checkWorkers(opts.workers, 1);
  const bar = progressBar(opts, opts.op);
  let report: ExhaustiveReport;
  try {
    report = await runExhaustive({
      target: opts.target, op: opts.op,
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
      ...(opts.workers !== undefined ? { threads: opts.workers } : {}),
      ...(opts.fixed !== undefined ? { fixed: opts.fixed } : {}),
      ...(opts.operand !== undefined ? { operand: opts.operand } : {}),
      ...(bar ? { onProgress: bar.update } : {}),
    });
  } finally {
    bar?.stop();
  }
  if (opts.json) io.out(JSON.stringify({ target: opts.target, simulated: true, exhaustive: true, pass: report.pass, report }));
  else for (const l of lines(report)) io.out(l);
  return report.pass ? EXIT.ok : EXIT.refused;
}
