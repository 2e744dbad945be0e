/**
 * Validation: a Program becomes a CheckedProgram, or an InvalidProgram names the first fault with a JSON
 * pointer and a reason. Structure, names (SSA), attributes and literals are checked here; shapes and
 * dtypes by each op's rule in the op table (src/ops/table.ts), whose RuleError pointers are relative to
 * the equation. Every state arg must be mapped in `state` (to itself to keep it unchanged): a state arg
 * without an entry is almost always a forgotten carry, and a value that never changes is a weight.
 */
import { InvalidProgram } from '../errors/index.js';
import { quote } from '../io/escape.js';
import { RuleError, isOpName, isQuantType, type AnyType, type AttrSpec, type ValueType } from '../ops/rule.js';
import { OPS, inferEqn, quantOperandProblem } from '../ops/table.js';
import { decodeAttrs } from '../ir/attrs.js';
import type { CheckedEqn, CheckedProgram } from '../ir/checked.js';
import { decodeArg } from '../ir/codec.js';
import { ByteBudget, DEFAULT_LIMITS, checkElements, checkEquationCount, type Limits } from '../ir/limits.js';
import { QUANT_BLOCKS } from '../numerics/quant.js';
import { hasOwn, ptr, valueNameProblem } from '../ir/pointer.js';
import { floatLiteralProblem, integerValueProblem } from '../ir/scalars.js';
import { eqnOuts, exactNumel, isLiteral, isQuantized, type Arg, type DType, type Eqn, type Operand, type Program, type RowBody } from '../ir/types.js';

/** What an equation is checked against: the values defined before it. */
export interface Scope {
  readonly types: ReadonlyMap<string, AnyType>;
  /** Where each defined name comes from ("arg 0", "equation 3"), for messages. */
  readonly origin?: ReadonlyMap<string, string>;
  /** The equation defining each name later in the program, for "used before it is defined". */
  readonly later?: ReadonlyMap<string, number>;
}

// The parts of an op's row validation reads; every row of the table is one of these.
interface RuleView {
  readonly arity: readonly [number, number];
  readonly attrs: Readonly<Record<string, AttrSpec>>;
  readonly rowStep: boolean;
  literalDtype(index: number, ins: readonly (ValueType | undefined)[]): DType | undefined;
}

function typeStr(t: AnyType): string {
  return `${t.dtype} [${t.shape.join(', ')}]`;
}

function arityProblem(op: string, arity: readonly [number, number], n: number): string | undefined {
  const [lo, hi] = arity;
  if (n >= lo && n <= hi) return undefined;
  const want = lo === hi ? `${lo}` : hi === Infinity ? `at least ${lo}` : `${lo} to ${hi}`;
  return `${op} takes ${want} operand${want === '1' ? '' : 's'}, got ${n}`;
}

function literalProblem(dtype: DType, lit: number): string | undefined {
  const p = integerValueProblem(dtype, lit) ?? floatLiteralProblem(dtype, lit);
  return p === undefined ? undefined : `a ${dtype} literal: ${p}`;
}

// The row kernel's own rule checks the body's names, steps and types; the values of its literals it
// cannot see, so they are checked here: untyped ones take the row inputs' dtype.
function checkBodyLiterals(body: RowBody, at: string, rowDtype: DType | undefined): void {
  body.steps.forEach((s, k) => {
    s.in.forEach((o, j) => {
      if (!isLiteral(o)) return;
      const d = o.dtype ?? rowDtype;
      const p = d === undefined ? undefined : literalProblem(d, o.lit);
      if (p !== undefined) throw new InvalidProgram(ptr(at, 'steps', k, 'in', j, 'lit'), p);
    });
  });
}

function operandType(o: Operand, at: string, scope: Scope): AnyType | undefined {
  if (isLiteral(o)) return o.dtype === undefined ? undefined : { dtype: o.dtype, shape: [] };
  const t = scope.types.get(o);
  if (t !== undefined) return t;
  const later = scope.later?.get(o);
  throw new InvalidProgram(at, later === undefined
    ? `${quote(o)} is not defined (not an arg, not any equation's out)`
    : `${quote(o)} is used before it is defined (equation ${later} defines it)`);
}

/**
 * Checks equation `index` against the values defined before it; returns it typed, with its attributes
 * decoded. Does not add its outputs to the scope (checkProgram and the builder do).
 */
