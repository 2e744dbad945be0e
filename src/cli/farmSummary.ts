/** What a farm run, local or queued, shares: finding the programs under a directory and the summary. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors/index.js';
import type { Io } from './output.js';
import { EXIT } from './output.js';

export interface FarmSummary {
  readonly programs: number;
  readonly hits: number;
  readonly compiled: number;
  readonly skipped: number;
  readonly refused: readonly { readonly file: string; readonly error: Record<string, unknown> }[];
  readonly ms: number;
}

/** Every .json file under `dir`, recursively, in name order. */
export function jsonFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const ent of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isFile() && ent.name.endsWith('.json')) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** False for a JSON file that is not a program (an inputs file); broken JSON counts as a program, to be refused. */
export function isProgramJson(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && (v as { format?: unknown }).format === 'program@1';
  } catch {
    return true; // broken JSON in a farm directory is reported, not skipped
  }
}

/** Throws UsageError unless `dir` is a directory. */
export function requireDir(dir: string): void {
  let isDir = false;
  try { isDir = statSync(dir).isDirectory(); } catch { /* reported below */ }
  if (!isDir) throw new UsageError(`${dir} is not a directory`);
}

/** Prints a farm's summary (one JSON document, or refusals and one line) and returns the exit code. */
export function reportFarm(summary: FarmSummary, target: string, opts: { json?: boolean; listRefusals: boolean; where?: string }, io: Io): number {
  if (opts.json) io.out(JSON.stringify(summary));
  else {
    if (opts.listRefusals) for (const r of summary.refused) io.err(`refused ${r.file}: [${String(r.error['code'])}]`);
    io.out(`farm: ${summary.programs} programs for ${target}: ${summary.hits} cache hits, ${summary.compiled} compiled, ${summary.refused.length} refused${summary.skipped ? `, ${summary.skipped} other files skipped` : ''}${opts.where ?? ''} in ${summary.ms} ms`);
  }
  return summary.refused.length > 0 ? EXIT.refused : EXIT.ok;
}

