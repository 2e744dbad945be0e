/**
 * Every refusal and failure of the engine: one small class per code of the program format's error
 * table (docs/PROGRAM_FORMAT.md), all extending EngineError, with readonly typed fields. toWire() and
 * fromWire() carry them across worker threads and into `--json` output unchanged.
 */

/** The stable codes of the program format's error table, plus the engine's own. */
export type ErrorCode =
  | 'InvalidProgram'
  | 'InvalidInput'
  | 'CapabilityMissing'
  | 'MissingBound'
  | 'RegionLimit'
  | 'ContextLimit'
  | 'MissingContract'
  | 'NarrowingRange'
  | 'IntegerToFloat'
  | 'NarrowingRangeUpload'
  | 'NarrowingRangeInput'
  | 'NarrowingRangeResult'
  | 'IndexOutOfRange'
  | 'IntegerDivideByZero'
  | 'DispatchRefused'
  | 'ArgumentMismatch'
  | 'VendorCompilerError'
  | 'DeadlineExceeded'
  | 'DevicePoisoned'
  | 'NoDevice'
  | 'ActorDown'
  | 'ActorCrashed'
  | 'EngineClosed'
  | 'LoadFailed'
  | 'UsageError'
  | 'CacheError'
  | 'CacheUnavailable'
  | 'ResourceLimit'
  | 'InvalidOptions'
  | 'Q4nxError'
  | 'GgufError'
  | 'SealError';

/** A scalar as the wire writes it: numbers, or the strings JSON cannot write as numbers. */
export type WireNumber = number | 'nan' | 'inf' | '-inf' | '-0';

/** Writes a number so that JSON keeps it exactly (NaN, infinities and -0 as strings). */
export function wireNumber(v: number): WireNumber {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (Object.is(v, -0)) return '-0';
  return v;
}

/** The plain-data form of an error: its code, its message and its typed fields. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly [field: string]: unknown;
}

/** The base of every typed error of the engine. */
export abstract class EngineError extends Error {
  abstract readonly code: ErrorCode;
  /** The fields the error table names for this code, in order. */
  abstract fields(): Record<string, unknown>;
  /** The plain-data form: `{ code, message, ...fields }`. */
  toWire(): WireError {
    return { code: this.code, message: this.message, ...this.fields() };
  }
}

/** The program breaks the format: `path` is a JSON pointer into the program. */
export class InvalidProgram extends EngineError {
  readonly code = 'InvalidProgram' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`invalid program at ${path === '' ? '(root)' : path}: ${reason}`);
  }
  fields() { return { path: this.path, reason: this.reason }; }
}

/** Inputs, weights or state supplied to a program do not match its args (engine extension). */
export class InvalidInput extends EngineError {
  readonly code = 'InvalidInput' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`invalid input at ${path === '' ? '(root)' : path}: ${reason}`);
  }
  fields() { return { path: this.path, reason: this.reason }; }
}

export class CapabilityMissing extends EngineError {
  readonly code = 'CapabilityMissing' as const;
  constructor(readonly eqn: number, readonly op: string, readonly capability: string) {
    super(`equation ${eqn} (${op}) is not admitted: missing capability ${capability}`);
  }
  fields() { return { eqn: this.eqn, op: this.op, capability: this.capability }; }
}

export class MissingBound extends EngineError {
  readonly code = 'MissingBound' as const;
  constructor(readonly eqn: number, readonly step: number, readonly bound: string) {
    super(`equation ${eqn}, row kernel step ${step}: no derived error bound (${bound})`);
  }
  fields() { return { eqn: this.eqn, step: this.step, bound: this.bound }; }
}

export type RegionLimitName = 'tiles' | 'streams-in' | 'streams-out' | 'streams-per-tile' | 'tile-local-bytes';

export class RegionLimit extends EngineError {
  readonly code = 'RegionLimit' as const;
  constructor(readonly eqn: number, readonly limit: RegionLimitName, readonly needed: number, readonly max: number) {
    super(`equation ${eqn} fits no region: ${limit} needs ${needed}, at most ${max}`);
  }
  fields() { return { eqn: this.eqn, limit: this.limit, needed: this.needed, max: this.max }; }
}

export class ContextLimit extends EngineError {
  readonly code = 'ContextLimit' as const;
  constructor(readonly needed: number, readonly max: number) {
    super(`${needed} artifacts need ${needed} hardware contexts, the device has ${max}`);
  }
  fields() { return { needed: this.needed, max: this.max }; }
}

