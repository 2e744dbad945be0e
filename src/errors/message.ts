/** What a thrown value says, in one line, whatever was thrown. */
import { EngineError } from './base.js';

/** The message of a thrown value: an EngineError's or a plain Error's message, a foreign error's name too. */
export function messageOf(e: unknown): string {
  if (e instanceof EngineError) return e.message;
  if (e instanceof Error) return e.name === 'Error' || e.name === '' ? e.message : `${e.name}: ${e.message}`;
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}
