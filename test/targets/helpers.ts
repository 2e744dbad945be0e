/** Shared fixtures of the target and planner tests: programs written as the format's JSON. */
import { parseProgram } from '../../src/ir/codec.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { checkProgram } from '../../src/ops/validate.js';

type ArgSpec = readonly [name: string, dtype: string, shape: readonly number[]];

/** A checked program over activation args `args` with equations `eqns` (JSON form) and `results`. */
export function prog(args: readonly ArgSpec[], eqns: readonly object[], results: readonly string[], name = 'p'): CheckedProgram {
  return checkProgram(parseProgram(programJson(args, eqns, results, name)));
}

/** The JSON of such a program, for the CLI tests. */
export function programJson(args: readonly ArgSpec[], eqns: readonly object[], results: readonly string[], name = 'p'): object {
  return {
    format: 'program@1',
    name,
    args: args.map(([n, dtype, shape]) => ({ name: n, role: 'activation', dtype, shape })),
    eqns,
    results,
  };
}

/** The RMSNorm body of docs/PROGRAM_FORMAT.md (64 columns), with or without the weight step. */
export function rmsBody(weight: boolean): object {
  const steps: object[] = [
    { op: 'mul', in: ['x', 'x'], out: 'sq' },
    { op: 'reduce_sum', in: ['sq'], out: 'ss' },
    { op: 'div', in: ['ss', { lit: 64 }], out: 'ms' },
    { op: 'add', in: ['ms', { lit: 1e-6 }], out: 'mse' },
    { op: 'sqrt', in: ['mse'], out: 'rms' },
    { op: 'div', in: ['x', 'rms'], out: 'xn' },
  ];
  if (weight) steps.push({ op: 'mul', in: ['xn', 'w'], out: 'y' });
  return { params: weight ? ['x', 'w'] : ['x'], steps, results: [weight ? 'y' : 'xn'] };
}

/** A one-equation program: `x` (and `b`) of `dtype` and `shape`, the equation reading them. */
export function single(eqn: object, dtype = 'f32', shape: readonly number[] = [4, 64], extra: readonly ArgSpec[] = []): CheckedProgram {
  const out = (eqn as { out: string }).out;
  return prog([['x', dtype, shape], ['b', dtype, shape], ...extra], [eqn], [out]);
}
