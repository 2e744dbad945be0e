/**
 * The full identity of a compiled artifact and its cache key. Everything that can change the bytes a
 * compiler emits is part of the identity, so a key names exactly one artifact; the schema version is
 * hashed in too, so a change of the blob format never reads an old entry as a new one.
 */
import { createHash } from 'node:crypto';
import { CacheError } from '../errors/index.js';
import { canonicalJson } from './canonical.js';

/** The version of the blob format and key derivation; bump it when either changes. */
export const CACHE_SCHEMA_VERSION = 1;

/** What was compiled, completely: the device part, the compiler, its version and options, the region. */
export interface BlobIdentity {
  /** The device part, e.g. 'xdna2:aie2p'. */
  readonly device: string;
  readonly compiler: string;
  readonly compilerVersion: string;
  readonly options: Readonly<Record<string, unknown>>;
  /** The program region with every constant's value, as plain data (typed arrays allowed). */
  readonly region: unknown;
}

/** An identity in the two forms the cache needs: its canonical bytes and their key. */
export interface ResolvedIdentity {
  readonly key: string;
  /** The canonical JSON of `{ schema, identity }`, UTF-8; stored in every blob file. */
  readonly canonical: Buffer;
  readonly device: string;
  readonly compiler: string;
  readonly compilerVersion: string;
}

function requireString(id: BlobIdentity, field: 'device' | 'compiler' | 'compilerVersion'): string {
  const v: unknown = id[field];
  if (typeof v !== 'string' || v === '') throw new CacheError(`/${field}`, `the identity's ${field} must be a non-empty string`);
  return v;
}

/** Checks the identity's shape and computes its canonical bytes and key. */
export function resolveIdentity(id: BlobIdentity): ResolvedIdentity {
  const device = requireString(id, 'device');
  const compiler = requireString(id, 'compiler');
  const compilerVersion = requireString(id, 'compilerVersion');
  const options: unknown = id.options;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new CacheError('/options', "the identity's options must be an object");
  }
  // Spelled out rather than spreading `id`, so a stray extra field of the caller's object can neither
  // change the key nor be silently left out of it without anyone deciding so.
  // Composed by hand so a CacheError's JSON pointer is relative to the caller's identity object; the
  // keys are written in sorted order, as canonicalJson would.
  const body = canonicalJson({ device, compiler, compilerVersion, options, region: id.region });
  const text = `{"identity":${body},"schema":${CACHE_SCHEMA_VERSION}}`;
  const canonical = Buffer.from(text, 'utf8');
  return { key: keyOf(canonical), canonical, device, compiler, compilerVersion };
}

/** The sha256, in hex, of canonical identity bytes. */
export function keyOf(canonical: Uint8Array): string {
  return createHash('sha256').update(canonical).digest('hex');
}

/** The cache key of an identity: sha256 of its canonical JSON together with the schema version. */
export function identityKey(id: BlobIdentity): string {
  return resolveIdentity(id).key;
}