export class MissingContract extends EngineError {
  readonly code = 'MissingContract' as const;
  constructor(readonly eqn: number, readonly op: string) {
    super(`equation ${eqn} (${op}): the target records no narrowing contract for this arithmetic`);
  }
  fields() { return { eqn: this.eqn, op: this.op }; }
}

export class NarrowingRange extends EngineError {
  readonly code = 'NarrowingRange' as const;
  constructor(readonly eqn: number, readonly value: number) {
    super(`equation ${eqn}: literal ${value} is beyond what FP16 can hold`);
  }
  fields() { return { eqn: this.eqn, value: wireNumber(this.value) }; }
}

export class IntegerToFloat extends EngineError {
  readonly code = 'IntegerToFloat' as const;
  constructor(readonly eqn: number) {
    super(`equation ${eqn}: an integer converted to a float is refused on an FP16 target`);
  }
  fields() { return { eqn: this.eqn }; }
}

export class NarrowingRangeUpload extends EngineError {
  readonly code = 'NarrowingRangeUpload' as const;
  constructor(readonly arg: string, readonly index: number, readonly value: number) {
    super(`weight ${arg}[${index}] = ${value} is beyond the narrowing range`);
  }
  fields() { return { arg: this.arg, index: this.index, value: wireNumber(this.value) }; }
}

export class NarrowingRangeInput extends EngineError {
  readonly code = 'NarrowingRangeInput' as const;
  constructor(readonly arg: string, readonly index: number, readonly value: number) {
    super(`input ${arg}[${index}] = ${value} is beyond the narrowing range`);
  }
  fields() { return { arg: this.arg, index: this.index, value: wireNumber(this.value) }; }
}

export class NarrowingRangeResult extends EngineError {
  readonly code = 'NarrowingRangeResult' as const;
  constructor(readonly result: string, readonly index: number, readonly value: number) {
    super(`result ${result}[${index}] = ${value} left the narrowing range`);
  }
  fields() { return { result: this.result, index: this.index, value: wireNumber(this.value) }; }
}

export class IndexOutOfRange extends EngineError {
  readonly code = 'IndexOutOfRange' as const;
  constructor(readonly eqn: number, readonly index: number, readonly extent: number) {
    super(`equation ${eqn}: index ${index} is outside its axis of extent ${extent}`);
  }
  fields() { return { eqn: this.eqn, index: this.index, extent: this.extent }; }
}

export class IntegerDivideByZero extends EngineError {
  readonly code = 'IntegerDivideByZero' as const;
  constructor(readonly eqn: number) {
    super(`equation ${eqn}: i32 division by zero`);
  }
  fields() { return { eqn: this.eqn }; }
}

export type DispatchReason = 'grid-launch' | 'shape-abi' | 'foreign-graph' | 'not-an-argument';

export class DispatchRefused extends EngineError {
  readonly code = 'DispatchRefused' as const;
  constructor(readonly reason: DispatchReason, detail?: string) {
    super(`dispatch refused (${reason})${detail ? `: ${detail}` : ''}`);
  }
  fields() { return { reason: this.reason }; }
}

export type ArgumentField = 'name' | 'order' | 'direction' | 'extent' | 'precision';

export class ArgumentMismatch extends EngineError {
  readonly code = 'ArgumentMismatch' as const;
  constructor(readonly arg: string, readonly field: ArgumentField) {
    super(`compiled graph argument ${arg} differs from the program's in its ${field}`);
  }
  fields() { return { arg: this.arg, field: this.field }; }
}

export class VendorCompilerError extends EngineError {
  readonly code = 'VendorCompilerError' as const;
  constructor(readonly log: string) {
    super(`the vendor compiler rejected a layer:\n${log}`);
  }
  fields() { return { log: this.log }; }
}

export class DeadlineExceeded extends EngineError {
  readonly code = 'DeadlineExceeded' as const;
  constructor(readonly deadlineMs: number) {
    super(`the run missed its deadline of ${deadlineMs} ms; the device is poisoned`);
  }
  fields() { return { deadlineMs: this.deadlineMs }; }
}

export class DevicePoisoned extends EngineError {
  readonly code = 'DevicePoisoned' as const;
  /** `since`: when the device was poisoned, as an ISO 8601 time. */
  constructor(readonly since: string) {
    super(`the device was poisoned by a missed deadline at ${since}`);
  }
  fields() { return { since: this.since }; }
}

export class NoDevice extends EngineError {
  readonly code = 'NoDevice' as const;
  constructor(readonly device: string, detail?: string) {
    super(`no ${device} device on this machine${detail ? ` (${detail})` : ''}`);
  }
  fields() { return { device: this.device }; }
}

