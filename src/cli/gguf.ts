/**
 * `npu-offload gguf info FILE` prints a GGUF's version, metadata and tensors, reading only its header;
 * `npu-offload gguf check-config FILE CONFIG` runs the declared-scale guard against a config.json:
 * exit 1 when a critical scale is dropped, 0 otherwise (warnings are printed, not fatal).
 * Malformed files and missing paths are thrown as typed errors for the caller's reporter.
 */
import type { Command } from 'commander';
import { InvalidInput } from '../errors.js';
import { openGguf } from '../model/gguf/reader.js';
import { scanDeclaredScales } from '../model/gguf/scaleGuard.js';
import type { GgufFile, GgufValue } from '../model/gguf/types.js';
import { readText } from './files.js';
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
  const text = readText(configPath);
  let config: unknown;
  try {
    config = JSON.parse(text) as unknown;
  } catch (e) {
    throw new InvalidInput('', `${configPath} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
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

/** main.ts's error wrapper: runs `fn`, reports a thrown error as JSON when `json(...)` says so. */
export type GgufWrap = <A extends unknown[]>(json: (...a: A) => boolean, fn: (...a: A) => number | Promise<number>) => (...a: A) => Promise<void>;

/** Adds `info` and `check-config` to the `gguf` command group. */
export function registerGgufCommands(gguf: Command, io: Io, wrap: GgufWrap): void {
  gguf.command('info')
    .description("print a GGUF's version, metadata and tensors (reads the header only)")
    .argument('<file>', 'GGUF file')
    .option('--all', 'print metadata arrays whole')
    .option('--json', 'machine-readable output')
    .action(wrap((_f: string, o: GgufInfoOptions) => o.json === true, (f: string, o: GgufInfoOptions) => ggufInfoCommand(f, o, io)));
  gguf.command('check-config')
    .description('fail when a config.json drops a critical scale the GGUF declares')
    .argument('<file>', 'GGUF file')
    .argument('<config>', 'config.json')
    .option('--json', 'machine-readable output')
    .action(wrap((_f: string, _c: string, o: GgufCheckConfigOptions) => o.json === true,
      (f: string, c: string, o: GgufCheckConfigOptions) => ggufCheckConfigCommand(f, c, o, io)));
}
