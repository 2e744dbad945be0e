/**
 * comlink flattens a thrown error to a plain Error (message, name, stack). Ours cross as their wire form
 * and are rebuilt as their own class, so a caller across a port catches `DeadlineExceeded` with its
 * fields as it would in-process. Both sides of a connection install this before they speak.
 */
import { transferHandlers, type TransferHandler } from 'comlink';
import { ActorCrashed, EngineError, fromWire, isWireError, type WireError } from '../errors/index.js';

/** What comlink's 'throw' handler is given: the thrown value under `value`. */
interface Thrown { readonly value: unknown }

/** Our wire form, marked so it is told apart from what comlink's own handler writes. */
interface ThrownEngineError { readonly engineError: WireError }

function isThrownEngineError(v: unknown): v is ThrownEngineError {
  return typeof v === 'object' && v !== null && isWireError((v as { engineError?: unknown }).engineError);
}

let installed = false;

/** Makes comlink carry the project's error classes, thrown or returned, as themselves (idempotent). */
export function installErrorTransfer(): void {
  if (installed) return;
  installed = true;
  const base = transferHandlers.get('throw') as TransferHandler<Thrown, unknown>;
  const thrown: TransferHandler<Thrown, unknown> = {
    canHandle: (v): v is Thrown => base.canHandle(v),
    serialize: (t) => (t.value instanceof EngineError ? [{ engineError: t.value.toWire() } satisfies ThrownEngineError, []] : base.serialize(t)),
    deserialize: (s) => {
      if (isThrownEngineError(s)) throw rebuilt(s.engineError);
      return base.deserialize(s);
    },
  };
  // Replaced under its own key: comlink tries handlers in order and the other side looks one up by name.
  transferHandlers.set('throw', thrown);
  const value: TransferHandler<EngineError, WireError> = {
    canHandle: (v): v is EngineError => v instanceof EngineError,
    serialize: (e) => [e.toWire(), []],
    deserialize: (w) => rebuilt(w),
  };
  transferHandlers.set('engineError', value);
}

// An error of a code this build does not know (a newer host) still arrives typed.
function rebuilt(w: WireError): EngineError {
  return fromWire(w) ?? new ActorCrashed('engine', `unknown error ${w.code}: ${w.message}`);
}
