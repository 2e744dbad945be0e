/** Refusals of what a caller wrote: a program, its inputs, engine options, a documented limit. */
import { EngineError } from './base.js';

/** The program breaks the format: `path` is a JSON pointer into the program. */
export class InvalidProgram extends EngineError {
  readonly code = 'InvalidProgram' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`invalid program at ${path === '' ? '(root)' : path}: ${reason}`);
  }
  static readonly wire = { path: 'string', reason: 'string' } as const;
}

/** Inputs, weights or state supplied to a program do not match its args (engine extension). */
export class InvalidInput extends EngineError {
  readonly code = 'InvalidInput' as const;
  constructor(readonly path: string, readonly reason: string) {
    super(`invalid input at ${path === '' ? '(root)' : path}: ${reason}`);
  }
  static readonly wire = { path: 'string', reason: 'string' } as const;
}

/** An option given to createEngine or submit is not one the engine accepts: `field` names it. */
export class InvalidOptions extends EngineError {
  readonly code = 'InvalidOptions' as const;
  constructor(readonly field: string, readonly reason: string) {
    super(`invalid option ${field}: ${reason}`);
  }
  static readonly wire = { field: 'string', reason: 'string' } as const;
}

/** A program, a file or a request is past one of the engine's documented limits (docs/LIMITS.md). */
export class ResourceLimit extends EngineError {
  readonly code = 'ResourceLimit' as const;
  /** `what`: the limit's name (`elements-per-tensor`, `program-bytes`, `equations`, `file-bytes`, ...). */
  constructor(readonly what: string, readonly needed: number, readonly max: number, readonly place = '') {
    super(`${place === '' ? '' : `${place}: `}${what} ${needed} is past the limit ${max}`);
  }
  // `place` (a JSON pointer or a file; '' where the limit has none) crosses too, so a rebuilt error reads the same.
  static readonly wire = { what: 'string', needed: 'number', max: 'number', place: 'string' } as const;
}

/**
 * A generation the model's KV budget cannot hold now (src/model/qwen3/kv.ts): it needs `needed` blocks of
 * `block` positions (its prompt and max tokens, within the context) and `free` of the budget's `total`
 * are free. `needed` past `total` never fits; otherwise it fits once running generations end.
 */
export class KvCacheFull extends EngineError {
  readonly code = 'KvCacheFull' as const;
  constructor(readonly needed: number, readonly free: number, readonly total: number, readonly block: number) {
    super(needed > total
      ? `the KV budget holds ${total} blocks of ${block} positions; this generation (its prompt and max tokens) needs ${needed}`
      : `the KV budget is full: this generation (its prompt and max tokens) needs ${needed} blocks of ${block} positions, ${free} of ${total} are free`);
  }
  static readonly wire = { needed: 'number', free: 'number', total: 'number', block: 'number' } as const;
}

export class IndexOutOfRange extends EngineError {
  readonly code = 'IndexOutOfRange' as const;
  constructor(readonly eqn: number, readonly index: number, readonly extent: number) {
    super(`equation ${eqn}: index ${index} is outside its axis of extent ${extent}`);
  }
  static readonly wire = { eqn: 'number', index: 'number', extent: 'number' } as const;
}

export class IntegerDivideByZero extends EngineError {
  readonly code = 'IntegerDivideByZero' as const;
  constructor(readonly eqn: number) {
    super(`equation ${eqn}: i32 division by zero`);
  }
  static readonly wire = { eqn: 'number' } as const;
}
