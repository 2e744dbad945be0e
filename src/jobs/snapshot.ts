/**
 * A caller's program or inputs copied, at submit, into plain data the engine owns: objects, arrays,
 * strings, numbers, booleans, null and typed arrays (a Tensor's `data`). What JSON or a worker thread
 * cannot carry is refused with the JSON pointer of the value: a getter that throws, a circular
 * reference, a BigInt, a Symbol, a function. Shared references stay shared (one tensor reused for every
 * step is copied once). The walk keeps its own stack, so no depth of nesting overflows the thread's.
 */
import { messageOf, ResourceLimit } from '../errors/index.js';
import { ptr, setOwn } from '../ir/pointer.js';

/**
 * The longest plain array copied (docs/LIMITS.md): longer than any tensor's `data` under the
 * default limits. A larger tensor is given as a Tensor object, whose Float64Array is copied whole.
 */
const MAX_ARRAY_LENGTH = 2 ** 28;

/** How a refusal is raised: InvalidProgram for a program, InvalidInput for inputs. */
export type Refuse = (path: string, reason: string) => Error;

interface Frame {
  readonly src: object;
  readonly dst: Record<string, unknown> | unknown[];
  /** An object's own enumerable keys; null for an array, whose indices run to `length`. */
  readonly keys: readonly string[] | null;
  readonly length: number;
  readonly path: string;
  next: number;
}


/** A copy of `value` as plain data; throws `refuse(path, reason)` for what plain data cannot hold. */
export function snapshot(value: unknown, refuse: Refuse, root = ''): unknown {
  const copies = new Map<object, unknown>();
  // Objects whose copy is still being filled: meeting one again is a cycle.
  const open = new Map<object, string>();
  const stack: Frame[] = [];

  const frameOf = (o: object, path: string): Frame => {
    let isArray: boolean;
    let keys: readonly string[] | null = null;
    let length: number;
    try {
      isArray = Array.isArray(o);
      if (isArray) length = (o as unknown[]).length;
      else { keys = Object.keys(o); length = keys.length; }
    } catch (e) {
      throw refuse(path, `listing its keys threw ${messageOf(e)}`);
    }
    if (length > MAX_ARRAY_LENGTH) throw new ResourceLimit('array-length', length, MAX_ARRAY_LENGTH, path === '' ? '(root)' : path);
    return { src: o, dst: isArray ? [] : {}, keys, length, path, next: 0 };
  };

  // A primitive or a finished copy as it is; a new object gets an empty copy and a frame to fill it.
  const take = (v: unknown, path: string): unknown => {
    switch (typeof v) {
      case 'bigint': throw refuse(path, `a BigInt (${String(v)}n) is not a JSON number`);
      case 'symbol': throw refuse(path, `a Symbol (${v.description ?? ''}) is not a JSON value`);
      case 'function': throw refuse(path, 'a function is not a JSON value');
      case 'object': break;
      default: return v;
    }
    if (v === null) return null;
    const done = copies.get(v);
    if (done !== undefined) return done;
    const cycle = open.get(v);
    if (cycle !== undefined) throw refuse(path, `a circular reference (back to ${cycle === root ? 'the root' : cycle})`);
    if (ArrayBuffer.isView(v)) {
      const copy: unknown = v instanceof DataView ? new DataView(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) : (v as unknown as Float64Array).slice();
      copies.set(v, copy);
      return copy;
    }
    const frame = frameOf(v, path);
    open.set(v, path);
    stack.push(frame);
    return frame.dst;
  };

  const result = take(value, root);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.next === f.length) {
      stack.pop();
      open.delete(f.src);
      copies.set(f.src, f.dst);
      continue;
    }
    const k: string | number = f.keys === null ? f.next : f.keys[f.next]!;
    f.next++;
    const at = ptr(f.path, k);
    let v: unknown;
    try {
      v = (f.src as Record<string | number, unknown>)[k];
    } catch (e) {
      throw refuse(at, `reading it threw ${messageOf(e)}`);
    }
    const copy = take(v, at);
    if (Array.isArray(f.dst)) f.dst.push(copy);
    // setOwn: a key `__proto__` stays a key, as JSON.parse keeps it, not the copy's prototype.
    else setOwn(f.dst, String(k), copy);
  }
  return result;
}
