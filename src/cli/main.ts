/**
 * The `npu-offload` command. Each command lives in its own file and registers itself (./command.ts);
 * this one lists them, parses flags and turns every failure into a one-line message (or
 * `{ "error": ... }` with --json) and an exit code:
 * 0 done, 1 a typed refusal, 2 a usage error, 3 an internal defect.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { actionOf, type CliCommand } from './command.js';
import { EXIT, processIo, reportError, type Io } from './output.js';

/**
 * One entry of the command table: what the top-level `--help` shows of the command, and how to load the
 * module that registers it. A run imports only the modules of the commands its argv names (a start that
 * does not pay for fastify, the engine or the contract tables when it validates a file); every other
 * command is registered from its entry alone, which is all `--help` and commander's suggestions read.
 * test/cli/command.test.ts checks each entry against what its module registers.
 */
export interface CommandEntry {
  readonly name: string;
  /** The positional arguments as commander prints them: `<program>`, `[model]`, `[args...]`. */
  readonly args: readonly string[];
  /** Whether the command has options (the help line shows `[options]`). */
  readonly options: boolean;
  readonly description: string;
  readonly load: () => Promise<CliCommand>;
}

/** Every command, in the order `--help` lists them; a new command is one file and one entry here. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'validate', args: ['<program>'], options: true, description: 'check a program against the program format', load: async () => (await import('./validate.js')).validate },
  { name: 'run', args: ['<program>'], options: true, description: 'run a program on a target', load: async () => (await import('./run.js')).run },
  { name: 'plan', args: ['<program>'], options: true, description: 'show what a target admits and refuses of a program, its regions and contexts', load: async () => (await import('./plan.js')).plan },
  { name: 'matrix', args: [], options: true, description: 'the feature matrix of a target, generated from its admission table', load: async () => (await import('./matrix.js')).matrix },
  { name: 'contracts', args: [], options: true, description: 'run every admitted op on the target\'s device over the edges of its domain and report the worst error against its contract', load: async () => (await import('./contracts.js')).contracts },
  { name: 'farm', args: ['<dir>'], options: true, description: 'compile every program under a directory into the blob cache, in parallel', load: async () => (await import('./farm.js')).farm },
  { name: 'farm-worker', args: [], options: true, description: 'take compile jobs from a farm queue until SIGTERM, publishing every blob to the remote cache tier', load: async () => (await import('./farmWorker.js')).farmWorker },
  { name: 'cache', args: [], options: false, description: 'inspect and maintain the blob cache', load: async () => (await import('./cache.js')).cache },
  { name: 'gguf', args: [], options: false, description: 'GGUF model files', load: async () => (await import('./gguf.js')).gguf },
  { name: 'q4nx', args: [], options: false, description: 'Q4NX model directories', load: async () => (await import('./q4nx.js')).q4nx },
  { name: 'seal', args: [], options: false, description: 'signed, encrypted kernel sets', load: async () => (await import('./seal.js')).seal },
  { name: 'tokenize', args: ['<source>'], options: true, description: 'encode text, decode ids or render chats with a model\'s tokenizer: one JSON value per stdin line, one result line each', load: async () => (await import('./tokenize.js')).tokenize },
  { name: 'generate', args: ['<model>'], options: true, description: 'generate text with a Qwen3 (a GGUF or a model directory) through the engine', load: async () => (await import('./generate.js')).generate },
  { name: 'score', args: ['<model>'], options: true, description: 'teacher-forced scoring: each position\'s next-token logits, each next id\'s log-probability and the perplexity', load: async () => (await import('./score.js')).score },
  { name: 'gate', args: ['<model>'], options: true, description: 'check a Qwen3 on a target against the fp64 reference, phase by phase', load: async () => (await import('./gate.js')).gate },
  { name: 'serve', args: ['[model]'], options: true, description: 'serve a model over an OpenAI-compatible HTTP API (docs/SERVE.md)', load: async () => (await import('./serve.js')).serve },
  { name: 'addon', args: ['<pkg>', '[command]', '[args...]'], options: false, description: 'list an add-on\'s routes and commands, or run one of its commands', load: async () => (await import('./addon.js')).addon },
  { name: 'demo', args: [], options: true, description: 'run the demo program through the actors on the CPU target (npm start)', load: async () => (await import('./demo.js')).demo },
];

/**
 * Registers `entry` from the table alone: a command that is listed but never runs. Its hidden option
 * only makes the help line say `[options]` as the real command's does.
 */
export function registerListed(cli: Command, entry: CommandEntry): void {
  const c = cli.command(entry.name).description(entry.description);
  for (const a of entry.args) c.argument(a);
  if (entry.options) c.addOption(new Option('--listed-only').hideHelp());
}

/**
 * The commands `argv` may run, loaded: every entry whose name appears in it (as the command, or after
 * `help`). A name that appears as some flag's value only loads one module more than needed.
 */
export async function commandsFor(argv: readonly string[]): Promise<ReadonlyMap<string, CliCommand>> {
  const named = COMMANDS.filter((c) => argv.includes(c.name));
  return new Map(await Promise.all(named.map(async (c) => [c.name, await c.load()] as const)));
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Builds the command tree; `done` receives each command's exit code. The commands in `loaded` register
 * themselves; the others are registered from their table entry.
 */
export function buildCli(io: Io, done: (code: number) => void, loaded: ReadonlyMap<string, CliCommand>): Command {
  const cli = new Command('npu-offload')
    .description('Run small ML programs on NPUs (AMD XDNA2, Intel NPU4) or the CPU oracle, under published error bounds.')
    .version(version())
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError('(run with --help for usage)');
  const ctx = { io, action: actionOf(io, done) };
  for (const entry of COMMANDS) {
    const c = loaded.get(entry.name);
    if (c) c.register(cli, ctx);
    else registerListed(cli, entry);
  }
  return cli;
}

/** Runs the CLI over `argv` (without node and script); resolves with the exit code. */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  let code: number = EXIT.ok;
  const cli = buildCli(io, (c) => { code = c; }, await commandsFor(argv));
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
