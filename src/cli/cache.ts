/**
 * `npu-offload cache ls|verify|gc|clear`: inspect and maintain the blob cache. Prints a table, or one
 * JSON document with `--json`. Errors go to stderr as `error [Code]: message`, or to stdout as
 * `{ "error": {...} }` with `--json`, like every command. Exit codes: 0 done; 1 verify found damage
 * (bad entries, which it removed, or a damaged index, which it moved aside and rebuilt), or the cache
 * failed; 2 the command was called wrongly.
 *
 * verify, gc and clear move a damaged index aside and rebuild it from the blob files; ls only reads,
 * and refuses a damaged index with CacheUnavailable.
 */
import { BlobCache } from '../cache/blobCache.js';
import { defaultCacheDir } from '../cache/defaultDir.js';
import type { Entry } from '../cache/types.js';
import { UsageError } from '../errors/index.js';
import type { CliCommand } from './command.js';
import { cacheDirOption, intOption, jsonOption } from './options.js';
import { reportError, type Io } from './output.js';

/** The subcommands of `cache`. */
export type CacheSubcommand = 'ls' | 'verify' | 'gc' | 'clear';

/** The flags of `cache`. */
export interface CacheCommandOptions {
  readonly cacheDir?: string;
  readonly json?: boolean;
  readonly maxBytes?: number;
}

/** Runs one `cache` subcommand, writing to `io`; returns the exit code. */
export function cacheCommand(sub: CacheSubcommand, opts: CacheCommandOptions, io: Io): number {
  const json = opts.json === true;
  const out = (line: string) => io.out(line);
  let cache: BlobCache;
  try {
    if (!['ls', 'verify', 'gc', 'clear'].includes(sub)) throw new UsageError(`unknown cache command '${sub}': use ls, verify, gc or clear`);
    if (sub === 'gc' && (typeof opts.maxBytes !== 'number' || !(opts.maxBytes >= 0))) {
      throw new UsageError('cache gc needs --max-bytes, a number of bytes of at least 0');
    }
    // Re-indexed by the subcommand itself, so verify can list what it gave back.
    cache = BlobCache.open(opts.cacheDir ?? defaultCacheDir(), { repairIndex: sub !== 'ls', reindexNow: false });
  } catch (e) {
    return reportError(e, io, json);
  }
  try {
    return run(cache, sub, opts, json, out);
  } catch (e) {
    return reportError(e, io, json);
  } finally {
    cache.close();
  }
}

/** The repair open made, for `--json`, or nothing. */
function repairJson(cache: BlobCache): Record<string, unknown> {
  return cache.repairedIndex === null ? {} : { repairedIndex: cache.repairedIndex };
}

/** Tells a person that open moved a damaged index aside. */
function repairLine(cache: BlobCache, out: (line: string) => void): void {
  const r = cache.repairedIndex;
  if (r !== null) out(`damaged index (${r.reason}) moved aside to ${r.movedTo}; rebuilt from the blob files`);
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
          ...repairJson(cache),
          ok: r.ok.map(entryJson),
          bad: r.bad.map((b) => ({ ...entryJson(b.entry), reason: b.reason })),
          reindexed: r.reindexed.map(entryJson),
          swept: r.swept,
        }));
      } else {
        repairLine(cache, out);
        for (const b of r.bad) out(`bad  ${b.entry.key.slice(0, 16)}  ${b.entry.device}  ${b.entry.compiler}  ${b.reason} (removed)`);
        for (const e of r.reindexed) out(`re-indexed  ${e.key.slice(0, 16)}  ${e.device}  ${e.compiler}`);
        for (const s of r.swept) out(`swept  ${s}`);
        out(`${r.ok.length} ok, ${r.reindexed.length} re-indexed, ${r.bad.length} bad (removed), ${r.swept.length} stray files swept`);
      }
      return r.bad.length > 0 || cache.repairedIndex !== null ? 1 : 0;
    }
    case 'gc':
    case 'clear': {
      const r = sub === 'gc' ? cache.gc({ maxBytes: opts.maxBytes ?? 0 }) : cache.clear();
      if (json) out(JSON.stringify({ dir: cache.dir, ...repairJson(cache), removed: r.removed.map(entryJson), freedBytes: r.freedBytes }));
      else {
        repairLine(cache, out);
        table(r.removed, out);
        out(`removed ${r.removed.length} ${r.removed.length === 1 ? 'entry' : 'entries'}, freed ${bytes(r.freedBytes)}`);
      }
      return 0;
    }
  }
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

/** `cache ls|verify|gc|clear`. */
export const cache: CliCommand = {
  register(cli, { io, action }) {
    const group = cli.command('cache').description('inspect and maintain the blob cache');
    for (const [sub, what] of [['ls', 'list entries'], ['verify', 'check every entry, remove damaged ones'], ['gc', 'remove least recently used entries down to --max-bytes'], ['clear', 'remove every entry']] as const) {
      const c = group.command(sub).description(what).addOption(cacheDirOption()).addOption(jsonOption());
      if (sub === 'gc') c.addOption(intOption('--max-bytes <n>', 'size cap in bytes'));
      c.action(action((o: CacheCommandOptions) => cacheCommand(sub, o, io)));
    }
  },
};
