/** Failures of devices and their drivers: dispatch, arguments, the narrowing range at run time, deadlines. */
import { EngineError } from './base.js';

export type DispatchReason = 'grid-launch' | 'shape-abi' | 'foreign-graph' | 'not-an-argument';

export type ArgumentField = 'name' | 'order' | 'direction' | 'extent' | 'precision';

export class NarrowingRangeUpload extends EngineError {
  readonly code = 'NarrowingRangeUpload' as const;
  constructor(readonly arg: string, readonly index: number, readonly value: number) {
    super(`weight ${arg}[${index}] = ${value} is beyond the narrowing range`);
  }
  static readonly wire = { arg: 'string', index: 'number', value: 'number' } as const;
}

export class NarrowingRangeInput extends EngineError {
  readonly code = 'NarrowingRangeInput' as const;
  constructor(readonly arg: string, readonly index: number, readonly value: number) {
    super(`input ${arg}[${index}] = ${value} is beyond the narrowing range`);
  }
  static readonly wire = { arg: 'string', index: 'number', value: 'number' } as const;
}

export class NarrowingRangeResult extends EngineError {
  readonly code = 'NarrowingRangeResult' as const;
  constructor(readonly result: string, readonly index: number, readonly value: number) {
    super(`result ${result}[${index}] = ${value} left the narrowing range`);
  }
  static readonly wire = { result: 'string', index: 'number', value: 'number' } as const;
}

export class DispatchRefused extends EngineError {
  readonly code = 'DispatchRefused' as const;
  constructor(readonly reason: DispatchReason, detail?: string) {
    super(`dispatch refused (${reason})${detail ? `: ${detail}` : ''}`);
  }
  static readonly wire = { reason: 'string' } as const;
}

export class ArgumentMismatch extends EngineError {
  readonly code = 'ArgumentMismatch' as const;
  constructor(readonly arg: string, readonly field: ArgumentField) {
    super(`compiled graph argument ${arg} differs from the program's in its ${field}`);
  }
  static readonly wire = { arg: 'string', field: 'string' } as const;
}

export class VendorCompilerError extends EngineError {
  readonly code = 'VendorCompilerError' as const;
  constructor(readonly log: string) {
    super(`the vendor compiler rejected a layer:\n${log}`);
  }
  static readonly wire = { log: 'string' } as const;
}

export class DeadlineExceeded extends EngineError {
  readonly code = 'DeadlineExceeded' as const;
  /** `device`: the device that missed it, where a job runs on more than one ('' otherwise). */
  constructor(readonly deadlineMs: number, readonly device = '') {
    super(`the run ${device === '' ? '' : `on ${device} `}missed its deadline of ${deadlineMs} ms; the device is poisoned`);
  }
  static readonly wire = { deadlineMs: 'number', device: 'string-' } as const;
}

export class DevicePoisoned extends EngineError {
  readonly code = 'DevicePoisoned' as const;
  /** `since`: when the device was poisoned, as an ISO 8601 time. */
  constructor(readonly since: string) {
    super(`the device was poisoned by a missed deadline at ${since}`);
  }
  static readonly wire = { since: 'string' } as const;
}

export class NoDevice extends EngineError {
  readonly code = 'NoDevice' as const;
  constructor(readonly device: string, detail?: string) {
    super(`no ${device} device on this machine${detail ? ` (${detail})` : ''}`);
  }
  static readonly wire = { device: 'string' } as const;
}

/** A simulated or real device failed to load an artifact. */
export class LoadFailed extends EngineError {
  readonly code = 'LoadFailed' as const;
  constructor(readonly device: string, readonly detail: string) {
    super(`device ${device} failed to load the artifact: ${detail}`);
  }
  static readonly wire = { device: 'string', detail: 'string' } as const;
}
