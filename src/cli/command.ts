/**
 * How to add a command (one file, one line):
 *  1. Write src/cli/NAME.ts with the command's body, `fooCommand(...args, opts, io)`, which returns the
 *     exit code and throws typed errors (EngineError) for refusals.
 *  2. In the same file, `export const foo: CliCommand = { register(cli, { io, action }) { ... } }`:
 *     `cli.command('foo')`, its flags (the shared ones are in ./options.js), `.action(action(...))`.
 *  3. Add an entry to COMMANDS in src/cli/main.ts: its name, arguments, whether it has options, its
 *     description and `load: async () => (await import('./foo.js')).foo`. That order is the order
 *     `--help` lists commands in; a run imports only the modules of the commands it names, and
 *     test/cli/command.test.ts fails when an entry disagrees with what its module registers.
 */
import type { Command } from 'commander';
import { reportError, type Io } from './output.js';

/**
 * Turns a command's body into a commander action. The body returns the exit code; a throw is reported
 * by `reportError`, as JSON when the command's own parsed flags asked for it (see `wantsJson`).
 */
export type Action = <A extends unknown[]>(body: (...a: A) => number | Promise<number>) => (...a: A) => Promise<void>;

/** What a command registers itself with: where it writes and the one action wrapper. */
export interface CliContext {
  readonly io: Io;
  readonly action: Action;
}

/** One top-level command (or command group) of `npu-offload`. */
export interface CliCommand {
  /** Adds the command and its subcommands to `cli`. */
  register(cli: Command, ctx: CliContext): void;
}

/**
 * Whether an action's caller asked for JSON. Commander passes the Command itself as the last action
 * argument, after the positional arguments and the options: `--json`, or `--format json` (matrix).
 */
export function wantsJson(args: readonly unknown[]): boolean {
  const cmd = args[args.length - 1] as { opts?: unknown } | undefined;
  if (typeof cmd !== 'object' || cmd === null || typeof cmd.opts !== 'function') return false;
  const o = (cmd as Command).opts<{ json?: unknown; format?: unknown }>();
  return o.json === true || o.format === 'json';
}

/** The action wrapper of a CLI run: each command's exit code, or its error's, goes to `done`. */
export function actionOf(io: Io, done: (code: number) => void): Action {
  return (body) => async (...a) => {
    try { done(await body(...a)); } catch (e) { done(reportError(e, io, wantsJson(a))); }
  };
}
