/**
 * What `gguf pack` may replace. `--force` once renamed OUTDIR aside and removed it whatever it held, so
 * packing `OUT/models/m.gguf` into `OUT` deleted the GGUF, the tokenizer and everything beside them.
 * Now: an OUTDIR that is, or holds, the GGUF or the tokenizer's directory is refused with or without
 * --force, and --force replaces only a directory that holds a previous pack's files and nothing else.
 * Paths are compared after resolving symlinks, so a link cannot smuggle the input inside OUTDIR.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { UsageError } from '../../errors/index.js';
import { fsReason } from '../../io/files.js';
import { STAMP_FILE } from './stamp.js';

/** Every file a pack writes into its directory; --force replaces a directory holding only these. */
export const PACK_FILES: readonly string[] = ['model.q4nx', 'config.json', 'tokenizer.json', 'tokenizer_config.json', STAMP_FILE];

/** The real path of `p`, or of its longest existing ancestor joined with the rest when `p` is absent. */
function realish(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realish(parent), basename(abs));
  }
}

/** True when `inner` is `outer` or lies below it. */
function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** What the pack reads, which its output directory must not hold. */
export interface PackInputs {
  readonly gguf: string;
  /** The tokenizer.json copied in, or null. */
  readonly tokenizer: string | null;
}

/** Refuses (UsageError) an output directory that is or holds the GGUF or the tokenizer's directory. */
export function refuseOwnInput(outDir: string, inputs: PackInputs): void {
  const out = realish(outDir);
  const held = [
    { what: 'the GGUF', path: inputs.gguf },
    ...(inputs.tokenizer === null ? [] : [{ what: 'the tokenizer directory', path: dirname(inputs.tokenizer) }]),
  ].filter((i) => within(realish(i.path), out));
  const first = held[0];
  if (first !== undefined) {
    throw new UsageError(`${outDir} holds ${first.what} ${first.path}: a pack into it would replace its own input; pick another OUTDIR`);
  }
}

/** What sits in `dir`: null when it is absent or empty, else its entries. */
function entries(dir: string): { name: string; file: boolean }[] | null {
  try {
    const list = readdirSync(dir, { withFileTypes: true });
    return list.length === 0 ? null : list.map((e) => ({ name: e.name, file: e.isFile() }));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ENOTDIR') throw new UsageError(`${dir} exists and is not a directory`);
    throw new UsageError(`cannot read the output directory ${dir}: ${fsReason(e)}`);
  }
}

/**
 * Refuses an output directory the pack may not replace: a non-empty one without `force`; with `force`,
 * one that holds anything but a previous pack's files (naming what would be removed). `slot`: the
 * directory is the repack cache's own slot, replaced whatever it holds.
 */
export function refuseToReplace(outDir: string, opts: { force: boolean; slot: boolean }): void {
  const have = entries(outDir);
  if (have === null || opts.slot) return;
  if (!opts.force) throw new UsageError(`${outDir} exists and is not empty (use --force to replace a previous pack)`);
  const foreign = have.filter((e) => !(e.file && PACK_FILES.includes(e.name))).map((e) => e.name).sort();
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 8).map((n) => JSON.stringify(n)).join(', ') + (foreign.length > 8 ? ` and ${foreign.length - 8} more` : '');
    throw new UsageError(`--force would remove ${outDir} with ${shown}, which gguf pack does not write; refusing (it replaces only a previous pack's ${PACK_FILES.join(', ')})`);
  }
  if (!have.some((e) => e.name === 'model.q4nx')) {
    throw new UsageError(`--force would remove ${outDir}, which holds no model.q4nx: it is not a previous pack; refusing`);
  }
}
