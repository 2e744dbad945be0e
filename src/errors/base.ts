/**
 * The base of every refusal and failure of the engine (docs/PROGRAM_FORMAT.md's error table): the
 * codes, the wire form, and EngineError, whose classes live beside this file by family.
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
  | 'Aborted'
  | 'LoadFailed'
  | 'UsageError'
  | 'CacheError'
  | 'CacheUnavailable'
  | 'ResourceLimit'
  | 'KvCacheFull'
  | 'InvalidOptions'
  | 'Q4nxError'
  | 'GgufError'
  | 'SealError'
  | 'TokenizerError'
  | 'RemoteUnavailable'
  | 'WriteFailed'
  | 'FarmTimeout'
  | 'AddonError';

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

/**
 * How a class's fields cross the wire, in its constructor's parameter order: one generic path
 * (fields() here, fromWire in table.ts) writes and rebuilds every class from this.
 */
// 'string?' may be null; 'string-' is left off the wire when empty (a field added to a code later,
// so the code's established shape stays exactly as it was wherever the field is not set).
export type WireSpec = Readonly<Record<string, 'number' | 'string' | 'string?' | 'string-'>>;

/** The base of every typed error of the engine; each class declares `static wire` (a WireSpec). */
export abstract class EngineError extends Error {
  abstract readonly code: ErrorCode;
  /** The fields the error table names for this code, in order, as JSON writes them. */
  fields(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, kind] of Object.entries((this.constructor as unknown as { readonly wire: WireSpec }).wire)) {
      const v = (this as unknown as Record<string, unknown>)[k];
      if (kind === 'string-' && v === '') continue;
      out[k] = kind === 'number' && typeof v === 'number' ? wireNumber(v) : v;
    }
    return out;
  }
  /** The plain-data form: `{ code, message, ...fields }`. */
  toWire(): WireError {
    return { code: this.code, message: this.message, ...this.fields() };
  }
}

