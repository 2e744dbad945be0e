/** The types a caller of an actor sees: method names, arguments and results, states and events. */
import type { Transferable } from 'node:worker_threads';
import type { ActorDown, EngineError } from '../errors/index.js';

/** The names of an actor API's methods (its keys whose values are functions). */
export type MethodName<Api> = {
  [K in keyof Api]-?: Api[K] extends (...args: never[]) => unknown ? K : never;
}[keyof Api] & string;

/** The argument tuple of method `K`. */
export type MethodArgs<Api, K extends keyof Api> = Api[K] extends (...args: infer A) => unknown ? A : never;

/** What a call of method `K` resolves to (a method may be sync or async in the worker). */
export type MethodResult<Api, K extends keyof Api> = Api[K] extends (...args: never[]) => infer R ? Awaited<R> : never;

/** Per-call options. */
export interface CallOptions {
  /** The supervisor rejects the call with DeadlineExceeded if no answer came within this time. */
  readonly deadlineMs?: number;
  /** Moved, not copied, to the worker (ArrayBuffers, MessagePorts). */
  readonly transfer?: readonly Transferable[];
}

/**
 * starting: the first worker has not posted 'ready'; calls queue.
 * ready: calls are served.
 * poisoned: a call missed its deadline on a device actor; calls answer DevicePoisoned until the
 *   replacement worker posts 'ready'.
 * restarting: the worker crashed and a replacement is starting; calls queue.
 * down: the restart intensity was exceeded, and calls answer ActorDown; or the worker refused to start
 *   for a cause a restart cannot fix, and calls answer that error (CacheUnavailable, say).
 * closed: close() was called; calls answer EngineClosed.
 */
export type ActorState = 'starting' | 'ready' | 'poisoned' | 'restarting' | 'down' | 'closed';

/** The supervisor's own events; an actor cannot push events with these names. */
export interface LifecycleEvents {
  /** A worker posted 'ready'. */
  ready: (info: { readonly threadId: number }) => void;
  /** A worker died (uncaught error, exit, start timeout); its in-flight calls failed with ActorCrashed. */
  crash: (info: { readonly threadId: number; readonly detail: string }) => void;
  /** A replacement worker is being started; `restarts` counts those within the intensity window. */
  restart: (info: { readonly restarts: number; readonly reason: 'crash' | 'poison' }) => void;
  /** A call missed its deadline on a device actor. */
  poisoned: (info: { readonly since: string }) => void;
  /** The restart intensity was exceeded; the actor serves no more calls. */
  down: (error: ActorDown) => void;
  /** The worker refused to start for a cause a restart cannot fix; calls answer `error`, and no restart follows. */
  refused: (error: EngineError) => void;
}

/** The names of the lifecycle events. */
type LifecycleName = keyof LifecycleEvents;

// A table, not a list, so that a new lifecycle event cannot be forgotten here.
const lifecycleTable = { ready: true, crash: true, restart: true, poisoned: true, down: true, refused: true } satisfies Record<LifecycleName, true>;

/** Lifecycle event names, checked at run time against the names actors push. */
export const lifecycleNames: ReadonlySet<string> = new Set(Object.keys(lifecycleTable));