export function checkEqn(e: Eqn, index: number, scope: Scope): CheckedEqn {
  const base = ptr('/eqns', index);
  const op = e.op;
  if (!isOpName(op)) throw new InvalidProgram(ptr(base, 'op'), `unknown op ${JSON.stringify(op)}`);
  const rule: RuleView = OPS[op];
  const bad = arityProblem(op, rule.arity, e.in.length);
  if (bad !== undefined) throw new InvalidProgram(ptr(base, 'in'), bad);
  const { attrs, bodies } = decodeAttrs(op, rule.attrs, e.attrs, base);

  const known = e.in.map((o, k) => operandType(o, ptr(base, 'in', k), scope));
  // A quantized weight is refused wherever its op does not take one, before any literal takes its dtype.
  known.forEach((t, k) => {
    const bad = t !== undefined && isQuantized(t.dtype) ? quantOperandProblem(op, k) : undefined;
    if (bad !== undefined) throw new InvalidProgram(ptr(base, 'in', k), bad);
  });
  const elements = known.map((t) => (t === undefined || isQuantType(t) ? undefined : t));
  const ins = e.in.map((o, k): AnyType => {
    const at = ptr(base, 'in', k);
    let t = known[k];
    if (t === undefined) {
      const d = rule.literalDtype(k, elements);
      if (d === undefined) throw new InvalidProgram(at, `cannot tell this literal's dtype from the other operands; give it a "dtype"`);
      t = { dtype: d, shape: [] };
    }
    if (isLiteral(o) && !isQuantized(t.dtype)) {
      const p = literalProblem(t.dtype, o.lit);
      if (p !== undefined) throw new InvalidProgram(ptr(at, 'lit'), p);
    }
    return t;
  });

  const first = ins[0]?.dtype;
  for (const [k, body] of bodies) checkBodyLiterals(body, ptr(base, k), first === undefined || isQuantized(first) ? undefined : first);

  let outs: ValueType[];
  try {
    outs = inferEqn(op, ins, attrs);
  } catch (err) {
    if (err instanceof RuleError) throw new InvalidProgram(base + err.at, err.reason);
    throw err;
  }

  const names = eqnOuts(e);
  if (names.length !== outs.length) {
    throw new InvalidProgram(ptr(base, 'out'), `${op} has ${outs.length} result${outs.length === 1 ? '' : 's'}, "out" names ${names.length}`);
  }
  names.forEach((n, k) => {
    const at = typeof e.out === 'string' ? ptr(base, 'out') : ptr(base, 'out', k);
    const bad = valueNameProblem(n);
    if (bad !== undefined) throw new InvalidProgram(at, `an output name: ${bad}`);
    const first = scope.types.has(n) ? (scope.origin?.get(n) ?? 'an earlier definition') : names.indexOf(n) < k ? 'this equation' : undefined;
    if (first !== undefined) throw new InvalidProgram(at, `${quote(n)} is defined twice (first by ${first}); every name is defined once`);
  });
  return { index, eqn: { op: e.op, in: e.in, out: e.out, attrs }, op, ins, outs };
}

function sameType(a: AnyType, b: AnyType): boolean {
  return a.dtype === b.dtype && a.shape.length === b.shape.length && a.shape.every((d, k) => d === b.shape[k]);
}

function checkState(p: Program, types: ReadonlyMap<string, AnyType>): void {
  for (const [k, v] of Object.entries(p.state)) {
    const at = ptr('/state', k);
    const arg = p.args.find((a) => a.name === k);
    if (arg === undefined) throw new InvalidProgram(at, `${k} is not an arg; "state" maps state args to their new values`);
    if (arg.role !== 'state') throw new InvalidProgram(at, `${k} is a${arg.role === 'activation' ? 'n' : ''} ${arg.role}, not a state arg; only state is carried`);
    const t = types.get(v);
    if (t === undefined) throw new InvalidProgram(at, `${quote(v)} is not defined (not an arg, not any equation's out)`);
    const want = { dtype: arg.dtype, shape: arg.shape };
    if (!sameType(t, want)) throw new InvalidProgram(at, `state ${k} is ${typeStr(want)}, its new value ${v} is ${typeStr(t)}`);
  }
  for (const a of p.args) {
    if (a.role === 'state' && !hasOwn(p.state, a.name)) {
      throw new InvalidProgram('/state', `state arg ${a.name} has no entry; map it to its new value (or to "${a.name}" to keep it)`);
    }
  }
}

// A quantized weight is held as its blocks, not as f64 elements, so it counts its bytes (exactly) and no
// element count: a 600 MB embedding has more elements than any tensor of floats the engine may allocate.
function quantHeldBytes(a: Arg): bigint {
  if (!isQuantized(a.dtype)) return 0n;
  const b = QUANT_BLOCKS[a.dtype];
  return (exactNumel(a.shape) / BigInt(b.rows * b.cols)) * BigInt(b.bytes);
}

