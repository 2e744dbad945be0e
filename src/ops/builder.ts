/**
 * The builder API: programs written in TypeScript instead of JSON.
 *
 *   const p = program('demo');
 *   const x = p.activation('x', 'f32', [4, 64]);
 *   const acc = p.state('acc', 'f32', [4, 64]);
 *   const acc2 = p.named('acc2').add(acc, x);
 *   p.results(p.mul(p.exp(acc2), 0.5));
 *   p.carry(acc, acc2);
 *   const prog = p.build();
 *
 * Every op call is checked at once against the values so far (the same checkEqn that validation runs),
 * so a mistake throws InvalidProgram at the call, with the pointer the equation will have. Outputs are
 * named t0, t1, ... skipping every name already taken; `p.named('y').exp(x)` names one call's outputs.
 * Declare args before ops: an arg named like a value already generated is refused as defined twice.
 */
import { InvalidProgram } from '../errors/index.js';
import type { AnyType, OpName } from '../ir/ops.js';
import { RowBuilder, type RowBodyFn, type RowValue } from '../ir/rowBuilder.js';
import { decodeArg } from '../ir/codec.js';
import { ptr, setOwn } from '../ir/pointer.js';
import type { AnyDType, Arg, DType, Eqn, Literal, Operand, Program, Role, RowBody, Shape } from '../ir/types.js';
import type { CheckedEqn } from '../ir/checked.js';
import type { Limits } from '../ir/limits.js';
import { checkEqn, checkProgram } from './validate.js';

/** A value of the program being built: its name and static type. */
export interface Value {
  readonly name: string;
  /** Quantized only for a weight declared so. */
  readonly dtype: AnyDType;
  readonly shape: Shape;
}

/** An operand: a value, a number (an untyped literal taking the other operand's dtype) or a literal. */
export type ValueOperand = Value | number | Literal;

/** A literal operand with an explicit dtype (or none): `lit(1, 'i32')`, `lit(NaN)`. */
export function lit(value: number, dtype?: DType): Literal {
  return dtype === undefined ? { lit: value } : { lit: value, dtype };
}

/** Builds one program; see the file's doc for an example. */
// Everything a builder and its named() views share; a view differs only in the names it gives.
interface Shared {
  readonly name: string;
  readonly args: Arg[];
  readonly eqns: Eqn[];
  readonly results: string[];
  readonly state: Record<string, string>;
  readonly types: Map<string, AnyType>;
  readonly origin: Map<string, string>;
  next: number;
}

export class ProgramBuilder {
  private readonly s: Shared;
  private outNames: readonly string[] | undefined;

  constructor(name: string) {
    this.s = { name, args: [], eqns: [], results: [], state: {}, types: new Map(), origin: new Map(), next: 0 };
  }

  private declare(name: string, role: Role, dtype: AnyDType, shape: Shape): Value {
    const s = this.s;
    const at = ptr('/args', s.args.length);
    if (this.outNames !== undefined) throw new InvalidProgram(at, `named(${this.outNames.join(', ')}) names an op's outputs, not an arg`);
    const a = decodeArg({ name, role, dtype, shape: [...shape] }, at);
    const first = s.origin.get(name);
    if (first !== undefined) throw new InvalidProgram(ptr(at, 'name'), `${name} is defined twice (first by ${first}); declare args before ops, or pick another name`);
    s.args.push(a);
    s.types.set(name, { dtype, shape: a.shape });
    s.origin.set(name, `arg ${s.args.length - 1}`);
    return { name, dtype, shape: a.shape };
  }

  /** Declares an activation arg (new contents every step). */
  activation(name: string, dtype: DType, shape: Shape): Value { return this.declare(name, 'activation', dtype, shape); }
  /** Declares a weight arg (uploaded once); a quantized dtype's shape is `[..., N, K]` with K blocked. */
  weight(name: string, dtype: AnyDType, shape: Shape): Value { return this.declare(name, 'weight', dtype, shape); }
  /** Declares a state arg (carried from step to step; map its new value with carry()). */
  state(name: string, dtype: DType, shape: Shape): Value { return this.declare(name, 'state', dtype, shape); }

  /**
   * This builder, naming the outputs of the op called on it (one name, or one per row_kernel result):
   * `p.named('y').mul(e, 0.5)`. A view, not a mode, so nested calls keep their own names.
   */
  named(...names: string[]): ProgramBuilder {
    const view = Object.create(this) as ProgramBuilder;
    view.outNames = names;
    return view;
  }

