/**
 * `npu-offload cache ls|verify|gc|clear`: inspect and maintain the blob cache. Prints a table, or one
 * JSON document with `--json`. Exit codes: 0 done; 1 verify found (and removed) bad entries, or the
 * cache failed; 2 the command was called wrongly.
 */
import { BlobCache } from '../cache/blobCache.js';
import { defaultCacheDir } from '../cache/defaultDir.js';
import type { Entry } from '../cache/types.js';
import { EngineError, UsageError } from '../errors/index.js';

/** The subcommands of `cache`. */
export type CacheSubcommand = 'ls' | 'verify' | 'gc' | 'clear';

/** The flags of `cache`. */
export interface CacheCommandOptions {
  readonly cacheDir?: string;
  readonly json?: boolean;
  readonly maxBytes?: number;
}

/** Runs one `cache` subcommand, writing lines to `out`; returns the exit code. */
export function cacheCommand(sub: CacheSubcommand, opts: CacheCommandOptions, out: (line: string) => void): number {
  const json = opts.json === true;
  let cache: BlobCache;
  try {
    if (!['ls', 'verify', 'gc', 'clear'].includes(sub)) throw new UsageError(`unknown cache command '${String(sub)}': use ls, verify, gc or clear`);
    if (sub === 'gc' && (typeof opts.maxBytes !== 'number' || !(opts.maxBytes >= 0))) {
      throw new UsageError('cache gc needs --max-bytes, a number of bytes of at least 0');
    }
    cache = BlobCache.open(opts.cacheDir ?? defaultCacheDir());
  } catch (e) {
    return fail(e, json, out);
  }
  try {
    return run(cache, sub, opts, json, out);
  } catch (e) {
    return fail(e, json, out);
  } finally {
    cache.close();
  }
}

function run(cache: BlobCache, sub: CacheSubcommand, opts: CacheCommandOptions, json: boolean, out: (line: string) => void): number {
  switch (sub) {
    case 'ls': {
      const entries = cache.list();
      if (json) out(JSON.stringify({ dir: cache.dir, entries: entries.map(entryJson) }));
      else {
        table(entries, out);
        out(`${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}, ${bytes(entries.reduce((s, e) => s + e.size, 0))} in ${cache.dir}`);
      }
      return 0;
    }
    case 'verify': {
      const r = cache.verify();
      if (json) {
        out(JSON.stringify({
          dir: cache.dir,
          ok: r.ok.map(entryJson),
          bad: r.bad.map((b) => ({ ...entryJson(b.entry), reason: b.reason })),
          swept: r.swept,
        }));
      } else {
        for (const b of r.bad) out(`bad  ${b.entry.key.slice(0, 16)}  ${b.entry.device}  ${b.entry.compiler}  ${b.reason} (removed)`);
        for (const s of r.swept) out(`swept  ${s}`);
        out(`${r.ok.length} ok, ${r.bad.length} bad (removed), ${r.swept.length} stray files swept`);
      }
      return r.bad.length > 0 ? 1 : 0;
    }
    case 'gc':
    case 'clear': {
      const r = sub === 'gc' ? cache.gc({ maxBytes: opts.maxBytes ?? 0 }) : cache.clear();
      if (json) out(JSON.stringify({ dir: cache.dir, removed: r.removed.map(entryJson), freedBytes: r.freedBytes }));
      else {
        table(r.removed, out);
        out(`removed ${r.removed.length} ${r.removed.length === 1 ? 'entry' : 'entries'}, freed ${bytes(r.freedBytes)}`);
      }
      return 0;
    }
  }
}

function fail(e: unknown, json: boolean, out: (line: string) => void): number {
  if (!(e instanceof EngineError)) throw e;
  out(json ? JSON.stringify({ error: e.toWire() }) : `error: ${e.message}`);
  return e instanceof UsageError ? 2 : 1;
}

function entryJson(e: Entry): Record<string, unknown> {
  return { ...e, created: new Date(e.created).toISOString(), lastUsed: new Date(e.lastUsed).toISOString() };
}

/** A byte count as people read it: 512 B, 12.3 KiB, 4.0 MiB. */
function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]!}`;
}

function table(entries: readonly Entry[], out: (line: string) => void): void {
  if (entries.length === 0) return;
  const rows = [
    ['KEY', 'DEVICE', 'COMPILER', 'SIZE', 'CREATED', 'LAST USED'],
    ...entries.map((e) => [
      e.key.slice(0, 16), e.device, `${e.compiler} ${e.compilerVersion}`, bytes(e.size),
      new Date(e.created).toISOString(), new Date(e.lastUsed).toISOString(),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) out(r.map((cell, c) => (c === 3 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd());
}
