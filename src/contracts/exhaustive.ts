/**
 * Exhaustive contract sweeps (docs/XDNA2.md, "Exhaustive sweeps"): every f32 input of an XDNA2 unary
 * op, and for a binary op every f32 value of one operand against each of a few hundred fixed values of
 * the other (the edge values of contractCases.ts, then a seeded random sample), judged against the op's
 * published contract. The NPU4 computes in FP16, so its sweep covers every FP16 input instead
 * (npu4Exhaustive.ts).
 *
 * The patterns are cut into chunks that run natively (nativeSweep.ts), `threads` at a time on libuv's
 * thread pool, and are folded in input order; a chunk keeps counts, its worst element and its first
 * failures only, so memory stays that of a few chunks however many inputs are swept. Each finished
 * chunk is cross-checked on a random sample against the TypeScript core and oracle (exhaustiveCheck.ts)
 * on the main thread while the next chunks run.
 */
import { availableParallelism } from 'node:os';
import type { Device } from '../devices/device.js';
import { UsageError } from '../errors/index.js';
import { EDGE_VALUES, randomF32, rng } from '../devices/xdna2/contractCases.js';
import { CONTRACT_OPS, contractOf, referenceOf } from '../devices/xdna2/contracts.js';
import type { CoreBinary, CoreUnary } from '../devices/xdna2/kernels.js';
import { isCoreBinary, isCoreUnary } from '../devices/xdna2/kernels.js';
import { F16_MAX, f16FromBits, roundF16 } from '../numerics/float16.js';
import { describeContract } from '../targets/contract.js';
import { CrossChecker, RUN_LENGTH, SAMPLE_RUNS } from './exhaustiveCheck.js';
import type { ExhaustiveReport } from './exhaustiveReport.js';
import { ExhaustiveTally, MAX_LISTED, binadeOf, patternOf } from './exhaustiveReport.js';
import type { ChunkSpec, NativeFault, SweepFault } from './nativeSweep.js';
import { loadSweepAddon, nativeContract } from './nativeSweep.js';
import { runNpu4Exhaustive } from './npu4Exhaustive.js';
import { NPU4_CONTRACT_OPS } from './npu4Ops.js';

export type {   ExhaustiveReport, SweptElement } from './exhaustiveReport.js';

export interface ExhaustiveOptions {
  readonly target: 'xdna2' | 'npu4';
  readonly op: string;
  /** Seeds the cross-check's samples and the random fixed values (default 1). */
  readonly seed?: number;
  /** Chunks running at once (default: the cores; libuv runs at most UV_THREADPOOL_SIZE, 4 by default). */
  readonly threads?: number;
  /** Binary ops: how many fixed values of the other operand (default 256: the edges, then random), or the values. */
  readonly fixed?: number | readonly number[];
  /** Binary ops: the swept operand (default 'a'; the other is fixed). */
  readonly operand?: 'a' | 'b';
  /** Only the patterns [from, to) of the swept operand (default every one: [0, 2^32), FP16: [0, 2^16)). */
  readonly range?: { readonly from: number; readonly to: number };
  /** Patterns per chunk (default 2^22). */
  readonly chunk?: number;
  /** Called after each chunk is folded in: inputs done, and in all. */
  readonly onProgress?: (done: number, total: number) => void;
  /** @internal A broken core, for negative controls (xdna2 only). */
  readonly fault?: SweepFault;
  /** @internal Where the addon is looked for (default this package's build/Release/). */
  readonly addonDir?: string;
  /** @internal Run the portable lane routines even on a CPU with AVX-512 (both are the same core). */
  readonly generic?: boolean;
  /** @internal The NPU4 device (default the simulated one); a negative control passes a faulty one. */
  readonly device?: () => Device;
}

/** The most fixed values a binary sweep takes (each is a full sweep of the other operand). */
const MAX_FIXED = 4096;
const DEFAULT_FIXED = 256;
const DEFAULT_CHUNK = 2 ** 22;
const MAX_THREADS = 64;

/** The ops an exhaustive sweep of the target covers. */
export function exhaustiveOps(target: 'xdna2' | 'npu4'): readonly string[] {
  const elementwise = (o: string) => isCoreUnary(o) || isCoreBinary(o);
  return target === 'npu4' ? NPU4_CONTRACT_OPS.filter(elementwise) : CONTRACT_OPS.filter(elementwise);
}

