/**
 * Marks a reply value for transfer instead of copy (the ArrayBuffers of a tensor, say), the way
 * comlink's `transfer()` does: the value itself is returned, so a method keeps its declared type.
 */
import type { Transferable } from 'node:worker_threads';

const marks = new WeakMap<object, readonly Transferable[]>();

/** Returns `value`, remembering that replying with it moves `list` to the receiving thread. */
export function transfer<T extends object>(value: T, list: readonly Transferable[]): T {
  marks.set(value, list);
  return value;
}

/** @internal The transfer list registered for a reply value, consumed once. */
export function takeTransfer(value: unknown): readonly Transferable[] {
  if (typeof value !== 'object' || value === null) return [];
  const list = marks.get(value);
  if (list === undefined) return [];
  marks.delete(value);
  return list;
}
