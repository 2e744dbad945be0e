/**
 * A file's identity without reading all of it, and exact reads of a byte range. The identity is the
 * file's size, its mtime and the sha256 of its first and last MiB (the whole file when it is 2 MiB or
 * less): hashing the ends, not the whole file, keeps it cheap on a multi-GB model, and together with the
 * size and mtime it catches any rewrite short of one that keeps the size, restores the mtime and changes
 * only the middle. The repack stamp (src/model/pack/stamp.ts) and file-bound weights both use it.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, readSync, type Stats } from 'node:fs';
import { EngineError } from '../errors/index.js';
import { fsReason, openRegularFile, type RegularFileOptions } from './files.js';

/** How much of each end of a file its identity hashes. */
const IDENTITY_END_BYTES = 1 << 20;

/** What identifies a file's contents, cheaply. */
export interface FileIdentity {
  readonly size: number;
  readonly mtimeMs: number;
  /** sha256 of the first MiB followed by the last MiB (the whole file when it is 2 MiB or less). */
  readonly sha256Ends: string;
}

function readExactly(fd: number, at: number, n: number, into: Uint8Array): Uint8Array {
  const buf = into.subarray(0, n);
  let got = 0;
  while (got < n) {
    const r = readSync(fd, buf, got, n - got, at + got);
    if (r === 0) break;
    got += r;
  }
  return buf.subarray(0, got);
}

function endsDigest(fd: number, size: number): string {
  const h = createHash('sha256');
  const buf = new Uint8Array(Math.min(size, IDENTITY_END_BYTES));
  const head = Math.min(size, IDENTITY_END_BYTES);
  h.update(readExactly(fd, 0, head, buf));
  const tail = Math.min(size - head, IDENTITY_END_BYTES);
  if (tail > 0) h.update(readExactly(fd, size - tail, tail, buf));
  return h.digest('hex');
}

function withFile<T>(path: string, opts: RegularFileOptions, f: (fd: number, st: Stats) => T): T {
  const fail = opts.fail;
  const { fd } = openRegularFile(path, opts);
  try {
    return f(fd, fstatSync(fd));
  } catch (e) {
    if (e instanceof EngineError || fail === undefined) throw e;
    throw fail(path, fsReason(e));
  } finally {
    closeSync(fd);
  }
}

/** The identity of a regular file (anything else is refused as `openRegularFile` refuses it). */
export function fileIdentity(path: string, opts: RegularFileOptions = {}): FileIdentity {
  return withFile(path, opts, (fd, st) => ({ size: st.size, mtimeMs: st.mtimeMs, sha256Ends: endsDigest(fd, st.size) }));
}

/** What readFileRange checks the file against before it reads: the size and mtime it had when identified. */
export interface RangeExpectation {
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Exactly `length` bytes of a regular file from `offset`. A file that no longer has the size and mtime
 * of `expect`, or that ends before the range does, is refused through `opts.fail`.
 */
export function readFileRange(path: string, offset: number, length: number, expect: RangeExpectation | null, opts: RegularFileOptions = {}): Uint8Array {
  const fail = opts.fail ?? ((p: string, reason: string) => new RangeError(`${p}: ${reason}`));
  return withFile(path, opts, (fd, st) => {
    if (expect !== null && (st.size !== expect.size || st.mtimeMs !== expect.mtimeMs)) {
      throw fail(path, `it changed since it was bound (size ${expect.size} -> ${st.size}, mtime ${expect.mtimeMs} -> ${st.mtimeMs}); bind it again`);
    }
    if (offset + length > st.size) throw fail(path, `bytes [${offset}, ${offset + length}) end past the file's ${st.size} bytes`);
    const got = readExactly(fd, offset, length, new Uint8Array(length));
    if (got.length !== length) throw fail(path, `it ended at byte ${offset + got.length}, inside the range [${offset}, ${offset + length})`);
    return got;
  });
}
