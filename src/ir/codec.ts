/**
 * The program JSON codec: the structural decode of a `program@1` document into a Program, and back.
 * Only the document's shape is checked here (types of fields, dtype names, shapes, literal spellings);
 * names, ops, attributes and types are checked by validation (validate.ts).
 */
import { InvalidProgram, messageOf, ResourceLimit } from '../errors/index.js';
import { jsonErrorAt } from './jsonText.js';
import { DEFAULT_LIMITS, LIMIT_NAMES, checkEquationCount, measureJson, type Limits } from './limits.js';
import { decodeOperands, encodeOperand } from './operand.js';
import { hasOwn, isRecord, kindOf, ptr, setOwn, valueNameProblem } from './pointer.js';
import { ANY_DTYPE_LIST, isAnyDType, isDType } from './scalars.js';
import { quantShapeProblem } from '../numerics/quant.js';
import { isQuantized, type Arg, type Eqn, type Program, type Role } from './types.js';

const PROGRAM_KEYS = ['format', 'name', 'args', 'eqns', 'results', 'state'];
const ARG_KEYS = ['name', 'role', 'dtype', 'shape'];
const ROLES: readonly Role[] = ['weight', 'activation', 'state'];

function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}

function object(v: unknown, path: string, what: string): Record<string, unknown> {
  if (!isRecord(v)) throw new InvalidProgram(path, `${what} is a JSON object, not ${kindOf(v)}`);
  return v;
}

function array(v: unknown, path: string, what: string): unknown[] {
  if (!Array.isArray(v)) throw new InvalidProgram(path, `${what} is an array, not ${kindOf(v)}`);
  return v;
}

// The format is a contract read by other tools: a misspelt key ("result") silently ignored would hide
// a bug, so keys the format does not name are refused rather than dropped.
function onlyKeys(o: Record<string, unknown>, path: string, keys: readonly string[], what: string): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw new InvalidProgram(ptr(path, k), `${what} has no key "${k}" (it has ${keys.map((x) => `"${x}"`).join(', ')})`);
  }
}

function name(v: unknown, path: string, what: string): string {
  if (typeof v !== 'string' || v === '') throw new InvalidProgram(path, `${what} is a non-empty string, not ${kindOf(v)}`);
  return v;
}

/** A name that defines a value (an arg, an equation's output): a non-empty plain name. */
function definedName(v: unknown, path: string, what: string): string {
  const n = name(v, path, what);
  const bad = valueNameProblem(n);
  if (bad !== undefined) throw new InvalidProgram(path, `${what}: ${bad}`);
  return n;
}

/** Decodes a shape at `path`: an array of non-negative integers. */
function decodeShape(v: unknown, path: string): number[] {
  return array(v, path, 'a shape').map((d, k) => {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw new InvalidProgram(ptr(path, k), `a dimension is a non-negative integer, not ${kindOf(d)}`);
    }
    return d;
  });
}

/**
 * Decodes one arg `{ name, role, dtype, shape }` at `path`; also re-checks an Arg built in code. A
 * quantized dtype is a weight's only, over a shape of whole blocks (src/numerics/quant.ts).
 */
export function decodeArg(v: unknown, path: string): Arg {
  const o = object(v, path, 'an arg');
  onlyKeys(o, path, ARG_KEYS, 'an arg');
  const n = definedName(o['name'], ptr(path, 'name'), "an arg's name");
  const role = o['role'];
  if (!isRole(role)) {
    throw new InvalidProgram(ptr(path, 'role'), `an arg's role is "weight", "activation" or "state", not ${kindOf(role)}`);
  }
  const dtype = o['dtype'];
  if (!isAnyDType(dtype)) throw new InvalidProgram(ptr(path, 'dtype'), `an arg's dtype is ${ANY_DTYPE_LIST}, not ${kindOf(dtype)}`);
  const shape = decodeShape(o['shape'], ptr(path, 'shape'));
  if (isQuantized(dtype)) {
    if (role !== 'weight') {
      throw new InvalidProgram(ptr(path, 'dtype'), `${role} ${n} cannot be ${dtype}: a quantized tensor is only ever a weight (uploaded once, never written)`);
    }
    const bad = quantShapeProblem(dtype, shape);
    if (bad !== undefined) throw new InvalidProgram(bad.axis === null ? ptr(path, 'shape') : ptr(path, 'shape', bad.axis), bad.reason);
  }
  return { name: n, role, dtype, shape };
}

function decodeOut(v: unknown, path: string): string | string[] {
  if (typeof v === 'string') return definedName(v, path, 'an equation\'s "out"');
  if (Array.isArray(v) && v.length > 0) return v.map((n, k) => definedName(n, ptr(path, k), 'an output name'));
  throw new InvalidProgram(path, `an equation's "out" is a name or a non-empty array of names, not ${kindOf(v)}`);
}

