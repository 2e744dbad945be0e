/**
 * repack-stamp.txt: who packed a cached directory, and from what. `key=value` lines: the converter
 * (package name and version, packer version), the architecture, and the source GGUF's identity: its
 * size, its mtime, and the sha256 of its first and last MiB. Hashing the ends, not the whole file,
 * keeps a cache hit cheap on a multi-GB model: the first MiB holds the header, metadata and tensor
 * table, and together with the size and mtime that catches any rewrite short of one that keeps the
 * size, restores the mtime and changes only the middle. A touched file (new mtime) counts as changed.
 * check: current (0), stale (1: another converter, architecture, source or tokenizer), or cannot tell
 * (2: no stamp, or one that does not parse).
 */
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { escapeControl } from '../../io/escape.js';
import { fileIdentity } from '../../io/fileRange.js';
import { readRegularFile } from '../../io/files.js';
import { converterIdentity } from './identity.js';

/** The stamp's file name inside a cached directory. */
export const STAMP_FILE = 'repack-stamp.txt';

/** The stamp format this build writes and reads. */
const STAMP_FORMAT = 1;

/** A GGUF file's identity. */
export interface SourceIdentity {
  readonly name: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** sha256 of the first MiB followed by the last MiB (the whole file when it is 2 MiB or less). */
  readonly sha256Ends: string;
}

/** What a stamp records. */
export interface Stamp {
  readonly converter: string;
  readonly converterVersion: string;
  readonly packerVersion: number;
  readonly architecture: string;
  readonly source: SourceIdentity;
  /** sha256 of the tokenizer.json copied in, or null when none was. */
  readonly tokenizerSha256: string | null;
}

/** The identity of a GGUF on disk (src/io/fileRange.ts's, which file-bound weights share). */
export function sourceIdentity(path: string): SourceIdentity {
  return { name: basename(path), ...fileIdentity(path) };
}

/** The sha256 of a file's bytes. */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readRegularFile(path, { what: 'tokenizer' })).digest('hex');
}

/** The stamp this build writes for a source. */
export function currentStamp(architecture: string, source: SourceIdentity, tokenizerSha256: string | null): Stamp {
  const id = converterIdentity();
  return { converter: id.name, converterVersion: id.version, packerVersion: id.packer, architecture, source, tokenizerSha256 };
}

/** The stamp as the text of repack-stamp.txt. */
export function formatStamp(s: Stamp): string {
  return [
    '# written by npu-offload gguf pack --cache; read by npu-offload gguf check-stamp',
    `stamp_format=${STAMP_FORMAT}`,
    `converter=${s.converter}`,
    `converter_version=${s.converterVersion}`,
    `packer_version=${s.packerVersion}`,
    `architecture=${s.architecture}`,
    `source_name=${s.source.name}`,
    `source_size=${s.source.size}`,
    `source_mtime_ms=${s.source.mtimeMs}`,
    `source_sha256_ends=${s.source.sha256Ends}`,
    `tokenizer_sha256=${s.tokenizerSha256 ?? 'none'}`,
    '',
  ].join('\n');
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Parses a stamp; null when it is garbled (a missing key, a bad value, another format). */
export function parseStamp(text: string): Stamp | null {
  const kv = new Map<string, string>();
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) continue;
    const eq = l.indexOf('=');
    if (eq <= 0 || kv.has(l.slice(0, eq))) return null;
    kv.set(l.slice(0, eq), l.slice(eq + 1));
  }
  const get = (k: string): string | null => kv.get(k) ?? null;
  const int = (k: string): number | null => { const v = get(k); return v !== null && /^\d{1,15}$/.test(v) ? Number(v) : null; };
  const mtime = Number(get('source_mtime_ms') ?? 'x');
  const [converter, converterVersion, architecture, name, sha, tok] =
    [get('converter'), get('converter_version'), get('architecture'), get('source_name'), get('source_sha256_ends'), get('tokenizer_sha256')];
  const packerVersion = int('packer_version');
  const size = int('source_size');
  if (get('stamp_format') !== String(STAMP_FORMAT) || converter === null || converterVersion === null || architecture === null || name === null ||
      packerVersion === null || size === null || !Number.isFinite(mtime) || sha === null || !HEX64.test(sha) ||
      tok === null || (tok !== 'none' && !HEX64.test(tok))) return null;
  return {
    converter, converterVersion, packerVersion, architecture,
    source: { name, size, mtimeMs: mtime, sha256Ends: sha }, tokenizerSha256: tok === 'none' ? null : tok,
  };
}

/** A stamp check's verdict: its status and, for stale or unknown, why. */
export interface StampVerdict {
  readonly status: 'current' | 'stale' | 'unknown';
  readonly reasons: readonly string[];
  readonly stamp: Stamp | null;
}

/** What a stamp is checked against beyond this build's converter: a source GGUF and a tokenizer. */
export interface StampExpectation {
  readonly architecture?: string;
  readonly source?: SourceIdentity;
  /** A tokenizer.json's sha256 to require; undefined leaves the tokenizer unchecked. */
  readonly tokenizerSha256?: string | null;
}

/** Checks a directory's stamp against this build and, when given, a source and tokenizer. */
export function checkStamp(dir: string, want: StampExpectation = {}): StampVerdict {
  let text: string;
  try { text = readRegularFile(join(dir, STAMP_FILE)).toString('utf8'); } catch {
    return { status: 'unknown', reasons: [`${join(dir, STAMP_FILE)} is missing or unreadable`], stamp: null };
  }
  const stamp = parseStamp(text);
  if (stamp === null) return { status: 'unknown', reasons: [`${join(dir, STAMP_FILE)} is garbled`], stamp: null };
  const id = converterIdentity();
  const reasons: string[] = [];
  const diff = (what: string, was: unknown, now: unknown): void => { if (was !== now) reasons.push(escapeControl(`${what}: stamp has ${String(was)}, now ${String(now)}`)); };
  diff('converter', stamp.converter, id.name);
  diff('converter version', stamp.converterVersion, id.version);
  diff('packer version', stamp.packerVersion, id.packer);
  if (want.architecture !== undefined) diff('architecture', stamp.architecture, want.architecture);
  if (want.source !== undefined) {
    diff('source size', stamp.source.size, want.source.size);
    diff('source mtime', stamp.source.mtimeMs, want.source.mtimeMs);
    diff('source sha256 of its ends', stamp.source.sha256Ends, want.source.sha256Ends);
  }
  if (want.tokenizerSha256 !== undefined) diff('tokenizer sha256', stamp.tokenizerSha256 ?? 'none', want.tokenizerSha256 ?? 'none');
  return { status: reasons.length === 0 ? 'current' : 'stale', reasons, stamp };
}
