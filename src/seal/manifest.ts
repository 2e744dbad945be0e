/**
 * manifest.json: every file of a set but the manifest and its signature, by set-relative POSIX path,
 * with the sha256 and size of the bytes on disk (for a sealed kernel, its ciphertext).
 *
 * There is one byte form of a manifest and the parser accepts only that form: keys in a fixed order,
 * two-space indent, a final newline, files sorted by the UTF-8 bytes of their paths (code point order,
 * what `sorted()` gives in Python), no duplicates. The signature covers bytes, not meaning, so a
 * second spelling of the same manifest would be a second thing to sign and to reason about.
 */
import { createHash } from 'node:crypto';
import { messageOf, SealError } from '../errors/index.js';
import { escapeControl, quote } from '../io/escape.js';

/** The manifest's format tag. */
export const MANIFEST_FORMAT = 'npu-offload-seal-manifest@1';
/** The manifest's file name at the root of a set. */
export const MANIFEST_FILE = 'manifest.json';
/** The signature's file name at the root of a set. */
export const SIGNATURE_FILE = 'manifest.sig';

/** One file of a set as the manifest lists it. */
export interface ManifestEntry {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
}

/** A parsed manifest. */
export interface Manifest {
  readonly format: typeof MANIFEST_FORMAT;
  readonly files: readonly ManifestEntry[];
}

/** The lowercase hex sha256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Orders paths by their UTF-8 bytes, the manifest's one order. */
export function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Why `path` cannot name a file of a set, or null when it can. */
function badSetPath(path: string): string | null {
  if (path === '') return 'an empty path';
  if (path.includes('\\') || path.includes('\0')) return 'a backslash or NUL in the path';
  if (path.startsWith('/')) return 'an absolute path';
  if (path.split('/').some((s) => s === '' || s === '.' || s === '..')) return 'an empty, "." or ".." segment';
  if (path === MANIFEST_FILE || path === SIGNATURE_FILE) return `${path} cannot list itself`;
  return null;
}

/** The manifest of `files` (path and bytes), entries sorted. */
export function buildManifest(files: Iterable<{ path: string; bytes: Uint8Array }>): Manifest {
  const entries = [...files].map((f) => ({ path: f.path, sha256: sha256Hex(f.bytes), size: f.bytes.length }));
  entries.sort((a, b) => comparePaths(a.path, b.path));
  const m: Manifest = { format: MANIFEST_FORMAT, files: entries };
  checkEntries(m.files);
  return m;
}

/** The one byte form of a manifest: the bytes that are signed. */
export function serializeManifest(m: Manifest): Uint8Array {
  const doc = {
    format: m.format,
    files: m.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
  };
  return Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, 'utf8');
}

function bad(detail: string): SealError {
  return new SealError(MANIFEST_FILE, 'bad-manifest', detail);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function exactKeys(v: Record<string, unknown>, keys: readonly string[], where: string): void {
  const have = Object.keys(v);
  const extra = have.filter((k) => !keys.includes(k));
  const missing = keys.filter((k) => !have.includes(k));
  if (extra.length > 0 || missing.length > 0) {
    throw bad(`${where}: keys must be exactly ${keys.join(', ')}${extra.length ? `; unexpected ${extra.map(quote).join(', ')}` : ''}${missing.length ? `; missing ${missing.join(', ')}` : ''}`);
  }
}

function checkEntries(files: readonly ManifestEntry[]): void {
  files.forEach((f, i) => {
    const why = badSetPath(f.path);
    if (why !== null) throw bad(`files[${i}].path ${quote(f.path)}: ${why}`);
    if (i > 0 && comparePaths(files[i - 1]!.path, f.path) >= 0) {
      throw bad(`files[${i}].path ${quote(f.path)}: paths must be sorted and unique`);
    }
  });
}

/** Parses manifest bytes strictly: the canonical form only, else SealError 'bad-manifest'. */
export function parseManifest(bytes: Uint8Array): Manifest {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    throw bad(`not JSON: ${escapeControl(messageOf(e))}`);
  }
  if (!isRecord(doc)) throw bad('not a JSON object');
  exactKeys(doc, ['format', 'files'], '(root)');
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- JSON.stringify(undefined) is undefined, whatever its type says
  if (doc['format'] !== MANIFEST_FORMAT) throw bad(`format ${escapeControl(String(JSON.stringify(doc['format'])))}, expected ${JSON.stringify(MANIFEST_FORMAT)}`);
  const raw = doc['files'];
  if (!Array.isArray(raw)) throw bad('files is not an array');
  const files = raw.map((f: unknown, i): ManifestEntry => {
    if (!isRecord(f)) throw bad(`files[${i}] is not an object`);
    exactKeys(f, ['path', 'sha256', 'size'], `files[${i}]`);
    const { path, sha256, size } = f;
    if (typeof path !== 'string') throw bad(`files[${i}].path is not a string`);
    if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) throw bad(`files[${i}].sha256 is not 64 lowercase hex digits`);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw bad(`files[${i}].size is not a whole number of bytes`);
    return { path, sha256, size };
  });
  const m: Manifest = { format: MANIFEST_FORMAT, files };
  checkEntries(files);
  if (!Buffer.from(serializeManifest(m)).equals(Buffer.from(bytes))) {
    throw bad('not in canonical form (key order, two-space indent, final newline)');
  }
  return m;
}