/** Sweeps one op over every input (see the file's doc); resolves its report, pass or fail. */
export async function runExhaustive(opts: ExhaustiveOptions): Promise<ExhaustiveReport> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type names it; a JavaScript caller may pass anything
  if (opts.target !== 'xdna2' && opts.target !== 'npu4') throw new UsageError(`exhaustive sweeps run for --target xdna2 or npu4, got ${JSON.stringify(opts.target)}`);
  const ops = exhaustiveOps(opts.target);
  if (!ops.includes(opts.op)) {
    throw new UsageError(`--exhaustive sweeps the elementwise ops of ${opts.target}; ${JSON.stringify(opts.op)} is not one: choose one of ${ops.join(', ')}`);
  }
  const binary = isCoreBinary(opts.op);
  if (!binary && (opts.fixed !== undefined || opts.operand !== undefined)) throw new UsageError(`--fixed and --operand are for binary ops; ${opts.op} is unary`);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type names it; a JavaScript caller may pass anything
  if (opts.operand !== undefined && opts.operand !== 'a' && opts.operand !== 'b') throw new UsageError(`--operand is a or b, got ${JSON.stringify(opts.operand)}`);
  const seed = checkWhole('--seed', opts.seed ?? 1, 0, 2 ** 32 - 1);
  const threads = checkWhole('--workers', opts.threads ?? Math.min(4, availableParallelism()), 1, MAX_THREADS);
  const chunk = checkWhole('chunk', opts.chunk ?? DEFAULT_CHUNK, RUN_LENGTH, 2 ** 32);
  const space = opts.target === 'npu4' ? 2 ** 16 : 2 ** 32;
  const range = checkRange(opts.range, space);
  if (opts.target === 'npu4') {
    if (opts.fault !== undefined) throw new UsageError('a fault is injected into the XDNA2 core only');
    const fixed = binary ? fixedF16Values(opts.fixed, seed) : null;
    return runNpu4Exhaustive({
      op: opts.op, range, fixed, operand: opts.operand ?? 'a',
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}), ...(opts.device ? { device: opts.device } : {}),
    });
  }
  const fixed = binary ? fixedValues(opts.fixed, seed) : null;
  return sweepXdna2(opts.op as CoreUnary | CoreBinary, { seed, threads, chunk, range, fixed, sweepSecond: opts.operand === 'b', opts });
}

function checkWhole(what: string, v: number, lo: number, hi: number): number {
  if (!Number.isSafeInteger(v) || v < lo || v > hi) throw new UsageError(`${what} must be a whole number from ${lo} to ${hi}, got ${String(v)}`);
  return v;
}

function checkRange(r: ExhaustiveOptions['range'], space: number): { from: number; to: number } {
  if (r === undefined) return { from: 0, to: space };
  checkWhole('range.from', r.from, 0, space);
  checkWhole('range.to', r.to, r.from, space);
  return { from: r.from, to: r.to };
}

/**
 * The fixed operands: the given values (rounded by `round`), or `edges` then values drawn by `draw`
 * from a seeded stream, `n` distinct ones in all.
 */
function fixedOf(f: number | readonly number[] | undefined, round: (v: number) => number, edges: readonly number[], draw: (r: () => number) => number, seed: number): number[] {
  if (Array.isArray(f)) {
    if (f.length === 0 || f.length > MAX_FIXED || !f.every((v) => typeof v === 'number')) throw new UsageError(`fixed values: from 1 to ${MAX_FIXED} numbers`);
    return f.map((v: number) => round(v));
  }
  const n = checkWhole('--fixed', (f as number | undefined) ?? DEFAULT_FIXED, 1, MAX_FIXED);
  const out: number[] = [];
  const seen = new Set<number>();
  const push = (v: number) => { const p = patternOf(v); if (!seen.has(p) && out.length < n) { seen.add(p); out.push(v); } };
  for (const v of edges) push(v);
  const r = rng(seed * 7919 + 17);
  while (out.length < n) push(draw(r));
  return out;
}

/** XDNA2: the edge values of contract verification, then random f32 values over every binade. */
function fixedValues(f: number | readonly number[] | undefined, seed: number): number[] {
  return fixedOf(f, Math.fround, EDGE_VALUES, (r) => randomF32(r, -126, 127), seed);
}

/** NPU4: the FP16 edges, then random finite FP16 values. */
function fixedF16Values(f: number | readonly number[] | undefined, seed: number): number[] {
  return fixedOf(f, roundF16, F16_EDGES, (r) => { for (;;) { const v = f16FromBits(Math.floor(r() * 65536)); if (Number.isFinite(v)) return v; } }, seed);
}

const F16_EDGE_MAGNITUDES = [0, 2 ** -24, 2 ** -14, F16_MAX, 1, 1 + 2 ** -10, 1 - 2 ** -11, 0.5, 2, 3, roundF16(1 / 3), roundF16(Math.PI), 256, 2048];
const F16_EDGES = [...F16_EDGE_MAGNITUDES, ...F16_EDGE_MAGNITUDES.map((v) => -v)];

interface Plan {
  readonly seed: number;
  readonly threads: number;
  readonly chunk: number;
  readonly range: { readonly from: number; readonly to: number };
  readonly fixed: readonly number[] | null;
  readonly sweepSecond: boolean;
  readonly opts: ExhaustiveOptions;
}