function decodeEqn(v: unknown, path: string): Eqn {
  const o = object(v, path, 'an equation');
  const op = o['op'];
  if (typeof op !== 'string') throw new InvalidProgram(ptr(path, 'op'), `an equation's "op" is a string, not ${kindOf(op)}`);
  const ins = decodeOperands(o['in'], ptr(path, 'in'));
  const out = decodeOut(o['out'], ptr(path, 'out'));
  // Attributes are the equation's other top-level keys; validation decodes each by its op's AttrSpec.
  const attrs: Record<string, unknown> = {};
  for (const [k, a] of Object.entries(o)) {
    if (k !== 'op' && k !== 'in' && k !== 'out') setOwn(attrs, k, structuredClone(a));
  }
  return { op, in: ins, out, attrs };
}

/**
 * Decodes a `program@1` JSON document; throws InvalidProgram with a JSON pointer at the fault, and
 * ResourceLimit, before decoding anything, for a document past the equation count or nesting depth.
 */
export function parseProgram(json: unknown, limits: Limits = DEFAULT_LIMITS): Program {
  const o = object(json, '', 'a program');
  if (Array.isArray(o['eqns'])) checkEquationCount(o['eqns'].length, limits);
  const m = measureJson(o, limits.jsonDepth);
  if (m.deepest !== undefined) throw new ResourceLimit(LIMIT_NAMES.jsonDepth, m.depth, limits.jsonDepth, m.deepest);
  // JSON has no infinity: a number such as 1e999 is one the text could not mean, not an infinity.
  if (m.nonFinite !== undefined) throw new InvalidProgram(m.nonFinite, 'not a finite number: JSON text such as 1e999 overflows to infinity, so it is refused; write "inf", "-inf" or "nan" as a string');
  onlyKeys(o, '', PROGRAM_KEYS, 'a program');
  if (o['format'] !== 'program@1') throw new InvalidProgram('/format', `"format" is "program@1", not ${kindOf(o['format'])}`);
  const progName = o['name'];
  if (typeof progName !== 'string') throw new InvalidProgram('/name', `"name" is a string, not ${kindOf(progName)}`);
  const args = array(o['args'], '/args', '"args"').map((a, i) => decodeArg(a, ptr('/args', i)));
  const eqns = array(o['eqns'], '/eqns', '"eqns"').map((e, i) => decodeEqn(e, ptr('/eqns', i)));
  const results = array(o['results'], '/results', '"results"').map((r, k) => name(r, ptr('/results', k), 'a result'));
  // A program without state args may leave "state" out; validation requires an entry per state arg.
  const state: Record<string, string> = {};
  if (hasOwn(o, 'state')) {
    for (const [k, v] of Object.entries(object(o['state'], '/state', '"state"'))) {
      setOwn(state, k, name(v, ptr('/state', k), 'a state entry\'s new value'));
    }
  }
  return { format: 'program@1', name: progName, args, eqns, results, state };
}

/** Parses program text; a JSON syntax error becomes InvalidProgram at '' naming its line and column. */
export function parseProgramText(text: string, limits: Limits = DEFAULT_LIMITS): Program {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new InvalidProgram('', jsonErrorAt(text, messageOf(e)));
  }
  return parseProgram(json, limits);
}

// Attribute values are plain JSON, except literals inside a row_kernel body, whose decoded numbers
// (NaN, infinities, -0) need their wire strings back; any `{ lit }` object is written as a literal.
function encodeAttr(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(encodeAttr);
  if (isRecord(v)) {
    if (typeof v['lit'] === 'number') {
      const d = v['dtype'];
      return encodeOperand(isDType(d) ? { lit: v['lit'], dtype: d } : { lit: v['lit'] });
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, encodeAttr(x));
    return out;
  }
  return v;
}

/** Writes a Program as `program@1` JSON: the inverse of parseProgram. */
export function programToJson(p: Program): object {
  return {
    format: 'program@1',
    name: p.name,
    args: p.args.map((a) => ({ name: a.name, role: a.role, dtype: a.dtype, shape: [...a.shape] })),
    eqns: p.eqns.map((e) => {
      const out: Record<string, unknown> = { op: e.op, in: e.in.map(encodeOperand), out: typeof e.out === 'string' ? e.out : [...e.out] };
      for (const [k, a] of Object.entries(e.attrs)) {
        if (!hasOwn(out, k)) setOwn(out, k, encodeAttr(a));
      }
      return out;
    }),
    results: [...p.results],
    state: { ...p.state },
  };
}
