/**
 * Decodes an equation's attributes by the kinds its op's row declares (`dtype`, `int`, `ints`, `body`,
 * `reduce`), so every shape rule receives well-typed values. Which attributes an op takes comes from the
 * op table only; this file knows the kinds, never the ops.
 */
import { InvalidProgram } from '../errors/index.js';
import type { AttrKind, AttrSpec } from './ops.js';
import { hasOwn, kindOf, ptr, setOwn } from './pointer.js';
import { decodeRowBody } from './rowBody.js';
import { DTYPE_LIST, isDType } from './scalars.js';
import type { RowBody } from './types.js';

function integer(v: unknown, path: string, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new InvalidProgram(path, `${what} is an integer, not ${kindOf(v)}`);
  return v;
}

/** Decodes one attribute value of kind `kind` at `path` (the attribute's own pointer). */
function decodeAttr(kind: AttrKind, v: unknown, path: string, key: string): unknown {
  switch (kind) {
    case 'dtype':
      if (!isDType(v)) throw new InvalidProgram(path, `attribute ${key} is a dtype (${DTYPE_LIST}), not ${kindOf(v)}`);
      return v;
    case 'int':
      return integer(v, path, `attribute ${key}`);
    case 'ints':
      if (!Array.isArray(v)) throw new InvalidProgram(path, `attribute ${key} is an array of integers, not ${kindOf(v)}`);
      return v.map((x, k) => integer(x, ptr(path, k), `each entry of ${key}`));
    case 'body':
      return decodeRowBody(v, path);
    case 'reduce':
      if (v !== 'sum') throw new InvalidProgram(path, `attribute ${key} is "sum" (the only reduction collectives have), not ${kindOf(v)}`);
      return v;
  }
}

/** An equation's decoded attributes, and its row bodies typed for the checks validation makes on them. */
export interface DecodedAttrs {
  readonly attrs: Record<string, unknown>;
  readonly bodies: readonly (readonly [string, RowBody])[];
}

/**
 * Decodes the attributes of equation `base` (its pointer) for an op whose row declares `specs`: refuses a
 * key the op does not take, a missing required one, and a value of the wrong kind. An attribute whose
 * value is `undefined` (an optional one left out by code) counts as absent.
 */
export function decodeAttrs(op: string, specs: Readonly<Record<string, AttrSpec>>, attrs: Readonly<Record<string, unknown>>, base: string): DecodedAttrs {
  const known = Object.keys(specs);
  const takes = known.length === 0 ? 'takes no attributes' : `takes ${known.join(', ')}`;
  for (const k of Object.keys(attrs)) {
    if (!hasOwn(specs, k) && attrs[k] !== undefined) throw new InvalidProgram(ptr(base, k), `${op} has no attribute ${k} (it ${takes})`);
  }
  const out: Record<string, unknown> = {};
  const bodies: [string, RowBody][] = [];
  for (const [k, spec] of Object.entries(specs)) {
    const v = hasOwn(attrs, k) ? attrs[k] : undefined;
    if (v === undefined) {
      if (spec.optional !== true) throw new InvalidProgram(ptr(base, k), `${op} needs attribute ${k}`);
      continue;
    }
    if (spec.kind === 'body') {
      const body = decodeRowBody(v, ptr(base, k));
      bodies.push([k, body]);
      setOwn(out, k, body);
    } else {
      setOwn(out, k, decodeAttr(spec.kind, v, ptr(base, k), k));
    }
  }
  return { attrs: out, bodies };
}