async function sweepXdna2(op: CoreUnary | CoreBinary, p: Plan): Promise<ExhaustiveReport> {
  const addon = loadSweepAddon(p.opts.addonDir);
  const contract = contractOf(op);
  const reference = referenceOf(op);
  const rounded = reference === 'oracle-f32';
  const f = p.opts.fault;
  if (f !== undefined && !(Number.isInteger(f.exponent) && f.exponent >= -126 && f.exponent <= 127 && Number.isInteger(f.ulps))) {
    throw new UsageError('fault: an exponent in [-126, 127] and a whole number of ulps');
  }
  const fault: NativeFault | undefined = f === undefined ? undefined : { exponent: f.exponent + 127, ulps: f.ulps, kind: f.in === 'reference' ? 'reference' : 'core' };
  const generic = p.opts.generic === true;
  const base = { op, contract: nativeContract(contract), rounded, maxShown: MAX_LISTED, sweepSecond: p.sweepSecond, generic, ...(fault ? { fault } : {}) };
  const others = p.fixed ?? [undefined];
  const tasks: { spec: ChunkSpec; other: number | undefined }[] = [];
  for (const other of others) {
    for (let s = p.range.from; s < p.range.to; s += p.chunk) {
      const spec: ChunkSpec = { ...base, from: s, to: Math.min(s + p.chunk, p.range.to), ...(other !== undefined ? { fixed: patternOf(other) } : {}) };
      tasks.push({ spec, other });
    }
  }
  const total = tasks.reduce((n, t) => n + t.spec.to - t.spec.from, 0);
  const tally = new ExhaustiveTally(p.sweepSecond);
  // The TypeScript core shares a 'core' fault (a broken core, not a broken port).
  const check = new CrossChecker(addon, op, rounded, fault, (f?.in ?? 'core') === 'core', generic);
  const t0 = performance.now();
  await runInOrder(tasks.length, p.threads, (k) => addon.sweepChunk(tasks[k]!.spec), (k, result) => {
    const t = tasks[k]!;
    check.check(sampleStarts(t.spec, p.seed, k), t.spec.fixed, p.sweepSecond);
    tally.add(result, t.spec.fixed);
    p.opts.onProgress?.(tally.elements, total);
  });
  const ms = performance.now() - t0;
  const summary = tally.summary(p.fixed !== null);
  const crossCheck = check.result();
  const notes = [
    `${tasks.length} chunk${tasks.length === 1 ? '' : 's'} of up to ${p.chunk} patterns, ${p.threads} at a time, run natively (${generic || addon.isa === 'generic' ? 'portable' : 'AVX-512'} lane routines); ${crossCheck.samples} sampled inputs cross-checked against the TypeScript core and oracle`,
  ];
  if (p.fixed !== null) notes.push(`operand ${p.sweepSecond ? 'b' : 'a'} swept against ${p.fixed.length} fixed value${p.fixed.length === 1 ? '' : 's'} of the other`);
  if (fault) notes.push(`negative control: ${f!.in === 'reference' ? 'the native reference' : f!.in === 'native-core' ? 'the native core alone' : 'the core'} is broken by ${f!.ulps} ulps on ${binadeOf(fault.exponent)} (both signs)`);
  if (summary.failures > summary.failing.length) notes.push(`${summary.failures - summary.failing.length} more failures are counted but not listed`);
  return {
    target: 'xdna2', op, contract: describeContract(contract), reference, inputs: 'f32', range: p.range,
    operand: p.fixed === null ? null : p.sweepSecond ? 'b' : 'a', fixed: p.fixed, ...summary, crossCheck,
    pass: summary.failures === 0 && summary.inDomain > 0 && crossCheck.coreMismatches === 0 && crossCheck.referenceDisagreements === 0,
    ms, inputsPerSecond: ms > 0 ? total / (ms / 1000) : 0, notes,
  };
}

/** The starts of a chunk's sampled runs: random, aligned as the chunk's blocks are (seeded per chunk). */
function sampleStarts(spec: ChunkSpec, seed: number, k: number): number[] {
  const r = rng((Math.imul(seed, 0x9e3779b1) + k) >>> 0);
  const blocks = Math.max(1, Math.floor((spec.to - spec.from) / RUN_LENGTH));
  return Array.from({ length: SAMPLE_RUNS }, () => spec.from + Math.floor(r() * blocks) * RUN_LENGTH);
}

/**
 * Runs `n` tasks, `width` at a time, and hands their results to `fold` in task order: a task that
 * finishes early waits, and at most 2 x width tasks are started past the first one not folded yet.
 */
function runInOrder<T>(n: number, width: number, start: (k: number) => Promise<T>, fold: (k: number, result: T) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const ready = new Map<number, T>();
    let next = 0;
    let folded = 0;
    let running = 0;
    let failed = false;
    const pump = () => {
      while (!failed && running < width && next < n && next < folded + 2 * width) {
        const k = next++;
        running++;
        start(k).then((r) => {
          running--;
          if (failed) return;
          ready.set(k, r);
          try {
            while (ready.has(folded)) {
              const v = ready.get(folded)!;
              ready.delete(folded);
              fold(folded++, v);
            }
          } catch (e) {
            failed = true;
            reject(e);
            return;
          }
          if (folded === n) resolve();
          else pump();
        }, (e: unknown) => { failed = true; reject(e); });
      }
    };
    if (n === 0) resolve();
    else pump();
  });
}

