/**
 * Reading the files a user names. A reader that trusts a path hangs on a FIFO (open blocks until a
 * writer comes), reads /dev/zero without end, or loads a 40 GB file into memory before it looks at a
 * byte. So every user file is checked with stat before it is opened, opened non-blocking, checked again
 * with fstat on the open descriptor (the path may have been swapped in between), and a file read whole
 * is refused past a size bound (`file-bytes`, docs/LIMITS.md) before any of it is read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { EngineError, InvalidOptions, messageOf, ResourceLimit, UsageError } from '../errors/index.js';

/** Builds the typed error for a path that cannot be used, from the reason in words. */
export type FileFailure = (path: string, reason: string) => EngineError;

/** The default bound on a file read whole (a program, an inputs file, a key): 256 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 256 * 2 ** 20;

/** The environment variable that raises (or lowers) the bound on files read whole. */
const MAX_FILE_BYTES_ENV = 'NPU_OFFLOAD_MAX_FILE_BYTES';

const WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EEXIST: 'it already exists',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'the name is too long',
  ENXIO: 'no such device (a socket or an absent device)',
  EBUSY: 'the resource is busy',
  EMFILE: 'too many open files',
  EIO: 'an input/output error',
};

/** A file-system failure in words, with its errno code: `permission denied (EACCES)`. */
export function fsReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return messageOf(e);
  return `${WORDS[code] ?? 'the system refused'} (${code})`;
}

/** What kind of file `st` is, for a message: "a FIFO (named pipe)", "a character device", ... */
export function fileKind(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** True when `path` names a regular file (following symlinks); false when it is absent or anything else. */
export function isRegularFile(path: string): boolean {
  try { return statSync(path, { throwIfNoEntry: false })?.isFile() === true; } catch { return false; }
}

/** The default failure: a UsageError (exit 2 in the CLI) naming what was read and the path. */
const usage = (what: string): FileFailure => (path, reason) => new UsageError(`cannot read ${what} ${path}: ${reason}`);

/** How a reader names the file and reports a failure. */
export interface RegularFileOptions {
  /** What the file is, for messages ("program", "--inputs", "key file"); default "file". */
  readonly what?: string;
  /** The typed error for a path that cannot be read; default UsageError. */
  readonly fail?: FileFailure;
}

/** An open regular file: its descriptor (close it) and its size when opened. */
export interface OpenFile {
  readonly fd: number;
  readonly size: number;
}

/** Opens `path` for reading if it is a regular file, without ever blocking on a FIFO or a device. */
export function openRegularFile(path: string, opts: RegularFileOptions = {}): OpenFile {
  const fail = opts.fail ?? usage(opts.what ?? 'file');
  let st: Stats;
  try { st = statSync(path); } catch (e) { throw fail(path, fsReason(e)); }
  if (!st.isFile()) throw fail(path, `it is ${fileKind(st)}, not a regular file`);
  let fd: number;
  // O_NONBLOCK: should the path become a FIFO after the stat, open returns at once instead of waiting.
  try { fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)); } catch (e) { throw fail(path, fsReason(e)); }
  try {
    const now = fstatSync(fd);
    if (!now.isFile()) throw fail(path, `it is ${fileKind(now)}, not a regular file`);
    return { fd, size: now.size };
  } catch (e) {
    closeSync(fd);
    throw e instanceof EngineError ? e : fail(path, fsReason(e));
  }
}

/** The bound on files read whole: $NPU_OFFLOAD_MAX_FILE_BYTES when set, else 256 MiB. */
export function maxFileBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[MAX_FILE_BYTES_ENV];
  if (raw === undefined || raw === '') return DEFAULT_MAX_FILE_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || raw.trim() !== raw) {
    throw new InvalidOptions(MAX_FILE_BYTES_ENV, `a whole number of bytes of at least 1, not ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Options of readRegularFile. */
export interface ReadFileOptions extends RegularFileOptions {
  /** The largest file read (default maxFileBytes()); a larger one is ResourceLimit `file-bytes`. */
  readonly maxBytes?: number;
}

/** The bytes of a regular file of at most `maxBytes`; anything else is refused, typed, naming the path. */
export function readRegularFile(path: string, opts: ReadFileOptions = {}): Buffer {
  const max = opts.maxBytes ?? maxFileBytes();
  const fail = opts.fail ?? usage(opts.what ?? 'file');
  const { fd, size } = openRegularFile(path, opts);
  try {
    if (size > max) throw new ResourceLimit('file-bytes', size, max, path);
    // One byte more than the size the stat gave: a file that grows while it is read is noticed.
    const buf = Buffer.alloc(size + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
      if (got > size) throw fail(path, 'it grew while it was read');
    }
    return buf.subarray(0, got);
  } catch (e) {
    throw e instanceof EngineError ? e : fail(path, fsReason(e));
  } finally {
    closeSync(fd);
  }
}
