/** Shared by the device tests: small checked programs, and buffers bound by the recording ABI. */
import { compileCpu } from '../../src/compiler/cpu.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { parseProgram } from '../../src/ir/codec.js';
import { checkProgram } from '../../src/ops/validate.js';
import type { BufferId, Device, LoadedArtifact } from '../../src/devices/index.js';

/** Parses and checks a program written in the format. */
export function checked(json: unknown): CheckedProgram {
  return checkProgram(parseProgram(json));
}

/** acc2 = acc + x; y = exp(acc2) * w; the state carries acc2. f32 [2, 3]. */
export const ADD_EXP = {
  format: 'program@1',
  name: 'add-exp',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [2, 3] },
    { name: 'w', role: 'weight', dtype: 'f32', shape: [2, 3] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [2, 3] },
  ],
  eqns: [
    { op: 'add', in: ['acc', 'x'], out: 'acc2' },
    { op: 'exp', in: ['acc2'], out: 'e' },
    { op: 'mul', in: ['e', 'w'], out: 'y' },
  ],
  results: ['y'],
  state: { acc: 'acc2' },
};

/** q = a / b in i32, for the oracle's typed division error. */
export const IDIV = {
  format: 'program@1',
  name: 'idiv',
  args: [
    { name: 'a', role: 'activation', dtype: 'i32', shape: [3] },
    { name: 'b', role: 'activation', dtype: 'i32', shape: [3] },
  ],
  eqns: [{ op: 'div', in: ['a', 'b'], out: 'q' }],
  results: ['q'],
  state: {},
};

/** The CPU artifact of a program. */
export function artifactOf(json: unknown) {
  return compileCpu(checked(json));
}

export function f32Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer);
}

export function i32Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(Int32Array.from(values).buffer);
}

export function f32Of(bytes: Uint8Array): number[] {
  return [...new Float32Array(bytes.slice().buffer)];
}

export function i32Of(bytes: Uint8Array): number[] {
  return [...new Int32Array(bytes.slice().buffer)];
}

/** One buffer per argument of a loaded artifact, of exactly its size: a complete, valid binding. */
export function bindAll(dev: Device, loaded: LoadedArtifact): Record<string, BufferId> {
  const out: Record<string, BufferId> = {};
  for (const a of loaded.args) out[a.name] = dev.allocBuffer(a.bytes);
  return out;
}

/** Reads a whole bound buffer. */
export function readAll(dev: Device, loaded: LoadedArtifact, b: Record<string, BufferId>, name: string): Uint8Array {
  const arg = loaded.args.find((a) => a.name === name);
  if (!arg) throw new Error(`no argument ${name}`);
  return dev.read(b[name]!, 0, arg.bytes);
}

/** Resolves to the error a promise rejects with; fails if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection, the promise resolved');
}

/** The error a call throws; fails if it returns. */
export function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw, the call returned');
}