  /** Appends values to the program's results, in order. */
  results(...values: Value[]): void {
    for (const v of values) this.s.results.push(this.ref(v, ptr('/results', this.s.results.length)));
  }

  /** Sets the value a state arg takes after each step. */
  carry(state: Value, next: Value): void {
    setOwn(this.s.state, this.ref(state, ptr('/state', state.name)), this.ref(next, ptr('/state', state.name)));
  }

  /**
   * The finished program, validated by checkProgram under `limits` (so it is valid, or this throws
   * InvalidProgram, or ResourceLimit past a limit).
   */
  build(limits?: Limits): Program {
    const s = this.s;
    const p: Program = {
      format: 'program@1', name: s.name, args: [...s.args], eqns: [...s.eqns], results: [...s.results], state: { ...s.state },
    };
    return checkProgram(p, limits).program;
  }

  // A value handle is only its name on the wire; refuse a handle from another builder that the name
  // would silently rebind to a different value here.
  private ref(v: Value, at: string): string {
    const t = this.s.types.get(v.name);
    if (t === undefined || t.dtype !== v.dtype || t.shape.length !== v.shape.length || t.shape.some((d, k) => d !== v.shape[k])) {
      throw new InvalidProgram(at, `${v.name} is not a value of program ${this.s.name}`);
    }
    return v.name;
  }

  private operand(o: ValueOperand, at: string): Operand {
    if (typeof o === 'number') return { lit: o };
    return 'lit' in o ? o : this.ref(o, at);
  }

  private fresh(): string {
    let n: string;
    do n = `t${this.s.next++}`; while (this.s.types.has(n));
    return n;
  }

  /** Adds an equation of `op` and returns its outputs; refuses it at once when it is not valid. */
  private emit(op: OpName, ins: readonly ValueOperand[], attrs: Record<string, unknown>, count = 1): Value[] {
    const s = this.s;
    const index = s.eqns.length;
    const operands = ins.map((o, k) => this.operand(o, ptr('/eqns', index, 'in', k)));
    const next = s.next;
    const names = this.outNames ?? Array.from({ length: count }, () => this.fresh());
    const out = names.length === 1 && count === 1 ? names[0]! : [...names];
    let checked: CheckedEqn;
    try {
      checked = checkEqn({ op, in: operands, out, attrs }, index, { types: s.types, origin: s.origin });
    } catch (e) {
      s.next = next; // a refused call takes no generated name, so later names do not depend on it
      throw e;
    }
    s.eqns.push(checked.eqn);
    return names.map((n, k) => {
      const t = checked.outs[k]!;
      s.types.set(n, t);
      s.origin.set(n, `equation ${index}`);
      return { name: n, dtype: t.dtype, shape: t.shape };
    });
  }

  private one(op: OpName, ins: readonly ValueOperand[], attrs: Record<string, unknown> = {}): Value {
    return this.emit(op, ins, attrs)[0]!;
  }