/** An actor crashed more often than its restart intensity allows and is reported down. */
export class ActorDown extends EngineError {
  readonly code = 'ActorDown' as const;
  constructor(readonly actor: string, readonly restarts: number, readonly windowMs: number) {
    super(`actor ${actor} is down: ${restarts} restarts within ${windowMs} ms`);
  }
  fields() { return { actor: this.actor, restarts: this.restarts, windowMs: this.windowMs }; }
}

/** The actor serving a job crashed while the job was in flight. */
export class ActorCrashed extends EngineError {
  readonly code = 'ActorCrashed' as const;
  constructor(readonly actor: string, readonly detail: string) {
    super(`actor ${actor} crashed: ${detail}`);
  }
  fields() { return { actor: this.actor, detail: this.detail }; }
}

export class EngineClosed extends EngineError {
  readonly code = 'EngineClosed' as const;
  constructor() { super('the engine is closed'); }
  fields() { return {}; }
}

/** A simulated or real device failed to load an artifact. */
export class LoadFailed extends EngineError {
  readonly code = 'LoadFailed' as const;
  constructor(readonly device: string, readonly detail: string) {
    super(`device ${device} failed to load the artifact: ${detail}`);
  }
  fields() { return { device: this.device, detail: this.detail }; }
}

/** The CLI was called wrongly: a missing file, a bad flag value. */
export class UsageError extends EngineError {
  readonly code = 'UsageError' as const;
  constructor(readonly reason: string) { super(reason); }
  fields() { return { reason: this.reason }; }
}

/** The blob cache cannot be used: an unwritable directory, a closed cache, an identity it cannot serialize. */
export class CacheError extends EngineError {
  readonly code = 'CacheError' as const;
  /** `path`: the file or directory, or the JSON pointer into the identity, the failure is about. */
  constructor(readonly path: string, readonly reason: string) {
    super(`cache error at ${path === '' ? '(root)' : path}: ${reason}`);
  }
  fields() { return { path: this.path, reason: this.reason }; }
}

/** The blob cache cannot be opened at all: a restart cannot fix `reason` (ENOTDIR, EACCES, not a database). */
export class CacheUnavailable extends EngineError {
  readonly code = 'CacheUnavailable' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`the blob cache at ${path} cannot be used: ${reason}`);
  }
  fields() { return { path: this.path, reason: this.reason }; }
}

/** A program, a file or a request is past one of the engine's documented limits (docs/LIMITS.md). */
export class ResourceLimit extends EngineError {
  readonly code = 'ResourceLimit' as const;
  /** `what`: the limit's name (`elements-per-tensor`, `program-bytes`, `equations`, `file-bytes`, ...). */
  constructor(readonly what: string, readonly needed: number, readonly max: number, readonly place = '') {
    super(`${place === '' ? '' : `${place}: `}${what} ${needed} is past the limit ${max}`);
  }
  // `place` (a JSON pointer or a file) is carried only where the limit has one.
  fields() { return { what: this.what, needed: this.needed, max: this.max, ...(this.place === '' ? {} : { place: this.place }) }; }
}

/** An option given to createEngine or submit is not one the engine accepts: `field` names it. */
export class InvalidOptions extends EngineError {
  readonly code = 'InvalidOptions' as const;
  constructor(readonly field: string, readonly reason: string) {
    super(`invalid option ${field}: ${reason}`);
  }
  fields() { return { field: this.field, reason: this.reason }; }
}

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

/** A sealed kernel set, one of its files or a key is refused; `file`: the set-relative path, a key file, or null. */
export class SealError extends EngineError {
  readonly code = 'SealError' as const;
  constructor(readonly file: string | null, readonly reason: SealReason, detail?: string) {
    super(`sealed set${file === null ? '' : ` ${file}`}: ${SEAL_REASONS[reason]}${detail ? ` (${detail})` : ''}`);
  }
  fields() { return { file: this.file, reason: this.reason }; }
}

/** A Q4NX container or chunk is malformed: `tensor` names the tensor, or null for the container itself. */
export class Q4nxError extends EngineError {
  readonly code = 'Q4nxError' as const;
  constructor(readonly tensor: string | null, readonly reason: string) {
    super(`q4nx${tensor === null ? '' : ` tensor ${JSON.stringify(tensor)}`}: ${reason}`);
  }
  fields() { return { tensor: this.tensor, reason: this.reason }; }
}

/** A GGUF file breaks the format or a bound that keeps reading it safe: `offset` is the byte it is about. */
export class GgufError extends EngineError {
  readonly code = 'GgufError' as const;
  constructor(readonly offset: number, readonly reason: string) {
    super(`GGUF error at byte ${offset}: ${reason}`);
  }
  fields() { return { offset: this.offset, reason: this.reason }; }
}

