/**
 * JSON pointers (RFC 6901) and the small type tests every decoder of the wire formats shares. Every
 * refusal names its place as a pointer, so the helpers here build them the one correct way.
 */
import { quote } from '../io/escape.js';

/** Escapes one reference token of a JSON pointer (`~` as `~0`, `/` as `~1`, in that order). */
export function escapeToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Appends reference tokens to a pointer: `ptr('/eqns', 3, 'in')` is `/eqns/3/in`. */
export function ptr(base: string, ...tokens: readonly (string | number)[]): string {
  let p = base;
  for (const t of tokens) p += '/' + escapeToken(t);
  return p;
}

/** A plain JSON object (not an array, not null). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Describes a JSON value's kind for messages ("a string", "an array", "null"). */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'string') return `the string ${quote(v)}`;
  // In decoded JSON, undefined is only ever a key that is not there.
  if (v === undefined) return 'a missing key';
  return `a ${typeof v}`;
}

/** True for an own key of an object (so `constructor` or `__proto__` in user names is never inherited). */
export function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/**
 * Sets an own, enumerable property even for the key `__proto__`, which plain assignment would take as
 * the object's prototype: names come from users, and an arg called `__proto__` must stay a name.
 */
export function setOwn<T>(o: Record<string, T>, k: string, v: T): void {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

const VALUE_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/**
 * Why `n` is not a value name the format accepts, or undefined when it is one. A name is a plain
 * identifier (a letter or `_`, then letters, digits, `_` or `.`), and one starting with `__` is reserved:
 * names become object keys in inputs files and results, where `__proto__` cannot be a key at all.
 */
export function valueNameProblem(n: string): string | undefined {
  if (!VALUE_NAME.test(n)) return `${JSON.stringify(n)} is not a plain name: a letter or "_", then letters, digits, "_" or "."`;
  if (n.startsWith('__')) return `${JSON.stringify(n)} starts with "__", which is reserved`;
  return undefined;
}
