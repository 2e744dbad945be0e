/**
 * One table from code to class, and the one generic path that rebuilds any class from its wire form,
 * so a caller catches the same class across threads, processes and ports.
 */
import { Aborted, ActorCrashed, ActorDown, EngineClosed } from './actors.js';
import type { EngineError, ErrorCode, WireError, WireSpec } from './base.js';
import {
  ArgumentMismatch, DeadlineExceeded, DevicePoisoned, DispatchRefused, LoadFailed, NarrowingRangeInput,
  NarrowingRangeResult, NarrowingRangeUpload, NoDevice, VendorCompilerError,
} from './device.js';
import {
  CapabilityMissing, ContextLimit, IntegerToFloat, MissingBound, MissingContract, NarrowingRange, RegionLimit,
} from './planning.js';
import { IndexOutOfRange, IntegerDivideByZero, InvalidInput, InvalidOptions, InvalidProgram, KvCacheFull, ResourceLimit } from './program.js';
import { AddonError, CacheError, CacheUnavailable, FarmTimeout, GgufError, Q4nxError, RemoteUnavailable, SealError, TokenizerError, UsageError, WriteFailed } from './tools.js';

/** What the table needs of a class: a constructor over its wire fields, in the order of its WireSpec. */
export interface ErrorClass {
  readonly wire: WireSpec;
  // The parameters are the WireSpec's fields in order; test/errors checks every class round-trips.
  new (...fields: never[]): EngineError;
}

export const ERROR_CLASSES = {
  InvalidProgram, InvalidInput, InvalidOptions, ResourceLimit, KvCacheFull, IndexOutOfRange, IntegerDivideByZero,
  CapabilityMissing, MissingBound, RegionLimit, ContextLimit, MissingContract, NarrowingRange, IntegerToFloat,
  NarrowingRangeUpload, NarrowingRangeInput, NarrowingRangeResult, DispatchRefused, ArgumentMismatch,
  VendorCompilerError, DeadlineExceeded, DevicePoisoned, NoDevice, LoadFailed,
  ActorDown, ActorCrashed, EngineClosed, Aborted,
  UsageError, CacheError, CacheUnavailable, Q4nxError, GgufError, SealError,
  TokenizerError,
  RemoteUnavailable,
  WriteFailed,
  FarmTimeout,
  AddonError,
} as const satisfies Record<ErrorCode, ErrorClass>;

function decode(kind: WireSpec[string], v: unknown): unknown {
  if (kind === 'number') {
    if (typeof v === 'number') return v;
    return v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === '-0' ? -0 : NaN;
  }
  if (kind === 'string?' && v === null) return null;
  if (kind === 'string-' && v === undefined) return '';
  return typeof v === 'string' ? v : String(v);
}

/** Rebuilds the typed error from its wire form; undefined for a code this build does not know. */
export function fromWire(w: WireError): EngineError | undefined {
  if (!Object.hasOwn(ERROR_CLASSES, w.code)) return undefined;
  const cls: ErrorClass = ERROR_CLASSES[w.code];
  const e = Reflect.construct(cls, Object.entries(cls.wire).map(([k, kind]) => decode(kind, w[k]))) as EngineError;
  e.message = w.message;
  return e;
}

/** True for a value that carries the wire form of an EngineError. */
export function isWireError(v: unknown): v is WireError {
  return typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'string'
    && typeof (v as { message?: unknown }).message === 'string';
}
