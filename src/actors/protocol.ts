/**
 * The wire protocol between a supervisor and its actor worker, and between a pool and its task
 * workers: one interface per message, joined in unions on a literal `type`, built only by the typed
 * constructors below and recognised only by the guards below (messages cross a thread boundary, so
 * the receiver checks their shape instead of trusting a cast).
 */
import { ActorCrashed, EngineError, fromWire, isWireError, messageOf, type WireError } from '../errors/index.js';

/** Parent → worker, first message: names the actor so errors built in the worker carry its name. */
export interface InitMessage {
  readonly type: 'init';
  readonly name: string;
}

/** Parent → worker: call `method` with `args`; the answer carries the same `id`. */
export interface CallMessage {
  readonly type: 'call';
  readonly id: number;
  readonly method: string;
  readonly args: readonly unknown[];
}

/** Worker → parent, once: the actor is built and serves calls. */
export interface ReadyMessage {
  readonly type: 'ready';
}

/**
 * Worker → parent, instead of 'ready': the actor cannot be built, for a cause a restart cannot fix
 * (its cache directory is a file, say). The supervisor answers every call with `error` and does not
 * restart the worker.
 */
export interface RefusedMessage {
  readonly type: 'refused';
  readonly error: WireError;
}

/** Worker → parent: call `id` returned `value`. */
export interface ReplyMessage {
  readonly type: 'reply';
  readonly id: number;
  readonly value: unknown;
}

/** Worker → parent: call `id` failed with `error`. */
export interface FailMessage {
  readonly type: 'fail';
  readonly id: number;
  readonly error: WireError;
}

/** Worker → parent: an event the actor pushes on its own (progress, log lines). */
export interface EventMessage {
  readonly type: 'event';
  readonly name: string;
  readonly payload: unknown;
}

/** Everything a parent sends to an actor worker. */
export type ParentMessage = InitMessage | CallMessage;
/** Everything an actor worker sends to its parent. */
export type WorkerMessage = ReadyMessage | RefusedMessage | ReplyMessage | FailMessage | EventMessage;

/** Builds an init message. */
export function initMessage(name: string): InitMessage {
  return { type: 'init', name };
}
/** Builds a call message. */
export function callMessage(id: number, method: string, args: readonly unknown[]): CallMessage {
  return { type: 'call', id, method, args };
}
/** Builds the ready message. */
export function readyMessage(): ReadyMessage {
  return { type: 'ready' };
}
/** Builds a refused message. */
export function refusedMessage(error: WireError): RefusedMessage {
  return { type: 'refused', error };
}
/** Builds a reply message. */
export function replyMessage(id: number, value: unknown): ReplyMessage {
  return { type: 'reply', id, value };
}
/** Builds a fail message. */
export function failMessage(id: number, error: WireError): FailMessage {
  return { type: 'fail', id, error };
}
/** Builds an event message. */
export function eventMessage(name: string, payload: unknown): EventMessage {
  return { type: 'event', name, payload };
}

/** The wire form of anything a worker caught: an EngineError as itself, anything else as ActorCrashed. */
export function wireErrorOf(actor: string, thrown: unknown): WireError {
  if (thrown instanceof EngineError) return thrown.toWire();
  const detail = messageOf(thrown);
  return new ActorCrashed(actor, detail).toWire();
}

function record(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** True for a well-formed message from an actor worker. */
export function isWorkerMessage(v: unknown): v is WorkerMessage {
  if (!record(v)) return false;
  switch (v['type']) {
    case 'ready': return true;
    case 'refused': return isWireError(v['error']);
    case 'reply': return typeof v['id'] === 'number';
    case 'fail': return typeof v['id'] === 'number' && isWireError(v['error']);
    case 'event': return typeof v['name'] === 'string';
    default: return false;
  }
}

/** True for a well-formed message from a supervisor. */
export function isParentMessage(v: unknown): v is ParentMessage {
  if (!record(v)) return false;
  switch (v['type']) {
    case 'init': return typeof v['name'] === 'string';
    case 'call': return typeof v['id'] === 'number' && typeof v['method'] === 'string' && Array.isArray(v['args']);
    default: return false;
  }
}

/**
 * Pool → task worker: piscina carries the task, we add the pool's name so that an error the
 * worker builds names the pool.
 */
export interface PoolTaskMessage<Task> {
  readonly type: 'task';
  readonly actor: string;
  readonly task: Task;
}

/** Task worker → pool: piscina clones thrown errors to plain Error, so results carry typed errors as data. */
export type PoolReply<Result> =
  | { readonly ok: true; readonly value: Result }
  | { readonly ok: false; readonly error: WireError };

/** Builds a pool task message. */
export function poolTaskMessage<Task>(actor: string, task: Task): PoolTaskMessage<Task> {
  return { type: 'task', actor, task };
}
/** Builds a successful pool reply. */
export function poolOk<Result>(value: Result): PoolReply<Result> {
  return { ok: true, value };
}
/** Builds a failed pool reply. */
export function poolFail(error: WireError): PoolReply<never> {
  return { ok: false, error };
}

/**
 * Task worker → pool, once, when the entry module has been evaluated: from then on the worker may be
 * terminated. Terminating one still instantiating its modules (piscina loads them with require(esm))
 * aborts the whole process (v8::Module::IsGraphAsync on an uninstantiated module), so the pool waits.
 */
export interface PoolLoadedMessage {
  readonly type: 'pool-loaded';
}

/** Builds the pool-loaded message. */
export function poolLoadedMessage(): PoolLoadedMessage {
  return { type: 'pool-loaded' };
}

/** True for the pool-loaded message. */
export function isPoolLoadedMessage(v: unknown): v is PoolLoadedMessage {
  return record(v) && v['type'] === 'pool-loaded';
}

/** True for a well-formed pool task message. */
export function isPoolTaskMessage(v: unknown): v is PoolTaskMessage<unknown> {
  return record(v) && v['type'] === 'task' && typeof v['actor'] === 'string' && 'task' in v;
}

/** True for a well-formed pool reply. */
export function isPoolReply(v: unknown): v is PoolReply<unknown> {
  if (!record(v)) return false;
  if (v['ok'] === true) return 'value' in v;
  return v['ok'] === false && isWireError(v['error']);
}

/** Rebuilds a wire error as the project's class; a code this build does not know becomes ActorCrashed. */
export function errorFromWire(actor: string, wire: WireError): EngineError {
  // A code outside ErrorCode comes from a newer worker build.
  return fromWire(wire) ?? new ActorCrashed(actor, `unknown error ${wire.code}: ${wire.message}`);
}
