/**
 * Creating the directories and files the product writes, with typed errors that name the path. One
 * helper creates every output directory: Node 20's `mkdirSync(p, { recursive: true })` loops forever
 * where the kernel answers ENOENT for a child of a directory that exists (anything under /proc), so the
 * path is walked here one component at a time and any component that cannot be made stops the walk.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, parse, resolve, sep } from 'node:path';
import { UsageError } from '../errors/index.js';
import { fsReason, type FileFailure } from './files.js';

const cannotCreate: FileFailure = (path, reason) => new UsageError(`cannot create directory ${path}: ${reason}`);
const cannotWrite: FileFailure = (path, reason) => new UsageError(`cannot write ${path}: ${reason}`);

function isDirectory(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** Creates directory `path` and its missing parents; a path it cannot create is `fail`'s error (UsageError). */
export function ensureDir(path: string, fail: FileFailure = cannotCreate): void {
  const abs = resolve(path);
  const { root } = parse(abs);
  let at = root;
  for (const part of abs.slice(root.length).split(sep).filter((s) => s !== '')) {
    at = join(at, part);
    let st;
    try { st = statSync(at, { throwIfNoEntry: false }); } catch (e) { throw fail(path, `${at}: ${fsReason(e)}`); }
    if (st !== undefined) {
      if (!st.isDirectory()) throw fail(path, `${at} exists and is not a directory (ENOTDIR)`);
      continue;
    }
    try {
      mkdirSync(at);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && isDirectory(at)) continue; // another process made it first
      // ENOENT for a child of a directory that exists: a file system that makes no directories (/proc).
      const why = code === 'ENOENT' ? 'the file system does not allow creating it (ENOENT)' : fsReason(e);
      throw fail(path, `cannot create ${at}: ${why}`);
    }
  }
}

/** Options of writeOutputFile. */
export interface WriteOptions {
  /** File mode of a new file (default 0o666 less the umask). */
  readonly mode?: number;
  /** Refuse to replace an existing file (open with O_EXCL). */
  readonly exclusive?: boolean;
  /** The typed error for a file that cannot be written; default UsageError. */
  readonly fail?: FileFailure;
}

/** Writes `data` to `path`; a failure (EACCES, EROFS, ENOTDIR, ENOSPC) is `fail`'s typed error naming it. */
export function writeOutputFile(path: string, data: string | Uint8Array, opts: WriteOptions = {}): void {
  try {
    writeFileSync(path, data, { flag: opts.exclusive === true ? 'wx' : 'w', ...(opts.mode !== undefined ? { mode: opts.mode } : {}) });
  } catch (e) {
    throw (opts.fail ?? cannotWrite)(path, fsReason(e));
  }
}
