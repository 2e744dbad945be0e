/**
 * The size limits of a program (docs/LIMITS.md): how large it may be before anything is
 * allocated for it. Validation and decoding check them; the engine takes them as an option and the CLI
 * as flags. Counting is exact (BigInt), so no product of dimensions rounds under a limit, and every
 * refusal is a ResourceLimit naming the limit, what was needed, the bound and the JSON pointer.
 */
import { InvalidOptions, ResourceLimit } from '../errors/index.js';
import { ptr } from './pointer.js';
import { exactNumel, type Shape } from './types.js';

/** The limits a program is checked against; each is a positive safe integer (Infinity: no limit). */
export interface Limits {
  /** Elements of any one tensor: an arg or an equation's result. */
  readonly elementsPerTensor: number;
  /**
   * Bytes of the values one step holds at once, at 8 bytes per element: the engine holds every value as
   * a Float64Array (src/ir/tensor.ts), whatever its dtype. Args, results and states' next values are held
   * for the whole step; any other equation result from its equation to its last reader (the peak of the
   * live values, not the sum of every value: the oracle lets a value go after its last reader).
   */
  readonly programBytes: number;
  /** Equations of a program. */
  readonly equations: number;
  /** Nesting depth of a program document: objects and arrays, attributes included (`{}` is 1). */
  readonly jsonDepth: number;
}

/** The name each limit has in a ResourceLimit's `what`. */
export const LIMIT_NAMES = {
  elementsPerTensor: 'elements-per-tensor',
  programBytes: 'program-bytes',
  equations: 'equations',
  jsonDepth: 'json-depth',
} as const satisfies { readonly [K in keyof Limits]: string };

/**
 * Sized for a 24 GB machine: one tensor of 2^28 elements is 2 GiB as the engine holds it, a whole step
 * 8 GiB, so a program at the limits still leaves room for the oracle's copy and the device's buffers.
 */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  elementsPerTensor: 2 ** 28,
  programBytes: 2 ** 33,
  equations: 100_000,
  jsonDepth: 64,
});

/** No limit at all: for re-checking a program that was already checked where it entered the engine. */
export const NO_LIMITS: Limits = Object.freeze({ elementsPerTensor: Infinity, programBytes: Infinity, equations: Infinity, jsonDepth: Infinity });

/** Bytes per element the engine holds (a Float64Array element). */
const HELD_BYTES_PER_ELEMENT = 8;

/** The limits of `given` over the defaults; InvalidOptions naming `field.key` for a key or value not accepted. */
export function resolveLimits(given: unknown, field = 'limits'): Limits {
  if (given === undefined) return DEFAULT_LIMITS;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new InvalidOptions(field, 'an object of limits ({ elementsPerTensor, programBytes, equations, jsonDepth })');
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(given)) {
    if (!Object.prototype.hasOwnProperty.call(LIMIT_NAMES, k)) throw new InvalidOptions(`${field}.${k}`, `no such limit (the limits: ${Object.keys(LIMIT_NAMES).join(', ')})`);
    if (v === undefined) continue;
    if (!(v === Infinity || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1))) {
      throw new InvalidOptions(`${field}.${k}`, `a limit is a positive whole number (or Infinity), not ${typeof v === 'number' ? String(v) : typeof v}`);
    }
    out[k] = v;
  }
  return out as unknown as Limits;
}

function over(n: bigint, max: number): boolean {
  return max !== Infinity && n > BigInt(max);
}

/** Refuses a shape of more elements than the limit; returns its exact element count. */
export function checkElements(shape: Shape, limits: Limits, place: string): bigint {
  const n = exactNumel(shape);
  if (over(n, limits.elementsPerTensor)) throw new ResourceLimit(LIMIT_NAMES.elementsPerTensor, Number(n), limits.elementsPerTensor, place);
  return n;
}

/**
 * Counts the bytes of the values a program holds at once, refusing the value whose definition takes the
 * live total past the limit. A value added with a name can be let go (`release`) after its last reader;
 * one added without a name is held to the end.
 */
