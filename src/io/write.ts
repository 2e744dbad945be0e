/**
 * Creating the directories and files the product writes, with typed errors that name the path. One
 * helper creates every output directory: Node 20's `mkdirSync(p, { recursive: true })` loops forever
 * where the kernel answers ENOENT for a child of a directory that exists (anything under /proc), so the
 * path is walked here one component at a time and any component that cannot be made stops the walk.
 */
import * as fs from 'node:fs';
import { mkdirSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, parse, resolve, sep } from 'node:path';
import { EngineError, UsageError, WriteFailed } from '../errors/index.js';
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

/** The file-system calls of writeOutputFile: the real ones, or a test's that fail like a full disk. */
export interface WriterFs {
  readonly openSync: (path: string, flags: string, mode?: number) => number;
  readonly writeSync: (fd: number, data: Uint8Array, offset: number, length: number) => number;
  readonly fsyncSync: (fd: number) => void;
  readonly closeSync: (fd: number) => void;
  readonly renameSync: (from: string, to: string) => void;
  readonly linkSync: (from: string, to: string) => void;
  readonly unlinkSync: (path: string) => void;
}

const realFs: WriterFs = {
  openSync: (p, f, m) => fs.openSync(p, f, m), writeSync: (fd, d, o, l) => fs.writeSync(fd, d, o, l),
  fsyncSync: (fd) => { fs.fsyncSync(fd); }, closeSync: (fd) => { fs.closeSync(fd); },
  renameSync: (a, b) => { fs.renameSync(a, b); }, linkSync: (a, b) => { fs.linkSync(a, b); }, unlinkSync: (p) => { fs.unlinkSync(p); },
};

/** Options of writeOutputFile. */
export interface WriteOptions {
  /** File mode of a new file (default 0o666 less the umask). */
  readonly mode?: number;
  /** Refuse to replace an existing file (open with O_EXCL). */
  readonly exclusive?: boolean;
  /** The typed error for a file that cannot be written; default UsageError. */
  readonly fail?: FileFailure;
  /** @internal The file-system calls (tests inject a full disk). */
  readonly fs?: WriterFs;
}

// Causes in the machine, not in the path the user gave: no other path would have done better.
const MACHINE_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EFBIG']);

/** The typed error of a failed write: WriteFailed for a full disk or a failed device, else `fail`'s. */
export function writeError(path: string, e: unknown, fail: FileFailure = cannotWrite): EngineError {
  if (e instanceof EngineError) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && MACHINE_CODES.has(code) ? new WriteFailed(path, fsReason(e)) : fail(path, fsReason(e));
}

// What link(2) answers where the file system has no hard links.
const NO_LINKS: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Writes all of `bytes` at `fd`, flushes them to the disk (fsync) and closes it, also on a failure. */
function writeAllAndClose(f: WriterFs, fd: number, bytes: Uint8Array): void {
  try {
    let off = 0;
    while (off < bytes.byteLength) off += f.writeSync(fd, bytes, off, bytes.byteLength - off);
    f.fsyncSync(fd);
  } finally {
    f.closeSync(fd);
  }
}

/** Writes `bytes` to a new file `path` (O_EXCL), fsynced; on a failure after creating it, removes it. */
function writeExclusive(f: WriterFs, path: string, bytes: Uint8Array, mode: number): void {
  const fd = f.openSync(path, 'wx', mode);
  try {
    writeAllAndClose(f, fd, bytes);
  } catch (e) {
    try { f.unlinkSync(path); } catch { /* already gone */ }
    throw e;
  }
}

/** A temporary name beside `path`, hidden, unique to this process and call. */
function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Writes `data` to `path` atomically: into a temporary file in the same directory, flushed to the disk
 * (fsync), then renamed over `path` (linked, when `exclusive`, so an existing file is never replaced).
 * A reader sees the old file or the whole new one, never a part; on any failure the temporary file is
 * removed and `path` is as it was. A full disk (ENOSPC, EDQUOT) or a failed device (EIO) is WriteFailed;
 * a path that cannot be written (EACCES, EROFS, ENOTDIR, EEXIST) is `fail`'s typed error; both name it.
 */
export function writeOutputFile(path: string, data: string | Uint8Array, opts: WriteOptions = {}): void {
  const f = opts.fs ?? realFs;
  const fail = opts.fail ?? cannotWrite;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const tmp = tempBeside(path);
  let fd: number;
  try { fd = f.openSync(tmp, 'wx', opts.mode ?? 0o666); } catch (e) { throw writeError(path, e, fail); }
  let created = true;
  try {
    writeAllAndClose(f, fd, bytes);
    if (opts.exclusive === true) {
      try {
        f.linkSync(tmp, path);
      } catch (e) {
        if (!NO_LINKS.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
        // A file system without hard links (FAT, some network mounts): O_EXCL on the name itself keeps
        // "never replace"; a failure part way removes what this call created there.
        writeExclusive(f, path, bytes, opts.mode ?? 0o666);
      }
      f.unlinkSync(tmp);
    } else {
      f.renameSync(tmp, path);
    }
    created = false;
  } catch (e) {
    throw writeError(path, e, fail);
  } finally {
    if (created) { try { f.unlinkSync(tmp); } catch { /* already gone */ } }
  }
}
