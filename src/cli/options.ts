/**
 * The flags several commands share, written once: whole-number arguments, `--target`, `--cache-dir`,
 * `--json` and the `--max-*` limit flags (their meaning is ./limits.ts's).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseRedisUrl } from '../cache/redisUrl.js';
import { InvalidOptions } from '../errors/index.js';
import { TARGET_NAMES } from '../targets/target.js';

/** A parser for a whole-number flag; anything else is a usage error naming `what`. */
export function intArg(what: string) {
  return (v: string): number => {
    const n = Number(v);
    // Safe integers only: 1e20 is an integer to JavaScript but no count the engine can take (a usage error).
    if (!Number.isSafeInteger(n) || n < 0 || v.trim() === '') throw new InvalidArgumentError(`${what} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** A flag taking a whole number from 0 up, such as `--steps <n>`. */
export function intOption(flags: string, description: string): Option {
  return new Option(flags, description).argParser(intArg(flags.split(' ')[0]!));
}

/** The mandatory `--target <target>`, one of `choices` (default every target). */
export function targetOption(choices: readonly string[] = TARGET_NAMES): Option {
  return new Option('--target <target>', 'target').choices(choices).makeOptionMandatory();
}

/** `--cache-dir <dir>`. */
export function cacheDirOption(): Option {
  return new Option('--cache-dir <dir>', 'blob cache directory');
}

/** A parser for a `redis://host:port/db` flag; a malformed URL is a usage error. */
function redisUrlArg(v: string): string {
  try {
    parseRedisUrl(v, 'url');
  } catch (e) {
    if (e instanceof InvalidOptions) throw new InvalidArgumentError(e.reason);
    throw e;
  }
  return v;
}

/** A flag taking a Redis URL. */
export function redisUrlOption(flags: string, description: string): Option {
  return new Option(flags, description).argParser(redisUrlArg);
}

/** `--json`, which also makes the action wrapper report errors as JSON. */
export function jsonOption(description = 'machine-readable output'): Option {
  return new Option('--json', description);
}

function positive(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${flag} must be a whole number of at least 1, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** Adds the `--max-*` limit flags to a command (read back with `limitsOfFlags`). */
export function withLimitFlags(c: Command): Command {
  const flags: [string, string][] = [
    ['--max-elements <n>', 'elements of any one tensor (default 268435456)'],
    ['--max-program-bytes <n>', 'bytes of the values one step holds at once, 8 per element (default 8589934592)'],
    ['--max-equations <n>', 'equations of a program (default 100000)'],
    ['--max-json-depth <n>', 'nesting depth of a program document (default 64)'],
  ];
  for (const [f, what] of flags) c.addOption(new Option(f, what).argParser(positive(f.split(' ')[0]!)));
  return c;
}