  add(a: ValueOperand, b: ValueOperand): Value { return this.one('add', [a, b]); }
  sub(a: ValueOperand, b: ValueOperand): Value { return this.one('sub', [a, b]); }
  mul(a: ValueOperand, b: ValueOperand): Value { return this.one('mul', [a, b]); }
  div(a: ValueOperand, b: ValueOperand): Value { return this.one('div', [a, b]); }
  max(a: ValueOperand, b: ValueOperand): Value { return this.one('max', [a, b]); }
  min(a: ValueOperand, b: ValueOperand): Value { return this.one('min', [a, b]); }
  /** a >= b, elementwise, as bool. */
  ge(a: ValueOperand, b: ValueOperand): Value { return this.one('ge', [a, b]); }
  neg(x: Value): Value { return this.one('neg', [x]); }
  recip(x: Value): Value { return this.one('recip', [x]); }
  exp(x: Value): Value { return this.one('exp', [x]); }
  log(x: Value): Value { return this.one('log', [x]); }
  tanh(x: Value): Value { return this.one('tanh', [x]); }
  erf(x: Value): Value { return this.one('erf', [x]); }
  sqrt(x: Value): Value { return this.one('sqrt', [x]); }
  rsqrt(x: Value): Value { return this.one('rsqrt', [x]); }
  abs(x: Value): Value { return this.one('abs', [x]); }
  logistic(x: Value): Value { return this.one('logistic', [x]); }
  sin(x: Value): Value { return this.one('sin', [x]); }
  cos(x: Value): Value { return this.one('cos', [x]); }
  /** x converted to `dtype`. */
  convert(x: Value, dtype: DType): Value { return this.one('convert', [x], { dtype }); }
  /** The sum over `axes` (sorted, distinct), which are dropped from the shape. */
  reduceSum(x: Value, axes: readonly number[]): Value { return this.one('reduce_sum', [x], { axes: [...axes] }); }
  /** The maximum over `axes` (sorted, distinct), which are dropped from the shape. */
  reduceMax(x: Value, axes: readonly number[]): Value { return this.one('reduce_max', [x], { axes: [...axes] }); }
  /** `[..., M, K] x [..., K, N]` with equal batch dims; by a quantized weight `[..., N, K]`, its rows. */
  matmul(a: Value, b: Value): Value { return this.one('matmul', [a, b]); }
  /** `x [T, B, K]` times the experts `w [E, N, K]` that `ids [T, S]` choose (B is 1 or S): `[T, S, N]` (ops/matmulId.ts). */
  matmulId(x: Value, w: Value, ids: Value): Value { return this.one('matmul_id', [x, w, ids]); }
  /** Takes `idx` (i32) along `axis` of `src`. */
  gather(src: Value, idx: Value, axis: number): Value { return this.one('gather', [src, idx], { axis }); }
  /** The same elements in `shape`. */
  reshape(x: Value, shape: Shape): Value { return this.one('reshape', [x], { shape: [...shape] }); }
  /** Output dim i is operand dim `perm[i]`. */
  transpose(x: Value, perm: readonly number[]): Value { return this.one('transpose', [x], { perm: [...perm] }); }
  /** x broadcast to `shape`; operand dim i goes to output dim `dims[i]`. */
  broadcast(x: Value, shape: Shape, dims: readonly number[]): Value { return this.one('broadcast', [x], { shape: [...shape], dims: [...dims] }); }
  /** The elements from `start` up to `limit` (exclusive), every `stride`-th. */
  slice(x: Value, start: readonly number[], limit: readonly number[], stride?: readonly number[]): Value {
    return this.one('slice', [x], stride === undefined ? { start: [...start], limit: [...limit] } : { start: [...start], limit: [...limit], stride: [...stride] });
  }
  /** The values joined along `axis`. */
  concat(xs: readonly Value[], axis: number): Value { return this.one('concat', xs, { axis }); }
  /** Counts 0, 1, ... along `dimension` of `shape`. */
  iota(shape: Shape, dimension: number, dtype: DType): Value { return this.one('iota', [], { shape: [...shape], dimension, dtype }); }
  /** `operand` with `update` written at `starts` (one i32 scalar per dimension; a number is an i32 literal). */
  dynamicUpdateSlice(operand: Value, update: Value, starts: readonly ValueOperand[]): Value {
    return this.one('dynamic_update_slice', [operand, update, ...starts.map((s) => (typeof s === 'number' ? lit(s, 'i32') : s))]);
  }
  /** A sum over every device of a collective (no single-device target admits it). */
  allReduce(x: Value, reduce: 'sum' = 'sum'): Value { return this.one('all_reduce', [x], { reduce }); }

  /**
   * A fused kernel over rows: `body` is a RowBody or a callback given one RowValue per operand. Params
   * take the operands' names (p0, p1, ... where two operands share one). Returns one Value per result.
   */
  rowKernel(ins: readonly Value[], body: RowBody | RowBodyFn): Value[] {
    let b: RowBody;
    if (typeof body === 'function') {
      const taken = new Set<string>();
      const params = ins.map((v, j) => {
        let n = taken.has(v.name) ? `p${j}` : v.name;
        while (taken.has(n)) n = `${n}_`;
        taken.add(n);
        return n;
      });
      const rb = new RowBuilder(params);
      const res = body(rb, ...params.map((name): RowValue => ({ name })));
      b = rb.finish(params, 'name' in res ? [res] : res);
    } else {
      b = body;
    }
    return this.emit('row_kernel', ins, { body: b }, b.results.length);
  }
}

/** Starts building a program named `name`. */
export function program(name: string): ProgramBuilder {
  return new ProgramBuilder(name);
}
