/**
 * `npu-offload gguf info FILE` prints a GGUF's version, metadata and tensors, reading only its header;
 * `npu-offload gguf check-config FILE CONFIG` runs the declared-scale guard against a config.json:
 * exit 1 when a critical scale is dropped, 0 otherwise (warnings are printed, not fatal).
 * `gguf pack`, `gguf verify` and `gguf check-stamp` convert a GGUF (qwen3, llama, qwen2, phi3, minicpm, gemma3) into a Q4NX model directory,
 * check it, and check a cached directory's stamp (docs/MODELS.md).
 * Malformed files and missing paths are thrown as typed errors for the caller's reporter.
 */
import type { Command } from 'commander';
import { InvalidInput, messageOf, UsageError } from '../errors/index.js';
import { openGguf } from '../model/gguf/reader.js';
import { scanDeclaredScales } from '../model/gguf/scaleGuard.js';
import type { GgufFile, GgufValue } from '../model/gguf/types.js';
import { architectureOf } from '../model/pack/config.js';
import { packCached } from '../model/pack/cache.js';
import { packGguf, type PackProgress } from '../model/pack/pack.js';
import { verifyLines } from '../model/pack/report.js';
import { checkStamp, sourceIdentity } from '../model/pack/stamp.js';
import { DEFAULT_MIN_COSINE, verifyPack } from '../model/pack/verify.js';
import { checkJsonTextDepth, jsonErrorAt } from '../ir/jsonText.js';
import { escapeControl } from '../io/escape.js';
import { wantsJson, type CliCommand, type CliContext } from './command.js';
import { readText } from './files.js';
import { jsonOption } from './options.js';
import { createProgress } from './progress.js';
import { EXIT, type Io } from './output.js';

/** The flags of `gguf info`. */
export interface GgufInfoOptions {
  readonly json?: boolean;
  /** Print arrays whole instead of their first items. */
  readonly all?: boolean;
}

/** The flags of `gguf check-config`. */
export interface GgufCheckConfigOptions { readonly json?: boolean }

const SHOWN_ITEMS = 8;

function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

/** A metadata value for output: arrays cut to their first items unless `all`. */
function summary(v: GgufValue, all: boolean): unknown {
  if (v.type !== 'array') return jsonSafe(v.value);
  const items = all ? v.value : v.value.slice(0, SHOWN_ITEMS);
  const shown = (items as readonly unknown[]).map((x) => (typeof x === 'object' && x !== null ? summary(x as GgufValue, all) : jsonSafe(x)));
  return { itemType: v.itemType, length: v.value.length, items: shown };
}

function human(v: GgufValue, all: boolean): string {
  if (v.type === 'string') return JSON.stringify(v.value);
  if (v.type !== 'array') return String(v.value);
  const items = (all ? v.value : v.value.slice(0, SHOWN_ITEMS)) as readonly unknown[];
  const shown = items.map((x) => (typeof x === 'object' && x !== null ? human(x as GgufValue, all) : typeof x === 'string' ? JSON.stringify(x) : String(x)));
  const more = v.value.length > items.length ? `, … (${v.value.length} items)` : '';
  return `[${shown.join(', ')}${more}]`;
}

function withFile<T>(path: string, fn: (f: GgufFile) => T): T {
  const f = openGguf(path);
  try { return fn(f); } finally { f.close(); }
}

