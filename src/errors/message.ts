/** What a thrown value says, in one line, whatever was thrown. */
import { EngineError } from './base.js';

/**
 * The message of a thrown value: an EngineError's message (its code is reported beside it), any other
 * error's name and message (`TypeError: x is not a function`), anything else as a string.
 */
export function messageOf(e: unknown): string {
  if (e instanceof EngineError) return e.message;
  if (e instanceof Error) return e.name === '' ? e.message : `${e.name}: ${e.message}`;
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}
