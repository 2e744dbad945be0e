/**
 * A caller's AbortSignal (`engine.submit(spec, { signal })`, `model.generate(request, { signal })`):
 * checked where it is handed over, and turned into the typed Aborted error. An abort settles the
 * caller's promise at once; the work stops at its next step boundary (a step in flight on a device
 * runs to its end, within its deadline) and then lets go of what it held.
 */
import { Aborted, InvalidOptions, messageOf } from '../errors/index.js';

/** What takes a signal. */
export interface AbortOptions {
  /** Aborting it ends the work with Aborted and lets go of what it held (docs in README). */
  readonly signal?: AbortSignal;
}

/** The signal of an options argument; InvalidOptions naming `field` for anything but an AbortSignal. */
export function signalOf(options: unknown, field = 'signal'): AbortSignal | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw new InvalidOptions('options', `an object such as { signal }, not ${options === null ? 'null' : typeof options}`);
  let s: unknown;
  try { s = (options as { signal?: unknown }).signal; } catch (e) { throw new InvalidOptions(field, `reading it threw ${messageOf(e)}`); }
  if (s === undefined) return undefined;
  if (!(s instanceof AbortSignal)) throw new InvalidOptions(field, 'an AbortSignal (new AbortController().signal)');
  return s;
}

/** The Aborted error of an aborted signal: its reason in words. */
export function abortedBy(signal: AbortSignal): Aborted {
  const r: unknown = signal.reason;
  return new Aborted(r === undefined ? 'the signal was aborted' : messageOf(r));
}

/** Throws Aborted when the signal is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortedBy(signal);
}

/**
 * `p`, or Aborted as soon as the signal aborts, whichever comes first (`p` itself runs on; what it
 * rejects with later is left unheard).
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(abortedBy(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => { p.catch(() => undefined); reject(abortedBy(signal)); };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e: unknown) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}
