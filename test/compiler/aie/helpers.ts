/** Programs for the AIE region compiler tests, built with the builder API and checked. */
import { inspect } from 'node:util';
import { expect } from 'chai';
import { EngineError } from '../../../src/errors/index.js';
import { program } from '../../../src/ops/builder.js';
import type { ProgramBuilder, Value } from '../../../src/ops/builder.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import { checkProgram } from '../../../src/ops/validate.js';
import type { RowBuilder, RowValue } from '../../../src/ir/rowBuilder.js';

/** Checks a built program. */
export function check(p: ProgramBuilder): CheckedProgram {
  return checkProgram(p.build());
}

/** RMSNorm of one row, returning the normalized row and its rms (two results: a vector and a scalar). */
function rmsBody(cols: number): (b: RowBuilder, x: RowValue) => RowValue[] {
  return (b, x) => {
    const ss = b.reduceSum(b.mul(x, x));
    const rms = b.sqrt(b.add(b.div(ss, cols), 1e-6));
    return [b.div(x, rms), rms];
  };
}

/**
 * Twenty equations, twenty distinct shapes, three regions: eight adds of two fresh args each fill the
 * sixteen input streams (the ninth equation would need a seventeenth: 'streams-in'); eight RMSNorms with
 * two results each fill the sixteen output streams (the next would need a seventeenth: 'streams-out');
 * then exp, a row sum, a gather and a row max.
 */
export function twentyEquations(): CheckedProgram {
  const p = program('twenty');
  const pairs = Array.from({ length: 8 }, (_, i) => [p.activation(`a${i}`, 'f32', [4, 16 + 8 * i]), p.activation(`b${i}`, 'f32', [4, 16 + 8 * i])] as const);
  const xs = Array.from({ length: 8 }, (_, j) => p.activation(`x${j}`, 'f32', [j + 9, 8 * (j + 1)]));
  const z = p.activation('z', 'f32', [3, 40]);
  const table = p.weight('table', 'f32', [10, 12]);
  const idx = p.activation('idx', 'i32', [5]);
  const sums = pairs.map(([a, b]) => p.add(a, b));
  const norms = xs.map((x) => p.rowKernel([x], rmsBody(x.shape[1]!)));
  const e = p.exp(z);
  const rowSum = p.reduceSum(e, [1]);
  const g = p.gather(table, idx, 0);
  const rowMax = p.reduceMax(g, [1]);
  p.results(...sums, ...norms.flat(), rowSum, rowMax);
  return check(p);
}

/** A chain of `n` negations of one [rows, cols] activation; only the last is a result. */
export function negChain(n: number, shape: readonly number[] = [2, 8]): CheckedProgram {
  const p = program(`neg-chain-${n}`);
  let v: Value = p.activation('x', 'f32', shape);
  for (let i = 0; i < n; i++) v = p.neg(v);
  p.results(v);
  return check(p);
}

/** `n` adds, each of two fresh [2, 8] activations, every sum a result: eight fill a region's input streams. */
export function freshAdds(n: number): CheckedProgram {
  const p = program(`adds-${n}`);
  const args = Array.from({ length: n }, (_, i) => [p.activation(`a${i}`, 'f32', [2, 8]), p.activation(`b${i}`, 'f32', [2, 8])] as const);
  p.results(...args.map(([a, b]) => p.add(a, b)));
  return check(p);
}

/** `n` fresh activations read two per add (and one by a neg when n is odd), every value a result. */
export function freshReads(n: number): CheckedProgram {
  const p = program(`reads-${n}`);
  const xs = Array.from({ length: n }, (_, i) => p.activation(`x${i}`, 'f32', [2, 8]));
  const outs = [];
  for (let i = 0; i + 1 < n; i += 2) outs.push(p.add(xs[i]!, xs[i + 1]!));
  if (n % 2 === 1) outs.push(p.neg(xs[n - 1]!));
  p.results(...outs);
  return check(p);
}

/** A chain of `n` negations of one activation, every one a result: one stream in, n out. */
export function drainedChain(n: number): CheckedProgram {
  const p = program(`chain-${n}`);
  let v = p.activation('x', 'f32', [2, 8]);
  const outs = [];
  for (let i = 0; i < n; i++) outs.push((v = p.neg(v)));
  p.results(...outs);
  return check(p);
}

/** One core reading `n` host operands (a row kernel multiplying them). */
export function wideCore(n: number): CheckedProgram {
  const p = program(`wide-${n}`);
  const xs = Array.from({ length: n }, (_, i) => p.activation(`x${i}`, 'f32', [2, 8]));
  p.results(...p.rowKernel(xs, (b, ...vs) => vs.slice(1).reduce((acc, v) => b.mul(acc, v), vs[0]!)));
  return check(p);
}

/** Runs `f`; expects an EngineError with `code` and these fields. */
export function expectRefusal(f: () => unknown, code: string, fields: Record<string, unknown>): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof EngineError)) throw new Error(`expected ${code}, got ${caught === undefined ? 'no error' : inspect(caught)}`);
  const wire = caught.toWire();
  expect(wire.code, wire.message).to.equal(code);
  for (const [k, v] of Object.entries(fields)) expect(wire[k], `${code}.${k}`).to.deep.equal(v);
}