/** Prints a GGUF's header: version, alignment, metadata and tensors; returns the exit code. */
export function ggufInfoCommand(path: string, opts: GgufInfoOptions, io: Io): number {
  const all = opts.all === true;
  return withFile(path, (f) => {
    if (opts.json) {
      io.out(JSON.stringify({
        version: f.version, alignment: f.alignment, dataOffset: f.dataOffset, size: f.size,
        metadata: Object.fromEntries([...f.metadata].map(([k, v]) => [k, { type: v.type, value: summary(v, all) }])),
        tensors: f.tensors.map((t) => ({ name: t.name, type: t.typeName, dims: t.dims, offset: t.offset, bytes: t.byteSize })),
      }));
      return EXIT.ok;
    }
    io.out(`GGUF v${f.version}, ${f.metadata.size} metadata keys, ${f.tensors.length} tensors, alignment ${f.alignment}, data at byte ${f.dataOffset} of ${f.size}`);
    for (const [k, v] of f.metadata) io.out(`  ${k}: ${v.type === 'array' ? `${v.itemType}[]` : v.type} = ${human(v, all)}`);
    if (f.tensors.length === 0) return EXIT.ok;
    const rows = [['NAME', 'TYPE', 'SHAPE', 'BYTES', 'OFFSET'],
      ...f.tensors.map((t) => [t.name, t.typeName, `[${t.dims.join(', ')}]`, String(t.byteSize), String(t.offset)])];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows) io.out(r.map((cell, c) => (c >= 3 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd());
    return EXIT.ok;
  });
}

/** Checks that a config.json carries the GGUF's declared scales; exit 1 on a fatal finding. */
export function ggufCheckConfigCommand(ggufPath: string, configPath: string, opts: GgufCheckConfigOptions, io: Io): number {
  const text = readText(configPath, 'config');
  checkJsonTextDepth(text, configPath);
  let config: unknown;
  try {
    config = JSON.parse(text) as unknown;
  } catch (e) {
    throw new InvalidInput('', `${configPath} is not JSON: ${jsonErrorAt(text, messageOf(e))}`);
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new InvalidInput('', `${configPath} is not a JSON object`);
  const findings = withFile(ggufPath, (f) => scanDeclaredScales(f.metadata, config));
  const ok = findings.fatal.length === 0;
  if (opts.json) io.out(JSON.stringify({ ok, fatal: findings.fatal, warnings: findings.warnings }));
  else {
    for (const m of findings.fatal) io.out(`fatal: ${m}`);
    for (const m of findings.warnings) io.out(`warning: ${m}`);
    io.out(ok
      ? `ok: ${configPath} carries every critical declared scale (${findings.warnings.length} warnings)`
      : `failed: ${configPath} drops ${findings.fatal.length} critical declared scale${findings.fatal.length === 1 ? '' : 's'}`);
  }
  return ok ? EXIT.ok : EXIT.refused;
}

/** The flags of `gguf pack`. */
interface GgufPackOptions {
  readonly tokenizer?: string;
  readonly cache?: boolean;
  readonly force?: boolean;
  readonly json?: boolean;
  /** Show the progress bar (default: when stdout and stderr are terminals and not --json). */
  readonly progress?: boolean;
}

/** The flags of `gguf verify`. */
interface GgufVerifyOptions { readonly json?: boolean; readonly minCosine?: string | number; readonly progress?: boolean }

/** The flags of `gguf check-stamp`. */
interface GgufCheckStampOptions { readonly gguf?: string; readonly json?: boolean }

const MB = 2 ** 20;

/** A bar over source bytes on stderr (src/cli/progress.ts), or null when it is not wanted. */
function progressBar(label: string, opts: { json?: boolean; progress?: boolean }): { onProgress: (p: PackProgress) => void; stop: () => void } | null {
  const bar = createProgress(`${label} {bar} {percentage}% | {mb}/{totalMb} MB | {index}/{count} {tensor}`, opts);
  if (!bar.shown) return null;
  return {
    onProgress: (p) => bar.update(p.doneBytes, p.totalBytes, { mb: (p.doneBytes / MB).toFixed(1), totalMb: (p.totalBytes / MB).toFixed(1), index: p.tensorIndex + 1, count: p.tensorCount, tensor: escapeControl(p.tensor) }),
    stop: () => bar.stop(),
  };
}

/** Packs a GGUF into OUTDIR, or into its cache slot with --cache; exit 1 on a refusal. */
function ggufPackCommand(path: string, outDir: string | undefined, opts: GgufPackOptions, io: Io): number {
  if ((outDir === undefined) === (opts.cache !== true)) throw new UsageError('gguf pack needs an output directory or --cache, not both');
  if (opts.cache !== true && opts.tokenizer === undefined) throw new UsageError('gguf pack OUTDIR needs --tokenizer DIR (the directory holding tokenizer.json)');
  const bar = progressBar('pack', opts);
  const progress = bar === null ? {} : { onProgress: bar.onProgress };
  const tok = opts.tokenizer === undefined ? {} : { tokenizer: opts.tokenizer };
  try {
    if (opts.cache === true) {
      const r = packCached(path, { ...tok, ...progress });
      bar?.stop();
      if (!opts.json) for (const w of r.warnings) io.err(`warning: ${w}`);
      if (opts.json) io.out(JSON.stringify({ dir: r.dir, hit: r.hit, reasons: r.reasons, pack: r.pack, warnings: r.warnings }));
      else if (r.hit) io.out(`cache hit: ${r.dir}`);
      else io.out(`cache ${r.reasons[0] === 'not cached yet' ? 'miss' : `rebuild (${r.reasons.join('; ')})`}: packed ${r.pack!.tensors} tensors into ${r.dir} in ${r.pack!.ms} ms`);
      return EXIT.ok;
    }
    const r = packGguf(path, outDir!, { ...tok, ...progress, force: opts.force === true });
    bar?.stop();
    if (opts.json) io.out(JSON.stringify(r));
    else {
      for (const w of r.warnings) io.err(`warning: ${w}`);
      io.out(`packed ${r.tensors} tensors (${(r.sourceBytes / MB).toFixed(1)} MB of GGUF, ${(r.outputBytes / MB).toFixed(1)} MB of model.q4nx) into ${r.dir} in ${r.ms} ms`);
    }
    return EXIT.ok;
  } finally {
    bar?.stop();
  }
}

/** Verifies a packed directory against its GGUF; exit 0 when every tensor passes, 1 otherwise. */
function ggufVerifyCommand(path: string, dir: string, opts: GgufVerifyOptions, io: Io): number {
  const minCosine = opts.minCosine === undefined ? DEFAULT_MIN_COSINE : Number(opts.minCosine);
  if (!(minCosine >= -1 && minCosine <= 1)) throw new UsageError(`--min-cosine must be a number in [-1, 1], got ${String(opts.minCosine)}`);
  const bar = progressBar('verify', opts);
  let report;
  try {
    report = verifyPack(path, dir, { minCosine, ...(bar === null ? {} : { onProgress: bar.onProgress }) });
  } finally {
    bar?.stop();
  }
  if (opts.json) io.out(JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)));
  else for (const l of verifyLines(report)) io.out(l);
  return report.ok ? EXIT.ok : EXIT.refused;
}

