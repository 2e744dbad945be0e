/**
 * The worker side of an actor: `serveActor(impl)` in a worker entry (src/workers/<name>.worker.ts)
 * answers the supervisor's calls with impl's methods. Every call is answered: with the value, with
 * the EngineError's wire form, or, for any other throw, with an ActorCrashed wire error naming it.
 */
import { parentPort, threadId, type MessagePort } from 'node:worker_threads';
import type { EngineError } from '../errors/index.js';
import {
  eventMessage, failMessage, isParentMessage, readyMessage, refusedMessage, replyMessage, wireErrorOf,
  type CallMessage,
} from './protocol.js';
import { takeTransfer } from './transfer.js';
import { lifecycleNames } from './types.js';
import { messageOf } from '../errors/index.js';

/** What serveActor hands back to the worker entry. */
export interface ActorContext<Events extends Record<string, unknown> = Record<string, unknown>> {
  /** The actor's name, as its supervisor calls it (known once the supervisor's init arrived). */
  readonly name: string;
  /** Pushes an event to the supervisor's listeners (progress, log lines). */
  emit<E extends keyof Events & string>(event: E, payload: Events[E]): void;
}

let served = false;

/** Serves `impl`'s methods on the worker's parentPort and posts 'ready'; call once per worker. */
export function serveActor<Api extends object, Events extends Record<string, unknown> = Record<string, unknown>>(
  impl: Api,
  port: MessagePort | null = parentPort,
): ActorContext<Events> {
  if (port === null) throw new Error('serveActor runs inside a worker thread (src/workers/*.worker.ts)');
  if (served) throw new Error('serveActor was called twice in one worker');
  served = true;
  const out = port;
  // Until the supervisor's init arrives (it is the first message, so before any call) errors name the thread.
  let name = `worker ${String(threadId)}`;

  const answer = async (call: CallMessage): Promise<void> => {
    try {
      const value: unknown = await invoke(impl, call);
      try {
        out.postMessage(replyMessage(call.id, value), takeTransfer(value));
      } catch (e) {
        // An uncloneable value (a function, a class with private state) must still answer the call.
        out.postMessage(failMessage(call.id, wireErrorOf(name, new Error(`the reply of ${call.method} cannot cross threads: ${messageOf(e)}`))));
      }
    } catch (e) {
      out.postMessage(failMessage(call.id, wireErrorOf(name, e)));
    }
  };

  out.on('message', (m: unknown) => {
    if (!isParentMessage(m)) return;
    if (m.type === 'init') { name = m.name; return; }
    void answer(m);
  });
  out.postMessage(readyMessage());

  return {
    get name() { return name; },
    emit(event, payload) {
      if (lifecycleNames.has(event)) throw new Error(`actor event name ${event} is reserved for the supervisor`);
      out.postMessage(eventMessage(event, payload));
    },
  };
}

/**
 * Tells the supervisor, in place of serveActor, that this actor cannot start for a cause a restart
 * cannot fix: every call is answered with `error`, and the worker is not restarted. Only a typed error
 * the actor chose to give qualifies; anything it did not foresee should throw, and be restarted.
 */
export function refuseStart(error: EngineError, port: MessagePort | null = parentPort): void {
  if (port === null) throw new Error('refuseStart runs inside a worker thread (src/workers/*.worker.ts)');
  if (served) throw new Error('refuseStart was called after serveActor in one worker');
  served = true;
  const out = port;
  // Stays alive, listening, until the supervisor terminates it; a call that raced the refusal is
  // answered the same way.
  out.on('message', (m: unknown) => {
    if (isParentMessage(m) && m.type === 'call') out.postMessage(failMessage(m.id, error.toWire()));
  });
  out.postMessage(refusedMessage(error.toWire()));
}

async function invoke(impl: object, call: CallMessage): Promise<unknown> {
  // Only the API's own methods: never Object.prototype's (`constructor`, `toString`, `__proto__`).
  const fn: unknown = call.method in Object.prototype ? undefined : Reflect.get(impl, call.method);
  if (typeof fn !== 'function') throw new Error(`the actor has no method ${call.method}`);
  return await Reflect.apply(fn, impl, call.args);
}

