/** Shared fixtures of the engine tests: a temp cache per test, small programs and their inputs. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { EngineError } from '../../src/errors/index.js';

export function tempDir(prefix = 'npuo-engine-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** y = exp(x + acc) * 0.5, acc carried as x + acc: a program with an activation, a state and a literal. */
export const STEP_PROGRAM = {
  format: 'program@1',
  name: 'step',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [2, 3] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [2, 3] },
  ],
  eqns: [
    { op: 'add', in: ['acc', 'x'], out: 'acc2' },
    { op: 'exp', in: ['acc2'], out: 'e' },
    { op: 'mul', in: ['e', { lit: 0.5 }], out: 'y' },
  ],
  results: ['y'],
  state: { acc: 'acc2' },
};

export function stepInputs(steps: number) {
  return {
    acc: { dtype: 'f32', shape: [2, 3], data: [0, 0, 0, 0, 0, 0] },
    x: Array.from({ length: steps }, (_, s) => ({ dtype: 'f32', shape: [2, 3], data: [0.25 * s, -1, 1.5, 2, -0.5, 0.125] })),
  };
}

/** STEP_PROGRAM's acc and y after `steps` steps of stepInputs, as f32 arithmetic gives them. */
export function stepExpected(steps: number): { acc: number[]; y: number[] } {
  const f = Math.fround;
  let acc = [0, 0, 0, 0, 0, 0];
  for (let s = 0; s < steps; s++) {
    const x = [0.25 * s, -1, 1.5, 2, -0.5, 0.125];
    acc = acc.map((a, i) => f(a + x[i]!));
  }
  return { acc, y: acc.map((a) => f(f(Math.exp(a)) * 0.5)) };
}

/** A program of `n` chained equations, distinct by a literal, so each `salt` is another cache entry. */
export function chainProgram(n: number, salt = 0) {
  const eqns = [];
  let prev = 'x';
  for (let i = 0; i < n; i++) {
    const op = i % 2 === 0 ? 'add' : 'mul';
    eqns.push({ op, in: [prev, { lit: i % 2 === 0 ? 0.5 + salt : 1.0001 }], out: `v${i}` });
    prev = `v${i}`;
  }
  return {
    format: 'program@1', name: `chain-${n}-${salt}`,
    args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4, 8] }],
    eqns, results: [prev], state: {},
  };
}

export const CHAIN_INPUTS = { x: { dtype: 'f32', shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i / 8) } };

/** Awaits a promise that must reject with a typed error of `code`; returns the error. */
export async function rejectsWith(p: Promise<unknown>, code: string): Promise<EngineError> {
  try {
    await p;
  } catch (e) {
    expect(e, String(e)).to.be.instanceOf(EngineError);
    expect((e as EngineError).code, (e as Error).message).to.equal(code);
    return e as EngineError;
  }
  expect.fail(`expected a ${code} rejection, but it resolved`);
}

/** How long `f` takes to settle, in ms of this process's monotonic clock. */
export async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

/**
 * The deadline of a job meant to hang. A job's deadline bounds each of its device calls, the normal ones
 * before the hang too, so it must be long enough for those on a loaded machine: HANG_FACTOR times what
 * `normalMs`, a warm job making the same calls measured in this process, took; never under 1 s. A hang
 * misses any deadline, so a long one only costs time.
 */
export function hangDeadline(normalMs: number): number {
  const HANG_FACTOR = 20;
  return Math.max(1000, Math.ceil(HANG_FACTOR * normalMs));
}
