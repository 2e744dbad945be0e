/**
 * The `npu-offload` command. Each command lives in its own file and registers itself (./command.ts);
 * this one lists them, parses flags and turns every failure into a one-line message (or
 * `{ "error": ... }` with --json) and an exit code:
 * 0 done, 1 a typed refusal, 2 a usage error, 3 an internal defect.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { addon } from './addon.js';
import { cache } from './cache.js';
import { actionOf, type CliCommand } from './command.js';
import { contracts } from './contracts.js';
import { demo } from './demo.js';
import { farm } from './farm.js';
import { farmWorker } from './farmWorker.js';
import { gate } from './gate.js';
import { generate } from './generate.js';
import { score } from './score.js';
import { gguf } from './gguf.js';
import { matrix } from './matrix.js';
import { plan } from './plan.js';
import { q4nx } from './q4nx.js';
import { run } from './run.js';
import { seal } from './seal.js';
import { serve } from './serve.js';
import { tokenize } from './tokenize.js';
import { validate } from './validate.js';
import { EXIT, processIo, reportError, type Io } from './output.js';

/** Every command, in the order `--help` lists them; a new command is one file and one entry here. */
const COMMANDS: readonly CliCommand[] = [validate, run, plan, matrix, contracts, farm, farmWorker, cache, gguf, q4nx, seal, tokenize, generate, score, gate, serve, addon, demo];

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Builds the command tree; `done` receives each command's exit code. */
function buildCli(io: Io, done: (code: number) => void): Command {
  const cli = new Command('npu-offload')
    .description('Run small ML programs on NPUs (AMD XDNA2, Intel NPU4) or the CPU oracle, under published error bounds.')
    .version(version())
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError('(run with --help for usage)');
  const ctx = { io, action: actionOf(io, done) };
  for (const c of COMMANDS) c.register(cli, ctx);
  return cli;
}

/** Runs the CLI over `argv` (without node and script); resolves with the exit code. */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  let code: number = EXIT.ok;
  const cli = buildCli(io, (c) => { code = c; });
  try {
    await cli.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.ok;
      // Commander has told the person on stderr; a machine asking for --json gets the typed error too.
      if (argv.includes('--json')) io.out(JSON.stringify({ error: { code: 'UsageError', reason: e.message.replace(/^error: /, '') } }));
      return EXIT.usage;
    }
    return reportError(e, io, argv.includes('--json'));
  }
  return code;
}