/** Checks a cached directory's repack-stamp.txt: exit 0 current, 1 stale, 2 cannot tell. */
function ggufCheckStampCommand(dir: string, opts: GgufCheckStampOptions, io: Io): number {
  let want = {};
  if (opts.gguf !== undefined) {
    const f = openGguf(opts.gguf);
    try { want = { architecture: architectureOf(f.metadata), source: sourceIdentity(opts.gguf) }; } finally { f.close(); }
  }
  const v = checkStamp(dir, want);
  if (opts.json) io.out(JSON.stringify({ status: v.status, reasons: v.reasons, stamp: v.stamp }));
  else io.out(v.status === 'current' ? `current: ${dir}` : `${v.status === 'stale' ? 'stale' : 'cannot tell'}: ${v.reasons.join('; ')}`);
  return v.status === 'current' ? EXIT.ok : v.status === 'stale' ? EXIT.refused : 2;
}

/** A caller's own error wrapper: runs `fn`, reports a thrown error as JSON when `json(...)` says so. */
export type GgufWrap = <A extends unknown[]>(json: (...a: A) => boolean, fn: (...a: A) => number | Promise<number>) => (...a: A) => Promise<void>;

/** Adds the `gguf` subcommands to `gguf` under a caller's own wrapper, which is told when JSON was asked for. */
export function registerGgufCommands(gguf: Command, io: Io, wrap: GgufWrap): void {
  registerSubcommands(gguf, { io, action: (body) => wrap((...a) => wantsJson(a), body) });
}

/** `gguf info|check-config|pack|verify|check-stamp`. */
export const gguf: CliCommand = {
  register(cli, ctx) {
    registerSubcommands(cli.command('gguf').description('GGUF model files'), ctx);
  },
};

function registerSubcommands(group: Command, { io, action }: CliContext): void {
  group.command('info')
    .description("print a GGUF's version, metadata and tensors (reads the header only)")
    .argument('<file>', 'GGUF file')
    .option('--all', 'print metadata arrays whole')
    .addOption(jsonOption())
    .action(action((f: string, o: GgufInfoOptions) => ggufInfoCommand(f, o, io)));
  group.command('check-config')
    .description('fail when a config.json drops a critical scale the GGUF declares')
    .argument('<file>', 'GGUF file')
    .argument('<config>', 'config.json')
    .addOption(jsonOption())
    .action(action((f: string, c: string, o: GgufCheckConfigOptions) => ggufCheckConfigCommand(f, c, o, io)));
  group.command('pack')
    .description('convert a GGUF (qwen3, llama, qwen2, phi3, minicpm, gemma3) into a Q4NX model directory (model.q4nx, config.json, tokenizer.json)')
    .argument('<file>', 'GGUF file')
    .argument('[outdir]', 'the model directory to write (or use --cache)')
    .option('--tokenizer <dir>', 'directory holding the tokenizer.json to copy')
    .option('--cache', 'pack into the repack cache (reused while its stamp and config scan pass)')
    .option('--force', 'replace a previous pack in OUTDIR (refused when OUTDIR holds anything else)')
    .addOption(jsonOption())
    .action(action((f: string, d: string | undefined, o: GgufPackOptions) => ggufPackCommand(f, d, o, io)));
  group.command('verify')
    .description('decode every tensor of a packed directory and compare it with the GGUF')
    .argument('<file>', 'GGUF file')
    .argument('<dir>', 'model directory written by gguf pack')
    .option('--min-cosine <x>', `cosine a requantized tensor must reach (default ${DEFAULT_MIN_COSINE})`)
    .addOption(jsonOption())
    .action(action((f: string, d: string, o: GgufVerifyOptions) => ggufVerifyCommand(f, d, o, io)));
  group.command('check-stamp')
    .description("check a cached directory's repack-stamp.txt: exit 0 current, 1 stale, 2 cannot tell")
    .argument('<dir>', 'cached model directory')
    .option('--gguf <file>', 'also require the stamp to name this GGUF as it is now')
    .addOption(jsonOption())
    .action(action((d: string, o: GgufCheckStampOptions) => ggufCheckStampCommand(d, o, io)));
}
