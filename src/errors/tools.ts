/** Failures of the tools around the engine: the CLI, the blob cache, model files and sealed kernel sets. */
import { EngineError } from './base.js';

/** Why a sealed kernel set (src/seal/) was refused; stable, so scripts can match on it. */
export type SealReason =
  | 'bad-magic' | 'unsupported-version' | 'truncated' | 'wrong-key-or-tampered'
  | 'digest-mismatch' | 'size-mismatch' | 'missing-file' | 'extra-file' | 'not-a-file'
  | 'no-manifest' | 'bad-manifest' | 'no-signature' | 'bad-signature' | 'no-public-key'
  | 'bad-key' | 'bad-layout' | 'already-sealed' | 'out-exists' | 'not-a-directory';

const SEAL_REASONS = {
  'bad-magic': 'not a sealed container (no 1BPKCRYP magic)',
  'unsupported-version': 'a sealed container of a version this build cannot open',
  'truncated': 'truncated: shorter than a sealed container\'s header and tag',
  'wrong-key-or-tampered': 'does not open with this kernel key: a wrong key, a changed byte, or a file moved from another name',
  'digest-mismatch': 'sha256 differs from the one manifest.json lists',
  'size-mismatch': 'size differs from the one manifest.json lists',
  'missing-file': 'listed in manifest.json but missing from the set',
  'extra-file': 'in the set but not listed in manifest.json',
  'not-a-file': 'neither a regular file nor a directory (a symlink?)',
  'no-manifest': 'missing: the set has no manifest',
  'bad-manifest': 'not a well-formed, canonical manifest',
  'no-signature': 'missing: the set is unsigned and a signature is required',
  'bad-signature': 'does not verify over manifest.json\'s exact bytes with this public key',
  'no-public-key': 'a signature is required but no public key was given',
  'bad-key': 'not a usable key',
  'bad-layout': 'not a JSON layout',
  'already-sealed': 'already sealed; seal the clear source set instead',
  'out-exists': 'already exists; it is not overwritten',
  'not-a-directory': 'not a directory',
} as const satisfies Record<SealReason, string>;

/** The CLI was called wrongly: a missing file, a bad flag value. */
export class UsageError extends EngineError {
  readonly code = 'UsageError' as const;
  constructor(readonly reason: string) { super(reason); }
  static readonly wire = { reason: 'string' } as const;
}

/** The blob cache cannot be used: an unwritable directory, a closed cache, an identity it cannot serialize. */
export class CacheError extends EngineError {
  readonly code = 'CacheError' as const;
  /** `path`: the file or directory, or the JSON pointer into the identity, the failure is about. */
  constructor(readonly path: string, readonly reason: string) {
    super(`cache error at ${path === '' ? '(root)' : path}: ${reason}`);
  }
  static readonly wire = { path: 'string', reason: 'string' } as const;
}

/** The blob cache cannot be opened at all: a restart cannot fix `reason` (ENOTDIR, EACCES, not a database). */
export class CacheUnavailable extends EngineError {
  readonly code = 'CacheUnavailable' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`the blob cache at ${path} cannot be used: ${reason}`);
  }
  static readonly wire = { path: 'string', reason: 'string' } as const;
}

/** A Q4NX container or chunk is malformed: `tensor` names the tensor, or null for the container itself. */
export class Q4nxError extends EngineError {
  readonly code = 'Q4nxError' as const;
  constructor(readonly tensor: string | null, readonly reason: string) {
    super(`q4nx${tensor === null ? '' : ` tensor ${JSON.stringify(tensor)}`}: ${reason}`);
  }
  static readonly wire = { tensor: 'string?', reason: 'string' } as const;
}

/** A GGUF file breaks the format or a bound that keeps reading it safe: `offset` is the byte it is about. */
export class GgufError extends EngineError {
  readonly code = 'GgufError' as const;
  constructor(readonly offset: number, readonly reason: string) {
    super(`GGUF error at byte ${offset}: ${reason}`);
  }
  static readonly wire = { offset: 'number', reason: 'string' } as const;
}

/** A sealed kernel set, one of its files or a key is refused; `file`: the set-relative path, a key file, or null. */
export class SealError extends EngineError {
  readonly code = 'SealError' as const;
  constructor(readonly file: string | null, readonly reason: SealReason, detail?: string) {
    // A key is not part of any set: its errors name the key file, not "sealed set".
    const subject = reason === 'bad-key' ? (file === null ? 'key' : `key file ${file}`) : `sealed set${file === null ? '' : ` ${file}`}`;
    super(`${subject}: ${SEAL_REASONS[reason]}${detail ? ` (${detail})` : ''}`);
  }
  static readonly wire = { file: 'string?', reason: 'string' } as const;
}

/** A tokenizer or chat template cannot be used: `source` is the file (tokenizer.json, GGUF, directory) at fault. */
export class TokenizerError extends EngineError {
  readonly code = 'TokenizerError' as const;
  constructor(readonly source: string, readonly reason: string) {
    super(`tokenizer ${source}: ${reason}`);
  }
  static readonly wire = { source: 'string', reason: 'string' } as const;
}

/** A Redis server (the farm's queue, or the remote cache tier where it must be there) cannot be reached. */
export class RemoteUnavailable extends EngineError {
  readonly code = 'RemoteUnavailable' as const;
  /** `url`: the server as given, its password left out. */
  constructor(readonly url: string, readonly reason: string) {
    super(`the Redis server at ${url} cannot be used: ${reason}`);
  }
  static readonly wire = { url: 'string', reason: 'string' } as const;
}

/**
 * An output file could not be written for a cause in the machine, not in the path given: the disk is
 * full (ENOSPC), a quota is reached (EDQUOT), the device failed (EIO). `path` is the file; what was there
 * before is left as it was.
 */
export class WriteFailed extends EngineError {
  readonly code = 'WriteFailed' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`cannot write ${path}: ${reason}; nothing was replaced`);
  }
  static readonly wire = { path: 'string', reason: 'string' } as const;
}

/** `farm --queue` gave up after `--timeout`: `taken` of `total` jobs had been taken by a worker (0: no worker came). */
export class FarmTimeout extends EngineError {
  readonly code = 'FarmTimeout' as const;
  /** `url`: the queue's server as given, its password left out. */
  constructor(readonly url: string, readonly timeoutMs: number, readonly taken: number, readonly total: number) {
    super(taken === 0
      ? `no worker took a job from the queue at ${url} within ${timeoutMs} ms: is a farm-worker running against it?`
      : `the farm did not finish within ${timeoutMs} ms: workers took ${taken} of ${total} jobs from the queue at ${url}`);
  }
  static readonly wire = { url: 'string', timeoutMs: 'number', taken: 'number', total: 'number' } as const;
}

/** Where an add-on failed: loading it, or one of the hooks it gave (src/serve/addons.ts). */
export type AddonHook = 'load' | 'register' | 'canServe' | 'open' | 'generate' | 'close' | 'command';

/**
 * An add-on (`serve --addon`, `npu-offload addon`) failed: its import did not settle in time or threw,
 * or a hook threw or answered what its contract does not allow. `addon` names the package or file,
 * `hook` the hook (an AddonHook), `reason` what went wrong, naming the route or command.
 */
export class AddonError extends EngineError {
  readonly code = 'AddonError' as const;
  constructor(readonly addon: string, readonly hook: AddonHook, readonly reason: string) {
    super(`add-on ${addon} failed in ${hook}: ${reason}`);
  }
  static readonly wire = { addon: 'string', hook: 'string', reason: 'string' } as const;
}
