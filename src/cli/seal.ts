/**
 * `npu-offload seal keygen|write|check|verify`: sealed kernel sets (src/seal/).
 *
 *   seal keygen --out DIR/ | PREFIX        a release key pair (PEM) and a kernel key
 *   seal write SET --key KEY --kernel-key FILE [--out DIR]
 *                                          seals the clear set SET into a new directory (default
 *                                          SET.sealed) and signs its manifest; SET is left untouched
 *   seal check SET                         the manifest lists exactly the set's files (no key)
 *   seal verify SET --pub PUB              the signature too
 *
 * SET is the clear source, never sealed in place: sealing in place would destroy the only clear copy
 * and could leave a half-sealed set after a crash. A source that already carries a manifest or a
 * sealed (1BPKCRYP) file is refused. Every command prints one line per fact, or one JSON document
 * with `--json`; exit 0 done, 1 refused (`{ "error": { code, ...fields } }` with --json), 2 usage.
 */
import { existsSync, rmSync, statSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { UsageError } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';
import { ensureDir, writeOutputFile } from '../io/write.js';
import { formatKernelKey, generateKernelKey, parseKernelKey } from '../seal/kernelKey.js';
import type { Manifest } from '../seal/manifest.js';
import { checkSet, sealSet, verifySet } from '../seal/set.js';
import { generateSigningKeyPair, keyPairPem, publicKeyFromPem, signingKeyFromPem } from '../seal/sign.js';
import type { CliCommand } from './command.js';
import { jsonOption } from './options.js';
import { EXIT, reportError, type Io } from './output.js';

/** The flags of `seal keygen`. */
export interface SealKeygenOptions {
  /** A directory (existing, or written with a trailing slash) or a file-name prefix. */
  readonly out: string;
  readonly json?: boolean;
}

/** The flags of `seal write`. */
export interface SealWriteOptions {
  /** The release signing key, PKCS#8 PEM. */
  readonly key: string;
  /** The kernel key file: 64 hex digits, or 32 raw bytes. */
  readonly kernelKey: string;
  /** Where the sealed set is written; it must not exist. Default: SET.sealed beside SET. */
  readonly out?: string;
  readonly json?: boolean;
}

/** The flags of `seal check`. */
export interface SealCheckOptions { readonly json?: boolean }

/** The flags of `seal verify`. */
export interface SealVerifyOptions {
  /** The release public key, SPKI PEM. */
  readonly pub: string;
  readonly json?: boolean;
}

/** The files `keygen` writes for `out`: inside it when it is a directory, else beside it as a prefix. */
function keygenPaths(out: string): { signingKey: string; publicKey: string; kernelKey: string } {
  const isDir = out.endsWith('/') || out.endsWith(sep) || (existsSync(out) && statSync(out).isDirectory());
  return isDir
    ? { signingKey: join(out, 'release.key'), publicKey: join(out, 'release.pub'), kernelKey: join(out, 'kernel.key') }
    : { signingKey: `${out}.key`, publicKey: `${out}.pub`, kernelKey: `${out}.kernel.key` };
}

/** Writes a release key pair and a kernel key, refusing to overwrite any existing file. */
export function sealKeygenCommand(opts: SealKeygenOptions, io: Io): number {
  const json = opts.json === true;
  try {
    if (typeof opts.out !== 'string' || opts.out === '') throw new UsageError('seal keygen needs --out, a directory or a file-name prefix');
    const paths = keygenPaths(opts.out);
    for (const p of Object.values(paths)) {
      if (existsSync(p)) throw new UsageError(`${p} already exists; keygen never overwrites a key`);
    }
    const { privatePem, publicPem } = keyPairPem(generateSigningKeyPair());
    ensureDir(dirname(paths.signingKey));
    // Secrets are created owner-only and exclusively, so a race cannot clobber a key either. A failure
    // part way removes what this call wrote, so a second try does not meet its own half-written keys.
    const written: string[] = [];
    try {
      for (const [path, text, mode] of [
        [paths.signingKey, privatePem, 0o600], [paths.publicKey, publicPem, 0o644], [paths.kernelKey, formatKernelKey(generateKernelKey()), 0o600],
      ] as const) {
        writeOutputFile(path, text, { mode, exclusive: true });
        written.push(path);
      }
    } catch (e) {
      for (const p of written) rmSync(p, { force: true });
      throw e;
    }
    if (json) io.out(JSON.stringify(paths));
    else {
      io.out(`signing key (keep secret, for seal write --key): ${paths.signingKey}`);
      io.out(`public key (for seal verify --pub and the loader): ${paths.publicKey}`);
      io.out(`kernel key (keep secret, for seal write --kernel-key and the loader): ${paths.kernelKey}`);
    }
    return EXIT.ok;
  } catch (e) {
    return reportError(e, io, json);
  }
}

/** Seals the clear set SET into a new directory and signs its manifest. */
export function sealWriteCommand(set: string, opts: SealWriteOptions, io: Io): number {
  const json = opts.json === true;
  try {
    if (typeof opts.key !== 'string' || opts.key === '') throw new UsageError('seal write needs --key, the release signing key (PEM)');
    if (typeof opts.kernelKey !== 'string' || opts.kernelKey === '') throw new UsageError('seal write needs --kernel-key FILE, the kernel key (64 hex digits)');
    requireSetDir(set);
    const signingKey = signingKeyFromPem(readArg(opts.key, '--key'), opts.key);
    const kernelKey = parseKernelKey(readArg(opts.kernelKey, '--kernel-key'), opts.kernelKey);
    const out = opts.out ?? `${set.replace(/[\\/]+$/, '')}.sealed`;
    const r = sealSet(set, out, { kernelKey, signingKey });
    if (json) io.out(JSON.stringify({ dir: r.dir, sealed: r.sealed, files: r.manifest.files }));
    else {
      io.out(`sealed ${r.sealed.length} kernel file${r.sealed.length === 1 ? '' : 's'} of ${set} into ${r.dir}`);
      io.out(`manifest.json lists ${r.manifest.files.length} files; manifest.sig signs it`);
    }
    return EXIT.ok;
  } catch (e) {
    return reportError(e, io, json);
  }
}

/** Checks that SET's manifest lists exactly its files with their sha256 and size. */
export function sealCheckCommand(set: string, opts: SealCheckOptions, io: Io): number {
  const json = opts.json === true;
  try {
    requireSetDir(set);
    report(set, checkSet(set), false, json, io);
    return EXIT.ok;
  } catch (e) {
    return reportError(e, io, json);
  }
}

/** Verifies SET's signature with the release public key, then checks its manifest. */
export function sealVerifyCommand(set: string, opts: SealVerifyOptions, io: Io): number {
  const json = opts.json === true;
  try {
    if (typeof opts.pub !== 'string' || opts.pub === '') throw new UsageError('seal verify needs --pub, the release public key (PEM)');
    requireSetDir(set);
    const publicKey = publicKeyFromPem(readArg(opts.pub, '--pub'), opts.pub);
    report(set, verifySet(set, publicKey), true, json, io);
    return EXIT.ok;
  } catch (e) {
    return reportError(e, io, json);
  }
}

function report(set: string, m: Manifest, signed: boolean, json: boolean, io: Io): void {
  if (json) io.out(JSON.stringify({ dir: set, ok: true, signed, files: m.files }));
  else io.out(`ok: ${set} matches its manifest (${m.files.length} files)${signed ? ', signed by the release key' : ''}`);
}

/** A file the user named; a missing one is a usage error (exit 2), a malformed one the seal's refusal. */
function readArg(file: string, flag: string): Buffer {
  return readRegularFile(file, { what: flag });
}

function requireSetDir(set: string): void {
  if (typeof set !== 'string' || set === '') throw new UsageError('name the set directory');
  let isDir: boolean;
  try { isDir = statSync(set).isDirectory(); } catch { isDir = false; }
  if (!isDir) throw new UsageError(`${set} is not a directory`);
}

/** `seal keygen|write|check|verify`. */
export const seal: CliCommand = {
  register(cli, { io, action }) {
    const group = cli.command('seal').description('signed, encrypted kernel sets');
    group.command('keygen').description('write an Ed25519 signing key pair and a kernel key')
      .requiredOption('--out <dir-or-prefix>', 'a directory, or a file name prefix')
      .addOption(jsonOption())
      .action(action((o: SealKeygenOptions) => sealKeygenCommand(o, io)));
    group.command('write').description('seal a clear kernel set into a new directory and sign its manifest')
      .argument('<set>', 'the clear set: layout.json and kernel files')
      .requiredOption('--key <file>', 'the Ed25519 signing key (PKCS#8 PEM)')
      .requiredOption('--kernel-key <file>', 'the 32-byte kernel key (64 hex digits or raw)')
      .option('--out <dir>', 'where the sealed set goes (default SET.sealed; must not exist)')
      .addOption(jsonOption())
      .action(action((s: string, o: SealWriteOptions) => sealWriteCommand(s, o, io)));
    group.command('check').description('check that the manifest lists exactly the set\'s files with their digests (no key needed)')
      .argument('<set>', 'a sealed set')
      .addOption(jsonOption())
      .action(action((s: string, o: SealCheckOptions) => sealCheckCommand(s, o, io)));
    group.command('verify').description('verify the manifest\'s signature, then check the set')
      .argument('<set>', 'a sealed set')
      .requiredOption('--pub <file>', 'the release public key (SPKI PEM)')
      .addOption(jsonOption())
      .action(action((s: string, o: SealVerifyOptions) => sealVerifyCommand(s, o, io)));
  },
};
