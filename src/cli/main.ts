/**
 * The `npu-offload` command. Each subcommand lives in its own file; this one parses flags and turns
 * every failure into a one-line message (or `{ "error": ... }` with --json) and an exit code:
 * 0 done, 1 a typed refusal, 2 a usage error, 3 an internal defect.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { cacheCommand, type CacheSubcommand } from './cache.js';
import { contractsCommand } from './contracts.js';
import { demoCommand } from './demo.js';
import { farmCommand } from './farm.js';
import { registerGgufCommands } from './gguf.js';
import { q4nxCheckCommand, q4nxDetectQ8Command } from './q4nx.js';
import { matrixCommand } from './matrix.js';
import { planCommand } from './plan.js';
import { runCommand } from './run.js';
import { sealCheckCommand, sealKeygenCommand, sealVerifyCommand, sealWriteCommand } from './seal.js';
import { validateCommand } from './validate.js';
import { EXIT, processIo, reportError, type Io } from './output.js';
import { withLimitFlags } from './limits.js';
import { TARGET_NAMES } from '../targets/target.js';

function intArg(what: string) {
  return (v: string): number => {
    const n = Number(v);
    // Safe integers only: 1e20 is an integer to JavaScript but no count the engine can take (a usage error).
    if (!Number.isSafeInteger(n) || n < 0 || v.trim() === '') throw new InvalidArgumentError(`${what} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(v)}`);
    return n;
  };
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Builds the command tree; `done` receives each command's exit code. */
export function buildCli(io: Io, done: (code: number) => void): Command {
  const cli = new Command('npu-offload')
    .description('Run small ML programs on NPUs (AMD XDNA2, Intel NPU4) or the CPU oracle, under published error bounds.')
    .version(version())
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError('(run with --help for usage)');

  const wrap = <A extends unknown[]>(json: (...a: A) => boolean, fn: (...a: A) => number | Promise<number>) =>
    async (...a: A): Promise<void> => {
      try { done(await fn(...a)); } catch (e) { done(reportError(e, io, json(...a))); }
    };

  withLimitFlags(cli.command('validate'))
    .description('check a program against the program format')
    .argument('<program>', 'program JSON file')
    .option('--json', 'machine-readable output')
    .action(wrap((_f: string, o: { json?: boolean }) => o.json === true, (f: string, o: { json?: boolean }) => validateCommand(f, o, io)));

  withLimitFlags(cli.command('run'))
    .description('run a program on a target')
    .argument('<program>', 'program JSON file')
    .addOption(new Option('--target <target>', 'target').choices(TARGET_NAMES).makeOptionMandatory())
    .option('--inputs <file>', 'inputs file: arg names to tensors (activations: one tensor, or an array of one per step)')
    .option('--steps <n>', 'number of steps', intArg('--steps'))
    .option('--verify', 'compare every result with the CPU oracle under the numerics class')
    .option('--deadline-ms <ms>', 'deadline of each replay', intArg('--deadline-ms'))
    .addOption(new Option('--device <mode>', 'for an NPU target: the hardware, its simulator, or the hardware when present').choices(['auto', 'native', 'simulated']))
    .option('--cache-dir <dir>', 'blob cache directory')
    .option('--json', 'machine-readable output: { "results": {...}, "state": {...} } with b64 tensors')
    .action(wrap((_f: string, o: { json?: boolean }) => o.json === true, (f: string, o: Parameters<typeof runCommand>[1]) => runCommand(f, o, io)));

  withLimitFlags(cli.command('plan'))
    .description('show what a target admits and refuses of a program, its regions and contexts')
    .argument('<program>', 'program JSON file')
    .addOption(new Option('--target <target>', 'target').choices(TARGET_NAMES).makeOptionMandatory())
    .option('--json', 'machine-readable output')
    .action(wrap((_f: string, o: { json?: boolean }) => o.json === true, (f: string, o: { target: string; json?: boolean }) => planCommand(f, o, io)));

  cli.command('matrix')
    .description('the feature matrix of a target, generated from its admission table')
    .addOption(new Option('--target <target>', 'target').choices(TARGET_NAMES).makeOptionMandatory())
    .addOption(new Option('--format <format>', 'output format').choices(['md', 'json']).default('md'))
    .action(wrap((o: { format?: string }) => o.format === 'json', (o: { target: string; format: 'md' | 'json' }) => matrixCommand(o, io)));

  cli.command('contracts')
    .description('run every admitted op on the target\'s device over the edges of its domain and report the worst error against its contract')
    .addOption(new Option('--target <target>', 'target').choices(['xdna2', 'npu4']).makeOptionMandatory())
    .option('--op <op>', 'one op only')
    .option('--seed <n>', 'seed of the random bulk', intArg('--seed'))
    .option('--bulk <n>', 'random elements per op', intArg('--bulk'))
    .option('--workers <n>', 'oracle workers computing the references in parallel (default 2); with --exhaustive, chunks swept at once (default: the cores)', intArg('--workers'))
    .option('--exhaustive', 'sweep every input of --op (every f32, every FP16 on npu4); binary ops: one operand against fixed values of the other')
    .option('--fixed <n>', 'with --exhaustive, binary ops: fixed values of the other operand (default 256: the edges, then random)', intArg('--fixed'))
    .option('--operand <a|b>', 'with --exhaustive, binary ops: the swept operand (default a)')
    .option('--json', 'machine-readable output')
    .action(wrap((o: { json?: boolean }) => o.json === true, (o: Parameters<typeof contractsCommand>[0]) => contractsCommand(o, io)));

  withLimitFlags(cli.command('farm'))
    .description('compile every program under a directory into the blob cache, in parallel')
    .argument('<dir>', 'directory of program JSON files')
    .addOption(new Option('--target <target>', 'target').choices(TARGET_NAMES).makeOptionMandatory())
    .option('--workers <n>', 'compiler workers', intArg('--workers'))
    .option('--cache-dir <dir>', 'blob cache directory')
    .option('--json', 'machine-readable summary')
    .action(wrap((_d: string, o: { json?: boolean }) => o.json === true, (d: string, o: Parameters<typeof farmCommand>[1]) => farmCommand(d, o, io)));

  const cache = cli.command('cache').description('inspect and maintain the blob cache');
  for (const [sub, what] of [['ls', 'list entries'], ['verify', 'check every entry, remove damaged ones'], ['gc', 'remove least recently used entries down to --max-bytes'], ['clear', 'remove every entry']] as const) {
    const c = cache.command(sub).description(what)
      .option('--cache-dir <dir>', 'blob cache directory')
      .option('--json', 'machine-readable output');
    if (sub === 'gc') c.option('--max-bytes <n>', 'size cap in bytes', intArg('--max-bytes'));
    c.action((o: { cacheDir?: string; json?: boolean; maxBytes?: number }) => {
      done(cacheCommand(sub as CacheSubcommand, o, io));
    });
  }

  registerGgufCommands(cli.command('gguf').description('GGUF model files'), io, wrap);

  const q4nx = cli.command('q4nx').description('Q4NX model directories');
  q4nx.command('check').description('read the container header only; name each quantized tensor\'s chunk kind')
    .argument('<dir>', 'a model directory holding model.q4nx')
    .option('--json', 'machine-readable output')
    .action(wrap((_d: string, o: { json?: boolean }) => o.json === true, (d: string, o: { json?: boolean }) => q4nxCheckCommand(d, o, io)));
  q4nx.command('detect-q8').description('decide each Q8 tensor\'s code layout from its data (or against a GGUF)')
    .argument('<dir>', 'a model directory holding model.q4nx')
    .option('--gguf <file>', 'a GGUF of the same model to correlate against')
    .option('--json', 'machine-readable output')
    .action(wrap((_d: string, o: { json?: boolean }) => o.json === true, (d: string, o: { json?: boolean; gguf?: string }) => q4nxDetectQ8Command(d, o, io)));

  const seal = cli.command('seal').description('signed, encrypted kernel sets');
  seal.command('keygen').description('write an Ed25519 signing key pair and a kernel key')
    .requiredOption('--out <dir-or-prefix>', 'a directory, or a file name prefix')
    .option('--json', 'machine-readable output')
    .action(wrap((o: { json?: boolean }) => o.json === true, (o: { out: string; json?: boolean }) => sealKeygenCommand(o, io)));
  seal.command('write').description('seal a clear kernel set into a new directory and sign its manifest')
    .argument('<set>', 'the clear set: layout.json and kernel files')
    .requiredOption('--key <file>', 'the Ed25519 signing key (PKCS#8 PEM)')
    .requiredOption('--kernel-key <file>', 'the 32-byte kernel key (64 hex digits or raw)')
    .option('--out <dir>', 'where the sealed set goes (default SET.sealed; must not exist)')
    .option('--json', 'machine-readable output')
    .action(wrap((_s: string, o: { json?: boolean }) => o.json === true, (s: string, o: Parameters<typeof sealWriteCommand>[1]) => sealWriteCommand(s, o, io)));
  seal.command('check').description('check that the manifest lists exactly the set\'s files with their digests (no key needed)')
    .argument('<set>', 'a sealed set')
    .option('--json', 'machine-readable output')
    .action(wrap((_s: string, o: { json?: boolean }) => o.json === true, (s: string, o: { json?: boolean }) => sealCheckCommand(s, o, io)));
  seal.command('verify').description('verify the manifest\'s signature, then check the set')
    .argument('<set>', 'a sealed set')
    .requiredOption('--pub <file>', 'the release public key (SPKI PEM)')
    .option('--json', 'machine-readable output')
    .action(wrap((_s: string, o: { json?: boolean }) => o.json === true, (s: string, o: { pub: string; json?: boolean }) => sealVerifyCommand(s, o, io)));

  cli.command('demo')
    .description('run the demo program through the actors on the CPU target (npm start)')
    .option('--cache-dir <dir>', 'blob cache directory')
    .action(wrap((_o: { cacheDir?: string }) => false, (o: { cacheDir?: string }) => demoCommand(o, io)));

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
