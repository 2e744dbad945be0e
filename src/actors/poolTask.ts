/**
 * The worker side of a task pool: a pool entry's default export is `servePoolTask(fn)`. The handler
 * never throws across piscina (which would flatten the error to a plain Error): it answers PoolReply
 * data, an EngineError as its wire form and any other throw as an ActorCrashed wire error.
 */
import { parentPort } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { ActorCrashed } from '../errors/index.js';
import { isPoolTaskMessage, poolFail, poolLoadedMessage, poolOk, wireErrorOf } from './protocol.js';
import { takeTransfer } from './transfer.js';

/** Wraps a task function as a piscina handler that answers typed PoolReply data; export it as default. */
export function servePoolTask<Task, Result>(fn: (task: Task) => Result | Promise<Result>): (message: unknown) => Promise<unknown> {
  // Called as the entry's default export is evaluated: its modules are instantiated (see PoolLoadedMessage).
  parentPort?.postMessage(poolLoadedMessage());
  return async (message: unknown): Promise<unknown> => {
    if (!isPoolTaskMessage(message)) return poolFail(new ActorCrashed('pool', 'the task was not sent by createPool').toWire());
    try {
      // createPool sends the Task type this entry was written for.
      const value = await fn(message.task as Task);
      const reply = poolOk(value);
      const list = takeTransfer(value);
      // Piscina moves a result only when it is wrapped as one of its Transferables.
      return list.length === 0 ? reply : move({ [transferableSymbol]: [...list], [valueSymbol]: reply });
    } catch (e) {
      return poolFail(wireErrorOf(message.actor, e));
    }
  };
}
