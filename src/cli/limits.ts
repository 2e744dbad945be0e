/**
 * The CLI's side of the limits (docs/LIMITS.md): what the `--max-*` flags (declared in
 * ./options.ts) set for `validate`, `plan`, `run` and `farm`, and the bounds on worker and thread
 * counts and contract bulks, which a flag past them is refused against as a usage error (exit 2).
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { messageOf, UsageError } from '../errors/index.js';
import type { Limits } from '../ir/limits.js';

/** The `--max-*` flags as commander hands them over. */
export interface LimitFlags {
  readonly maxElements?: number;
  readonly maxProgramBytes?: number;
  readonly maxEquations?: number;
  readonly maxJsonDepth?: number;
}

/** The limits the flags set (the others keep their defaults). */
export function limitsOfFlags(o: LimitFlags): Partial<Limits> {
  return {
    ...(o.maxElements !== undefined ? { elementsPerTensor: o.maxElements } : {}),
    ...(o.maxProgramBytes !== undefined ? { programBytes: o.maxProgramBytes } : {}),
    ...(o.maxEquations !== undefined ? { equations: o.maxEquations } : {}),
    ...(o.maxJsonDepth !== undefined ? { jsonDepth: o.maxJsonDepth } : {}),
  };
}

/**
 * The most workers a command starts: four per core (at least 8). Each is a thread with its own heap,
 * so hundreds of them take gigabytes and gain nothing on a machine of a few cores.
 */
export function maxWorkers(): number {
  return Math.max(8, 4 * availableParallelism());
}

/** `n` as a worker count, or a UsageError naming `flag` and the bound. */
export function checkWorkers(n: number | undefined, fallback: number, flag = '--workers'): number {
  const w = n ?? fallback;
  const max = maxWorkers();
  if (!Number.isInteger(w) || w < 1) throw new UsageError(`${flag} must be a whole number of at least 1, got ${String(n)}`);
  if (w > max) throw new UsageError(`${flag} ${w} is past the bound of ${max} (4 per core on this machine, at least 8)`);
  return w;
}

/**
 * A parser of a thread count flag (`--threads` of `generate`, `gate`, `serve`): a whole number from 1
 * to maxWorkers(), as the worker counts; past it a usage error (exit 2), before any thread starts.
 */
export function threadsArg(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`${flag} must be a whole number of at least 1, got ${JSON.stringify(v)}`);
    // The worker counts' own check and words; commander wants its error class for a flag's parser.
    try { return checkWorkers(n, n, flag); } catch (e) { throw new InvalidArgumentError(messageOf(e)); }
  };
}
