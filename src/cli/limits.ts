/**
 * The CLI's side of the limits (docs/LIMITS-limits.md): the `--max-*` flags that raise or lower a
 * program's size limits for `validate`, `plan`, `run` and `farm`, and the bounds on worker counts and
 * contract bulks, which a flag past them is refused against as a usage error (exit 2).
 */
import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../errors/index.js';
import type { Limits } from '../ir/limits.js';

/** The `--max-*` flags as commander hands them over. */
export interface LimitFlags {
  readonly maxElements?: number;
  readonly maxProgramBytes?: number;
  readonly maxEquations?: number;
  readonly maxJsonDepth?: number;
}

function positive(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${flag} must be a whole number of at least 1, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** Adds the `--max-*` limit flags to a command. */
export function withLimitFlags(c: Command): Command {
  const flags: [string, string][] = [
    ['--max-elements <n>', 'elements of any one tensor (default 268435456)'],
    ['--max-program-bytes <n>', 'bytes of one step\'s values, 8 per element (default 8589934592)'],
    ['--max-equations <n>', 'equations of a program (default 100000)'],
    ['--max-json-depth <n>', 'nesting depth of a program document (default 64)'],
  ];
  for (const [f, what] of flags) c.addOption(new Option(f, what).argParser(positive(f.split(' ')[0]!)));
  return c;
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