export class ByteBudget {
  #held = 0n;
  #peak = 0n;
  readonly #named = new Map<string, bigint>();
  constructor(private readonly limits: Limits) {}
  /** Adds one value of `elements` elements, defined at `place` (named `name`, to be released later). */
  add(elements: bigint, place: string, name?: string): void {
    this.addBytes(elements * BigInt(HELD_BYTES_PER_ELEMENT), place, name);
  }
  /** Adds one value held as `bytes` bytes (a quantized weight, held as its blocks), defined at `place`. */
  addBytes(bytes: bigint, place: string, name?: string): void {
    this.#held += bytes;
    if (name !== undefined) this.#named.set(name, (this.#named.get(name) ?? 0n) + bytes);
    if (this.#held > this.#peak) this.#peak = this.#held;
    if (over(this.#held, this.limits.programBytes)) throw new ResourceLimit(LIMIT_NAMES.programBytes, Number(this.#held), this.limits.programBytes, place);
  }
  /** Lets the value `name` go (after its last reader); a name not held is ignored. */
  release(name: string): void {
    const b = this.#named.get(name);
    if (b === undefined) return;
    this.#named.delete(name);
    this.#held -= b;
  }
  /** The most bytes held at once so far. */
  get peak(): bigint { return this.#peak; }
}

/** Refuses a program of more equations than the limit. */
export function checkEquationCount(n: number, limits: Limits, place = '/eqns'): void {
  if (n > limits.equations) throw new ResourceLimit(LIMIT_NAMES.equations, n, limits.equations, place);
}

/** What a walk over a JSON value found: its depth, the first value too deep, the first non-finite number. */
export interface JsonMeasure {
  /** Nesting depth: objects and arrays; a scalar is 0. */
  readonly depth: number;
  /** The pointer of the first value deeper than the `max` asked about. */
  readonly deepest?: string;
  /** The pointer of the first number that is not finite (JSON text writes `1e999` and means infinity). */
  readonly nonFinite?: string;
}

/**
 * Measures a JSON value. Walked with a stack of its own, not recursion, so a document nested a million
 * deep is measured rather than overflowing the call stack; an object met twice (a cycle) is not entered
 * again.
 */
export function measureJson(root: unknown, max: number): JsonMeasure {
  interface Frame { readonly v: unknown; readonly depth: number; readonly parent?: Frame; readonly key?: string | number }
  const path = (f: Frame): string => {
    const keys: (string | number)[] = [];
    for (let g: Frame | undefined = f; g?.parent !== undefined; g = g.parent) keys.push(g.key!);
    return ptr('', ...keys.reverse());
  };
  const seen = new Set<object>();
  const stack: Frame[] = [{ v: root, depth: 0 }];
  let depth = 0;
  let deepest: string | undefined;
  let nonFinite: string | undefined;
  while (stack.length > 0) {
    const f = stack.pop()!;
    const v = f.v;
    if (typeof v === 'number') {
      if (!Number.isFinite(v) && nonFinite === undefined) nonFinite = path(f);
      continue;
    }
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    const d = f.depth + 1;
    if (d > depth) depth = d;
    if (d > max && deepest === undefined) deepest = path(f);
    if (Array.isArray(v)) {
      for (let k = v.length - 1; k >= 0; k--) stack.push({ v: v[k], depth: d, parent: f, key: k });
    } else {
      const keys = Object.keys(v);
      for (let k = keys.length - 1; k >= 0; k--) stack.push({ v: (v as Record<string, unknown>)[keys[k]!], depth: d, parent: f, key: keys[k]! });
    }
  }
  return { depth, ...(deepest === undefined ? {} : { deepest }), ...(nonFinite === undefined ? {} : { nonFinite }) };
}

/** Refuses a JSON value nested deeper than the limit, at the first value too deep. */
export function checkJsonDepth(v: unknown, limits: Limits, base = ''): void {
  if (limits.jsonDepth === Infinity) return;
  const m = measureJson(v, limits.jsonDepth);
  if (m.deepest !== undefined) throw new ResourceLimit(LIMIT_NAMES.jsonDepth, m.depth, limits.jsonDepth, base + m.deepest);
}
