/**
 * Sealed kernel sets: sealing a clear set into a new directory, checking it against its manifest,
 * verifying the manifest's signature, and loading it into memory.
 *
 * The chain of trust: the release public key verifies manifest.sig over manifest.json's exact bytes;
 * the manifest's sha256 and size cover every other file, sealed kernels as ciphertext; the kernel key
 * opens the kernels. Sealing alone is confidentiality only — a set sealed with another key, or another
 * set that also decrypts, would load just the same — which is why a loader that cares passes the
 * public key. Decrypted kernels exist only in memory; this module never writes clear kernel bytes.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { messageOf, SealError, UsageError, WriteFailed } from '../errors/index.js';
import { escapeControl, quote } from '../io/escape.js';
import { fsReason } from '../io/files.js';
import { ensureDir, writeOutputFile } from '../io/write.js';
import { hasSealMagic, openBytes, sealBytes } from './container.js';
import { hasFile, LAYOUT_FILE, listSetFiles, onDisk, readOptional, readSetFile, requireDirectory } from './files.js';
import { checkKernelKey } from './kernelKey.js';
import {
  buildManifest, MANIFEST_FILE, parseManifest, serializeManifest, sha256Hex, SIGNATURE_FILE, type Manifest,
} from './manifest.js';
import { signBytes, verifyBytes } from './sign.js';

/** The keys `sealSet` needs: the 32-byte kernel key and the Ed25519 release signing key. */
export interface SealKeys {
  readonly kernelKey: Uint8Array;
  readonly signingKey: KeyObject;
}

/** What `sealSet` wrote. */
export interface SealResult {
  readonly dir: string;
  readonly manifest: Manifest;
  /** The kernel files sealed (every file but layout.json). */
  readonly sealed: readonly string[];
}

/** How `loadSet` opens a set. */
export interface LoadOptions {
  readonly kernelKey: Uint8Array;
  /** The release public key; when given, the signature is always verified before anything is opened. */
  readonly publicKey?: KeyObject;
  /** Refuse to load without a public key, a manifest and a valid signature (default: false). */
  readonly requireSignature?: boolean;
}

/** A set opened in memory. */
export interface LoadedSet {
  /** layout.json, parsed. */
  readonly layout: unknown;
  /** The clear kernels by set-relative POSIX path. */
  readonly kernels: Map<string, Uint8Array>;
  /** The manifest the files were checked against, or null for a set without one. */
  readonly manifest: Manifest | null;
  /** True when the manifest's signature was verified. */
  readonly signed: boolean;
}

function parseLayout(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch (e) {
    throw new SealError(LAYOUT_FILE, 'bad-layout', escapeControl(messageOf(e)));
  }
}

/** Seals the clear set at `srcDir` into the new directory `outDir`, with manifest and signature. */
export function sealSet(srcDir: string, outDir: string, keys: SealKeys): SealResult {
  checkKernelKey(keys.kernelKey);
  requireDirectory(srcDir);
  for (const f of [MANIFEST_FILE, SIGNATURE_FILE]) {
    if (hasFile(srcDir, f)) throw new SealError(f, 'already-sealed', `${srcDir} carries ${f}: it is a sealed set, not a clear source`);
  }
  if (existsSync(outDir)) throw new SealError(outDir, 'out-exists');
  const out = resolve(outDir);
  const paths = listSetFiles(srcDir);
  if (!paths.includes(LAYOUT_FILE)) throw new SealError(LAYOUT_FILE, 'missing-file', `${srcDir} has no ${LAYOUT_FILE}`);
  // Everything is read and sealed before anything is written, so a refusal leaves no half-built set.
  const files = paths.map((path) => {
    const clear = readSetFile(srcDir, path);
    if (path === LAYOUT_FILE) {
      parseLayout(clear);
      return { path, bytes: clear };
    }
    if (hasSealMagic(clear)) throw new SealError(path, 'already-sealed');
    return { path, bytes: sealBytes(clear, path, keys.kernelKey) };
  });
  const manifest = buildManifest(files);
  const manifestBytes = serializeManifest(manifest);
  const signature = signBytes(manifestBytes, keys.signingKey);
  ensureDir(dirname(out));
  // Built beside its destination and renamed into place: a crash leaves a stray temp dir, never a
  // directory under the final name that lacks its manifest.
  let tmp: string;
  try { tmp = mkdtempSync(join(dirname(out), `.${basename(out)}.partial-`)); } catch (e) {
    throw new UsageError(`cannot write the sealed set ${outDir}: cannot create a directory in ${dirname(out)}: ${fsReason(e)}`);
  }
  try {
    for (const f of files) {
      ensureDir(dirname(onDisk(tmp, f.path)));
      writeOutputFile(onDisk(tmp, f.path), f.bytes);
    }
    writeOutputFile(onDisk(tmp, MANIFEST_FILE), manifestBytes);
    writeOutputFile(onDisk(tmp, SIGNATURE_FILE), signature);
    try { renameSync(tmp, out); } catch (e) { throw new UsageError(`cannot write the sealed set ${outDir}: ${fsReason(e)}`); }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    // The temporary directory is gone: the failure is the set's, named as the user gave it.
    throw e instanceof WriteFailed ? new WriteFailed(outDir, e.reason) : e;
  }
  return { dir: outDir, manifest, sealed: paths.filter((p) => p !== LAYOUT_FILE) };
}

