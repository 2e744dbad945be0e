/**
 * narrow_to_device_precision, the first compile pass on a target that records a narrowing contract.
 * The NPU computes in FP16 and a vendor compiler handed an F32 graph would narrow it silently, so the
 * narrowing is a step of our own, in the program itself: each F32 arg an equation reads is converted
 * to FP16 by one explicit `convert` on entry, every equation then computes in FP16, and each F32 result
 * and F32 state next value is converted back by one `convert` on exit. Nothing in between is converted
 * op by op, so the contract bounds the graph's error as a whole. The casts are ordinary equations, so
 * the result is an ordinary program (checked again here) whose numerics class is NarrowStorage.
 *
 * Names: an arg keeps its name (it is the graph's F32 Parameter) and its FP16 copy is `<arg>.f16`; a
 * result keeps its name (it is the F32 value the exit convert defines) and the FP16 value computed
 * inside is renamed `<name>.f16` (a suffix `.1`, `.2`, ... avoids any name already taken). An F32 arg
 * returned or carried unchanged is not narrowed at all: the graph hands it through bit for bit.
 */
import type { CheckedProgram } from '../../ir/checked.js';
import type { DType, Eqn, Operand, Program } from '../../ir/types.js';
import { eqnOuts, isLiteral } from '../../ir/types.js';
import { checkProgram } from '../../ops/validate.js';
import { NO_LIMITS } from '../../ir/limits.js';
import { F16_MAX, roundF16 } from '../../numerics/float16.js';

/** An F32 literal as its FP16 constant: beyond `max` it saturates to ±max (admission let only additive ones through). */
export function narrowLiteral(v: number, max = F16_MAX): number {
  const f = Math.fround(v);
  if (Number.isFinite(f) && Math.abs(f) > max) return f > 0 ? max : -max;
  return roundF16(f);
}

const narrowDtype = (d: DType): DType => (d === 'f32' ? 'f16' : d);

/** The program narrowed to FP16 behind an F32 boundary (see the file's doc); `max` is the contract's magnitude. */
export function narrowToDevicePrecision(checked: CheckedProgram, max = F16_MAX): CheckedProgram {
  const p = checked.program;
  const taken = new Set<string>(checked.types.keys());
  const fresh = (base: string): string => {
    let n = `${base}.f16`;
    for (let k = 1; taken.has(n); k++) n = `${base}.f16.${k}`;
    taken.add(n);
    return n;
  };
  const isF32 = (name: string) => checked.types.get(name)?.dtype === 'f32';
  const argNames = new Set(p.args.map((a) => a.name));
  const read = new Set(p.eqns.flatMap((e) => e.in.filter((o): o is string => !isLiteral(o))));

  const rename = new Map<string, string>();
  const entry: Eqn[] = [];
  for (const a of p.args) {
    if (a.dtype !== 'f32' || !read.has(a.name)) continue;
    const n = fresh(a.name);
    rename.set(a.name, n);
    entry.push({ op: 'convert', in: [a.name], out: n, attrs: { dtype: 'f16' } });
  }
  // Values leaving the graph as F32: distinct results, then state next values, in that order.
  const leaving = [...new Set([...p.results, ...p.args.filter((a) => a.role === 'state').map((a) => p.state[a.name]!)])]
    .filter((v) => isF32(v) && !argNames.has(v));
  const exit: Eqn[] = leaving.map((v) => {
    const inner = fresh(v);
    rename.set(v, inner);
    return { op: 'convert', in: [inner], out: v, attrs: { dtype: 'f32' } };
  });

  const body = checked.eqns.map((c): Eqn => {
    const e = c.eqn;
    const ins = e.in.map((o, k): Operand => {
      if (!isLiteral(o)) return rename.get(o) ?? o;
      return c.ins[k]!.dtype === 'f32' ? { lit: narrowLiteral(o.lit, max), dtype: 'f16' } : o;
    });
    const outs = eqnOuts(e).map((n) => rename.get(n) ?? n);
    const attrs = { ...e.attrs };
    // An F32 convert or iota inside the graph produces FP16 now; the boundary converts are the only F32 ones.
    if ((c.op === 'convert' || c.op === 'iota') && attrs['dtype'] === 'f32') attrs['dtype'] = narrowDtype('f32');
    return { op: e.op, in: ins, out: typeof e.out === 'string' ? outs[0]! : outs, attrs };
  });

  const narrowed: Program = { ...p, eqns: [...entry, ...body, ...exit] };
  // The boundary converts add equations to a program already checked under its limits.
  return checkProgram(narrowed, NO_LIMITS);
}
