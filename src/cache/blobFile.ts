/**
 * One blob file: a fixed header, the canonical identity, the artifact body. Every read checks all of
 * it, so a file that is truncated, damaged or another identity's is refused rather than returned.
 *
 * Layout (little-endian):
 *   0  magic            8 bytes  "NPUBLOB\0"
 *   8  schema version   u32
 *  12  identity length  u32      bytes of canonical identity JSON
 *  16  body length      u64
 *  24  key              32 bytes sha256 of the identity bytes (the entry's cache key)
 *  56  checksum         32 bytes sha256 of bytes [0, 56) then [88, end): header and body
 *  88  identity, then body
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { closeSync, fstatSync, lstatSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_SCHEMA_VERSION, keyOf } from './identity.js';

const MAGIC = Buffer.from('NPUBLOB\0', 'latin1');
/** Bytes before the identity. */
export const HEADER_BYTES = 88;
const CHECKSUM_AT = 56;

/**
 * @internal The calls that make a write durable, in one object so a test can observe their order or
 * inject a failure between them. Nothing outside tests replaces them.
 */
export const writerFs = {
  openSync: fs.openSync, writeSync: fs.writeSync, fsyncSync: fs.fsyncSync, closeSync: fs.closeSync, renameSync: fs.renameSync,
};

/** Why a blob file was refused. */
export type BlobDefect =
  | 'missing' | 'unreadable' | 'empty' | 'truncated' | 'bad-magic' | 'bad-version' | 'bad-length' | 'checksum' | 'foreign';

/** What identifies one version of a file on disk, so a reader removes only the file it judged. */
export interface FileStamp { readonly ino: number; readonly size: number; readonly mtimeMs: number }

/** The outcome of reading a blob file. */
export type BlobRead =
  | { readonly ok: true; readonly body: Buffer; readonly identity: Buffer; readonly fileSize: number; readonly stamp: FileStamp }
  | { readonly ok: false; readonly reason: BlobDefect; readonly stamp: FileStamp | null };

/** The file name of the blob of `key`. */
export function blobFileName(key: string): string {
  return `${key}.blob`;
}

/** The key a blob file name holds, or null for any other name. */
export function keyOfBlobName(name: string): string | null {
  const m = /^([0-9a-f]{64})\.blob$/.exec(name);
  return m ? m[1]! : null;
}