function num(w: Record<string, unknown>, k: string): number {
  const v = w[k];
  if (typeof v === 'number') return v;
  if (v === 'nan') return NaN;
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  if (v === '-0') return -0;
  return NaN;
}
function str(w: Record<string, unknown>, k: string): string {
  const v = w[k];
  return typeof v === 'string' ? v : String(v);
}

/** Rebuilds the typed error from its wire form, so a caller catches the same class across threads. */
export function fromWire(w: WireError): EngineError {
  const e = rebuild(w);
  e.message = w.message;
  return e;
}

function rebuild(w: WireError): EngineError {
  switch (w.code) {
    case 'InvalidProgram': return new InvalidProgram(str(w, 'path'), str(w, 'reason'));
    case 'InvalidInput': return new InvalidInput(str(w, 'path'), str(w, 'reason'));
    case 'CapabilityMissing': return new CapabilityMissing(num(w, 'eqn'), str(w, 'op'), str(w, 'capability'));
    case 'MissingBound': return new MissingBound(num(w, 'eqn'), num(w, 'step'), str(w, 'bound'));
    case 'RegionLimit': return new RegionLimit(num(w, 'eqn'), str(w, 'limit') as RegionLimitName, num(w, 'needed'), num(w, 'max'));
    case 'ContextLimit': return new ContextLimit(num(w, 'needed'), num(w, 'max'));
    case 'MissingContract': return new MissingContract(num(w, 'eqn'), str(w, 'op'));
    case 'NarrowingRange': return new NarrowingRange(num(w, 'eqn'), num(w, 'value'));
    case 'IntegerToFloat': return new IntegerToFloat(num(w, 'eqn'));
    case 'NarrowingRangeUpload': return new NarrowingRangeUpload(str(w, 'arg'), num(w, 'index'), num(w, 'value'));
    case 'NarrowingRangeInput': return new NarrowingRangeInput(str(w, 'arg'), num(w, 'index'), num(w, 'value'));
    case 'NarrowingRangeResult': return new NarrowingRangeResult(str(w, 'result'), num(w, 'index'), num(w, 'value'));
    case 'IndexOutOfRange': return new IndexOutOfRange(num(w, 'eqn'), num(w, 'index'), num(w, 'extent'));
    case 'IntegerDivideByZero': return new IntegerDivideByZero(num(w, 'eqn'));
    case 'DispatchRefused': return new DispatchRefused(str(w, 'reason') as DispatchReason);
    case 'ArgumentMismatch': return new ArgumentMismatch(str(w, 'arg'), str(w, 'field') as ArgumentField);
    case 'VendorCompilerError': return new VendorCompilerError(str(w, 'log'));
    case 'DeadlineExceeded': return new DeadlineExceeded(num(w, 'deadlineMs'));
    case 'DevicePoisoned': return new DevicePoisoned(str(w, 'since'));
    case 'NoDevice': return new NoDevice(str(w, 'device'));
    case 'ActorDown': return new ActorDown(str(w, 'actor'), num(w, 'restarts'), num(w, 'windowMs'));
    case 'ActorCrashed': return new ActorCrashed(str(w, 'actor'), str(w, 'detail'));
    case 'EngineClosed': return new EngineClosed();
    case 'LoadFailed': return new LoadFailed(str(w, 'device'), str(w, 'detail'));
    case 'UsageError': return new UsageError(str(w, 'reason'));
    case 'CacheError': return new CacheError(str(w, 'path'), str(w, 'reason'));
    case 'CacheUnavailable': return new CacheUnavailable(str(w, 'path'), str(w, 'reason'));
    case 'ResourceLimit': return new ResourceLimit(str(w, 'what'), num(w, 'needed'), num(w, 'max'), typeof w['place'] === 'string' ? w['place'] : '');
    case 'InvalidOptions': return new InvalidOptions(str(w, 'field'), str(w, 'reason'));
    case 'Q4nxError': return new Q4nxError(typeof w.tensor === 'string' ? w.tensor : null, str(w, 'reason'));
    case 'GgufError': return new GgufError(num(w, 'offset'), str(w, 'reason'));
    case 'SealError': return new SealError(w['file'] === null ? null : str(w, 'file'), str(w, 'reason') as SealReason);
  }
}

/** True for a value that carries the wire form of an EngineError. */
export function isWireError(v: unknown): v is WireError {
  return typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'string'
    && typeof (v as { message?: unknown }).message === 'string';
}
