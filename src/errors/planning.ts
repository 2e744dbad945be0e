/** Refusals of the planner: what a target does not admit, with the capability, bound or contract it lacks. */
import { EngineError } from './base.js';

export type RegionLimitName = 'tiles' | 'streams-in' | 'streams-out' | 'streams-per-tile' | 'tile-local-bytes';

export class CapabilityMissing extends EngineError {
  readonly code = 'CapabilityMissing' as const;
  constructor(readonly eqn: number, readonly op: string, readonly capability: string) {
    super(`equation ${eqn} (${op}) is not admitted: missing capability ${capability}`);
  }
  static readonly wire = { eqn: 'number', op: 'string', capability: 'string' } as const;
}

export class MissingBound extends EngineError {
  readonly code = 'MissingBound' as const;
  constructor(readonly eqn: number, readonly step: number, readonly bound: string) {
    super(`equation ${eqn}, row kernel step ${step}: no derived error bound (${bound})`);
  }
  static readonly wire = { eqn: 'number', step: 'number', bound: 'string' } as const;
}

export class RegionLimit extends EngineError {
  readonly code = 'RegionLimit' as const;
  constructor(readonly eqn: number, readonly limit: RegionLimitName, readonly needed: number, readonly max: number) {
    super(`equation ${eqn} fits no region: ${limit} needs ${needed}, at most ${max}`);
  }
  static readonly wire = { eqn: 'number', limit: 'string', needed: 'number', max: 'number' } as const;
}

export class ContextLimit extends EngineError {
  readonly code = 'ContextLimit' as const;
  /** `target`: whose device it is, where a partitioned plan counts several ('' otherwise). */
  constructor(readonly needed: number, readonly max: number, readonly target = '') {
    super(`${needed} artifacts need ${needed} hardware contexts, the ${target === '' ? 'device' : `${target} device`} has ${max}`);
  }
  static readonly wire = { needed: 'number', max: 'number', target: 'string-' } as const;
}

export class MissingContract extends EngineError {
  readonly code = 'MissingContract' as const;
  constructor(readonly eqn: number, readonly op: string) {
    super(`equation ${eqn} (${op}): the target records no narrowing contract for this arithmetic`);
  }
  static readonly wire = { eqn: 'number', op: 'string' } as const;
}

export class NarrowingRange extends EngineError {
  readonly code = 'NarrowingRange' as const;
  constructor(readonly eqn: number, readonly value: number) {
    super(`equation ${eqn}: literal ${value} is beyond what FP16 can hold`);
  }
  static readonly wire = { eqn: 'number', value: 'number' } as const;
}

export class IntegerToFloat extends EngineError {
  readonly code = 'IntegerToFloat' as const;
  constructor(readonly eqn: number) {
    super(`equation ${eqn}: an integer converted to a float is refused on an FP16 target`);
  }
  static readonly wire = { eqn: 'number' } as const;
}