/** A temp file name that records its writer's pid, so a sweeper can tell an abandoned one. */
function tempFileName(key: string): string {
  return `${key}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/** The writer pid a temp file name records, or null if the name is not a temp file's. */
export function pidOfTempName(name: string): number | null {
  const m = /^[0-9a-f]{64}\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
  return m ? Number(m[1]) : null;
}

function checksum(file: Uint8Array): Buffer {
  return createHash('sha256')
    .update(file.subarray(0, CHECKSUM_AT))
    .update(file.subarray(HEADER_BYTES))
    .digest();
}

/** The complete bytes of a blob file for `key`, its canonical identity and the artifact body. */
export function encodeBlob(key: string, canonical: Uint8Array, body: Uint8Array): Buffer {
  const file = Buffer.alloc(HEADER_BYTES + canonical.byteLength + body.byteLength);
  MAGIC.copy(file, 0);
  file.writeUInt32LE(CACHE_SCHEMA_VERSION, 8);
  file.writeUInt32LE(canonical.byteLength, 12);
  file.writeBigUInt64LE(BigInt(body.byteLength), 16);
  Buffer.from(key, 'hex').copy(file, 24);
  file.set(canonical, HEADER_BYTES);
  file.set(body, HEADER_BYTES + canonical.byteLength);
  checksum(file).copy(file, CHECKSUM_AT);
  return file;
}

/**
 * Checks a whole blob file against the key it must hold; with `canonical`, the stored identity must be
 * those bytes, without it (verify, which has no identity) it must hash to the key. Returns the body.
 */
export function decodeBlob(file: Buffer, key: string, canonical?: Uint8Array): { ok: true; body: Buffer; identity: Buffer } | { ok: false; reason: BlobDefect } {
  if (file.length === 0) return { ok: false, reason: 'empty' };
  if (!file.subarray(0, MAGIC.length).equals(MAGIC.subarray(0, Math.min(MAGIC.length, file.length)))) return { ok: false, reason: 'bad-magic' };
  if (file.length < HEADER_BYTES) return { ok: false, reason: 'truncated' };
  if (file.readUInt32LE(8) !== CACHE_SCHEMA_VERSION) return { ok: false, reason: 'bad-version' };
  const identityLength = file.readUInt32LE(12);
  const bodyLength = file.readBigUInt64LE(16);
  const expected = BigInt(HEADER_BYTES + identityLength) + bodyLength;
  if (BigInt(file.length) < expected) return { ok: false, reason: 'truncated' };
  if (BigInt(file.length) > expected) return { ok: false, reason: 'bad-length' };
  if (!checksum(file).equals(file.subarray(CHECKSUM_AT, HEADER_BYTES))) return { ok: false, reason: 'checksum' };
  // The checksum proves the file is whole; these prove it is this identity's and not another's.
  const identity = file.subarray(HEADER_BYTES, HEADER_BYTES + identityLength);
  if (file.subarray(24, CHECKSUM_AT).toString('hex') !== key) return { ok: false, reason: 'foreign' };
  if (canonical ? !identity.equals(canonical) : keyOf(identity) !== key) return { ok: false, reason: 'foreign' };
  // A copy into memory of its own, not a view: a caller handing `body.buffer` to a device must not send
  // the header along, and Buffer.from() might place a small copy inside Node's shared pool.
  const start = HEADER_BYTES + identityLength;
  const body = Buffer.allocUnsafeSlow(file.length - start);
  file.copy(body, 0, start);
  return { ok: true, body, identity };
}

/** Reads and checks the blob file at `path`. */
export function readBlobFile(path: string, key: string, canonical?: Uint8Array): BlobRead {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    return { ok: false, reason: errno(e) === 'ENOENT' ? 'missing' : 'unreadable', stamp: null };
  }
  try {
    // Stamp and bytes come from the same open file, so they describe the same version of it.
    const st = fstatSync(fd);
    const stamp: FileStamp = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    let file: Buffer;
    try {
      file = readFileSync(fd);
    } catch {
      return { ok: false, reason: 'unreadable', stamp };
    }
    const r = decodeBlob(file, key, canonical);
    return r.ok ? { ok: true, body: r.body, identity: r.identity, fileSize: file.length, stamp } : { ok: false, reason: r.reason, stamp };
  } finally {
    closeSync(fd);
  }
}

/** The stamp of the file now at `path`, or null if there is none. */
export function stampOf(path: string): FileStamp | null {
  try {
    const st = lstatSync(path);
    return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

/** True if two stamps name the same version of a file (both null: both absent). */
export function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  if (a === null || b === null) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Writes `bytes` to a new temp file in `dir` and fsyncs it; returns its path. */
export function writeTemp(dir: string, key: string, bytes: Uint8Array): string {
  const tmp = join(dir, tempFileName(key));
  const fd = writerFs.openSync(tmp, 'wx', 0o644);
  try {
    let off = 0;
    while (off < bytes.byteLength) off += writerFs.writeSync(fd, bytes, off, bytes.byteLength - off);
    // Before the rename makes the name point at it: a crash after a rename of unsynced data could
    // leave a complete-looking name over a file whose blocks never reached the disk.
    writerFs.fsyncSync(fd);
  } catch (e) {
    writerFs.closeSync(fd);
    removeFile(tmp);
    throw e;
  }
  writerFs.closeSync(fd);
  return tmp;
}

/** Renames a written temp file over its final name and fsyncs the directory, so the rename is durable. */
export function commitTemp(dir: string, tmp: string, key: string): void {
  writerFs.renameSync(tmp, join(dir, blobFileName(key)));
  fsyncDir(dir);
}

/** Fsyncs a directory; where the platform cannot (Windows), the rename's own ordering is all we get. */
function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = writerFs.openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    writerFs.fsyncSync(fd);
  } catch (e) {
    const code = errno(e);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw e;
  } finally {
    writerFs.closeSync(fd);
  }
}

/**
 * Writes a complete blob file for `key` crash-safely (temp, fsync, rename, fsync dir) but no index row.
 * @internal The cache's put() calls the two halves itself; tests call this to leave a file with no row.
 */
export function writeBlobFile(dir: string, key: string, canonical: Uint8Array, body: Uint8Array): void {
  commitTemp(dir, writeTemp(dir, key, encodeBlob(key, canonical, body)), key);
}

/** Removes a file; true if it was there. */
export function removeFile(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (e) {
    if (errno(e) === 'ENOENT') return false;
    throw e;
  }
}

/** The errno code of a Node fs error, or undefined. */
function errno(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
