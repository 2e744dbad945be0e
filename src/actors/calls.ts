/** @internal The supervisor's table of unanswered calls, matched to replies by id. */
import type { Transferable, Worker } from 'node:worker_threads';

/** @internal One call the supervisor has not answered yet. */
export interface PendingCall {
  readonly id: number;
  readonly method: string;
  readonly args: readonly unknown[];
  readonly transfer: readonly Transferable[];
  /** The worker the call was posted to; null while it waits for a worker to be ready. */
  posted: Worker | null;
  timer: NodeJS.Timeout | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** @internal Every unanswered call; settling one removes it and its deadline timer, exactly once. */
export class CallTable {
  readonly #calls = new Map<number, PendingCall>();
  #nextId = 1;

  /** Registers a call that waits for a ready worker. */
  add(method: string, args: readonly unknown[], transfer: readonly Transferable[],
    resolve: (value: unknown) => void, reject: (error: unknown) => void): PendingCall {
    const call: PendingCall = { id: this.#nextId++, method, args, transfer, posted: null, timer: undefined, resolve, reject };
    this.#calls.set(call.id, call);
    return call;
  }

  /** The unanswered call with this id, if any. */
  get(id: number): PendingCall | undefined {
    return this.#calls.get(id);
  }

  /** True while the call is unanswered. */
  has(call: PendingCall): boolean {
    return this.#calls.get(call.id) === call;
  }

  /** How many calls are unanswered. */
  get size(): number {
    return this.#calls.size;
  }

  /** Answers the call with a value. */
  resolve(call: PendingCall, value: unknown): void {
    if (this.#remove(call)) call.resolve(value);
  }

  /** Answers the call with an error. */
  reject(call: PendingCall, error: unknown): void {
    if (this.#remove(call)) call.reject(error);
  }

  /** Answers every call `which` selects with an error made for each (errors carry their own stack). */
  rejectAll(error: () => unknown, which: (call: PendingCall) => boolean = () => true): void {
    for (const call of [...this.#calls.values()]) if (which(call)) this.reject(call, error());
  }

  /** The calls waiting for a ready worker, oldest first (a Map iterates in insertion order). */
  waiting(): PendingCall[] {
    return [...this.#calls.values()].filter((c) => c.posted === null);
  }

  #remove(call: PendingCall): boolean {
    if (!this.has(call)) return false;
    this.#calls.delete(call.id);
    clearTimeout(call.timer);
    return true;
  }
}