/** Writes manifest.json and manifest.sig for a set whose kernels are already sealed (re-signing). */
export function signSet(dir: string, signingKey: KeyObject): Manifest {
  const paths = listSetFiles(dir);
  if (!paths.includes(LAYOUT_FILE)) throw new SealError(LAYOUT_FILE, 'missing-file');
  const files = paths.map((path) => {
    const bytes = readSetFile(dir, path);
    // Signing a clear kernel would bless it: every file but the layout must already be a container.
    if (path === LAYOUT_FILE) parseLayout(bytes);
    else if (!hasSealMagic(bytes)) throw new SealError(path, 'bad-magic', 'only sealed kernels are signed');
    return { path, bytes };
  });
  const manifest = buildManifest(files);
  const bytes = serializeManifest(manifest);
  const signature = signBytes(bytes, signingKey);
  writeOutputFile(onDisk(dir, MANIFEST_FILE), bytes);
  writeOutputFile(onDisk(dir, SIGNATURE_FILE), signature);
  return manifest;
}

/** Checks `dir` against already-parsed manifest; returns the checked bytes, so what was hashed is what is opened. */
function checkFiles(dir: string, manifest: Manifest): Map<string, Buffer> {
  const actual = listSetFiles(dir);
  const listed = new Set(manifest.files.map((f) => f.path));
  const present = new Set(actual);
  const extra = actual.filter((p) => !listed.has(p));
  for (const f of manifest.files) {
    if (!present.has(f.path)) {
      throw new SealError(f.path, 'missing-file', extra.length > 0 ? `the set has unlisted ${extra.map(quote).join(', ')}` : undefined);
    }
  }
  const first = extra[0];
  if (first !== undefined) throw new SealError(first, 'extra-file');
  const bytes = new Map<string, Buffer>();
  for (const f of manifest.files) {
    const b = readSetFile(dir, f.path);
    if (b.length !== f.size) throw new SealError(f.path, 'size-mismatch', `${b.length} bytes, manifest lists ${f.size}`);
    const digest = sha256Hex(b);
    if (digest !== f.sha256) throw new SealError(f.path, 'digest-mismatch', `sha256 ${digest}, manifest lists ${f.sha256}`);
    bytes.set(f.path, b);
  }
  return bytes;
}

function readManifestBytes(dir: string): Buffer {
  requireDirectory(dir);
  const bytes = readOptional(dir, MANIFEST_FILE);
  if (bytes === null) throw new SealError(MANIFEST_FILE, 'no-manifest');
  return bytes;
}

function verified(dir: string, publicKey: KeyObject): { manifest: Manifest; bytes: Map<string, Buffer> } {
  const manifestBytes = readManifestBytes(dir);
  const signature = readOptional(dir, SIGNATURE_FILE);
  if (signature === null) throw new SealError(SIGNATURE_FILE, 'no-signature');
  // The signature is checked over the bytes as read, before they are parsed: nothing unsigned is interpreted.
  if (!verifyBytes(manifestBytes, signature, publicKey)) throw new SealError(SIGNATURE_FILE, 'bad-signature');
  const manifest = parseManifest(manifestBytes);
  return { manifest, bytes: checkFiles(dir, manifest) };
}

/** Proves the manifest lists exactly the set's files with their sha256 and size; no key needed. */
export function checkSet(dir: string): Manifest {
  const manifest = parseManifest(readManifestBytes(dir));
  checkFiles(dir, manifest);
  return manifest;
}

/** Verifies manifest.sig over manifest.json's exact bytes with the release public key, then checks the set. */
export function verifySet(dir: string, publicKey: KeyObject): Manifest {
  return verified(dir, publicKey).manifest;
}

/** Opens a set in memory: signature (when a public key is given or required), manifest, then kernels. */
export function loadSet(dir: string, opts: LoadOptions): LoadedSet {
  checkKernelKey(opts.kernelKey);
  requireDirectory(dir);
  if (opts.requireSignature === true && opts.publicKey === undefined) throw new SealError(null, 'no-public-key');
  let manifest: Manifest | null = null;
  let bytes: Map<string, Buffer>;
  if (opts.publicKey !== undefined) {
    ({ manifest, bytes } = verified(dir, opts.publicKey));
  } else if (hasFile(dir, MANIFEST_FILE)) {
    manifest = parseManifest(readManifestBytes(dir));
    bytes = checkFiles(dir, manifest);
  } else {
    // No manifest: confidentiality only. The AAD still refuses a kernel moved to another name.
    bytes = new Map(listSetFiles(dir).map((p) => [p, readSetFile(dir, p)]));
  }
  const layoutBytes = bytes.get(LAYOUT_FILE);
  if (layoutBytes === undefined) throw new SealError(LAYOUT_FILE, 'missing-file', 'a set needs its layout');
  const layout = parseLayout(layoutBytes);
  const kernels = new Map<string, Uint8Array>();
  try {
    for (const [path, sealed] of bytes) {
      if (path !== LAYOUT_FILE) kernels.set(path, openBytes(sealed, path, opts.kernelKey));
    }
  } catch (e) {
    // A set that fails half way is refused whole; the kernels already opened are wiped, not leaked.
    for (const k of kernels.values()) k.fill(0);
    throw e;
  }
  return { layout, kernels, manifest, signed: opts.publicKey !== undefined };
}
