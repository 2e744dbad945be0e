/** Failures of the actors that serve jobs, and of the engine around them. */
import { EngineError } from './base.js';

/** An actor crashed more often than its restart intensity allows and is reported down. */
export class ActorDown extends EngineError {
  readonly code = 'ActorDown' as const;
  constructor(readonly actor: string, readonly restarts: number, readonly windowMs: number) {
    super(`actor ${actor} is down: ${restarts} restarts within ${windowMs} ms`);
  }
  static readonly wire = { actor: 'string', restarts: 'number', windowMs: 'number' } as const;
}

/** The actor serving a job crashed while the job was in flight. */
export class ActorCrashed extends EngineError {
  readonly code = 'ActorCrashed' as const;
  constructor(readonly actor: string, readonly detail: string) {
    super(`actor ${actor} crashed: ${detail}`);
  }
  static readonly wire = { actor: 'string', detail: 'string' } as const;
}

export class EngineClosed extends EngineError {
  readonly code = 'EngineClosed' as const;
  constructor() { super('the engine is closed'); }
  static readonly wire = {} as const;
}

/**
 * The caller's AbortSignal ended the work (a job, a generation) before it finished; what it held (its
 * queue place, its device session) is let go. `reason`: the signal's reason, in words.
 */
export class Aborted extends EngineError {
  readonly code = 'Aborted' as const;
  constructor(readonly reason: string) {
    super(`aborted: ${reason}`);
  }
  static readonly wire = { reason: 'string' } as const;
}