/**
 * Where each value of a program is read last (the index of its last equation reading it), and the
 * values held for the whole step: args, results and states' next values. Read from the raw equations,
 * so a malformed one (validation refuses it) only reads no names.
 */
export function liveness(p: Pick<Program, 'args' | 'eqns' | 'results' | 'state'>): { readonly lastRead: ReadonlyMap<string, number>; readonly kept: ReadonlySet<string> } {
  const lastRead = new Map<string, number>();
  p.eqns.forEach((e, i) => { if (Array.isArray(e.in)) for (const o of e.in as unknown[]) if (typeof o === 'string') lastRead.set(o, i); });
  const kept = new Set<string>();
  if (Array.isArray(p.args)) for (const a of p.args as unknown[]) if (typeof a === 'object' && a !== null && typeof (a as { name?: unknown }).name === 'string') kept.add((a as { name: string }).name);
  if (Array.isArray(p.results)) for (const r of p.results as unknown[]) if (typeof r === 'string') kept.add(r);
  if (typeof p.state === 'object' && p.state !== null) for (const v of Object.values(p.state) as unknown[]) if (typeof v === 'string') kept.add(v);
  return { lastRead, kept };
}

/**
 * Validates a program: every name, attribute, literal, shape and dtype; throws InvalidProgram at the
 * fault, and ResourceLimit for a program past `limits` (src/ir/limits.ts), before anything is allocated.
 */
export function checkProgram(p: Program, limits: Limits = DEFAULT_LIMITS): CheckedProgram {
  if (p.format !== 'program@1') throw new InvalidProgram('/format', `"format" is "program@1", not ${JSON.stringify(p.format)}`);
  checkEquationCount(p.eqns.length, limits);
  const budget = new ByteBudget(limits);
  const sized = (shape: readonly number[], place: string) => budget.add(checkElements(shape, limits, place), place);
  const types = new Map<string, AnyType>();
  const origin = new Map<string, string>();
  const args = p.args.map((raw, i) => {
    const a = decodeArg(raw, ptr('/args', i));
    const first = origin.get(a.name);
    if (first !== undefined) throw new InvalidProgram(ptr('/args', i, 'name'), `${quote(a.name)} is defined twice (first by ${first}); arg names are distinct`);
    if (isQuantized(a.dtype)) budget.addBytes(quantHeldBytes(a), ptr('/args', i, 'shape'));
    else sized(a.shape, ptr('/args', i, 'shape'));
    types.set(a.name, { dtype: a.dtype, shape: a.shape });
    origin.set(a.name, `arg ${i}`);
    return a;
  });
  const later = new Map<string, number>();
  p.eqns.forEach((e, i) => { for (const n of eqnOuts(e)) if (!later.has(n)) later.set(n, i); });
  // The live values of the step, not all of them: an equation's result is held from its equation to its
  // last reader (results and states' next values to the end), as the oracle holds it (liveValues).
  const { lastRead, kept } = liveness(p);
  const eqns = p.eqns.map((e, i) => {
    const c = checkEqn(e, i, { types, origin, later });
    const outs = eqnOuts(e);
    outs.forEach((n, k) => {
      const place = typeof e.out === 'string' ? ptr('/eqns', i, 'out') : ptr('/eqns', i, 'out', k);
      budget.add(checkElements(c.outs[k]!.shape, limits, place), place, kept.has(n) ? undefined : n);
      types.set(n, c.outs[k]!);
      origin.set(n, `equation ${i}`);
    });
    for (const o of e.in) if (typeof o === 'string' && lastRead.get(o) === i) budget.release(o);
    for (const n of outs) if (!lastRead.has(n)) budget.release(n);
    return c;
  });
  p.results.forEach((r, k) => {
    const t = types.get(r);
    if (t === undefined) throw new InvalidProgram(ptr('/results', k), `${quote(r)} is not defined (not an arg, not any equation's out)`);
    if (isQuantized(t.dtype)) throw new InvalidProgram(ptr('/results', k), `${quote(r)} is a quantized ${t.dtype} weight; a result is a tensor of elements (convert it to a float dtype first)`);
  });
  checkState(p, types);
  const program: Program = { format: 'program@1', name: p.name, args, eqns: eqns.map((c) => c.eqn), results: [...p.results], state: { ...p.state } };
  return { program, types, eqns };
}
