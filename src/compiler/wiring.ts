/**
 * How an artifact's bindings map to the program's values. A compiler decides its artifacts' argument
 * names; the engine allocates one buffer per program value and binds each artifact argument to the
 * buffer of the value its wiring names, so values cross artifacts through host memory.
 */
import type { CheckedProgram } from '../ir/checked.js';
import type { AnyDType, Shape } from '../ir/types.js';

export interface WiredArg {
  /** The artifact's argument (binding) name. */
  readonly binding: string;
  /** The program value it reads or writes. */
  readonly value: string;
  readonly direction: 'in' | 'out';
  /** Quantized only for a weight, which is an input. */
  readonly dtype: AnyDType;
  readonly shape: Shape;
  /**
   * Where the artifact expects this tensor: at `offset` in its host arena `index` (of `arenaBytes`
   * bytes). Without it the tensor is a buffer of its own.
   */
  readonly arena?: { readonly index: number; readonly offset: number; readonly arenaBytes: number };
}

export type Wiring = readonly WiredArg[];

/** The binding name of a program result in a whole-program artifact. */
export function resultBinding(name: string): string {
  return `result:${name}`;
}

/** The binding name of a state arg's value after the step, in a whole-program artifact. */
export function stateBinding(argName: string): string {
  return `state:${argName}`;
}

/**
 * The wiring of a whole-program artifact: every program arg is an input under its own name, each
 * distinct result an output `result:<name>`, each state arg's next value an output `state:<arg>`.
 */
export function wholeProgramWiring(checked: CheckedProgram): WiredArg[] {
  const p = checked.program;
  const typeOf = (v: string) => {
    const t = checked.types.get(v);
    if (!t) throw new Error(`checked program has no type for ${v}`);
    return t;
  };
  const out: WiredArg[] = p.args.map((a) => ({ binding: a.name, value: a.name, direction: 'in', dtype: a.dtype, shape: [...a.shape] }));
  // A name listed twice in `results` is one value, so it is one output.
  for (const r of new Set(p.results)) {
    const t = typeOf(r);
    out.push({ binding: resultBinding(r), value: r, direction: 'out', dtype: t.dtype, shape: [...t.shape] });
  }
  for (const a of p.args) {
    if (a.role !== 'state') continue;
    const next = p.state[a.name]!;
    out.push({ binding: stateBinding(a.name), value: next, direction: 'out', dtype: a.dtype, shape: [...a.shape] });
  }
  return out;
}
