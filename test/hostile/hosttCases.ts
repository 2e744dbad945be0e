/**
 * Hostile cases of the `host` target (issue 11): equations it has no kernel for, a row kernel body
 * the kernels do not compose, f16 arithmetic, a file weight past its file's end. Each is a typed refusal (exit 1), never a crash in the addon.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

const act = (name: string, dtype: string, shape: number[]) => ({ name, role: 'activation', dtype, shape });

const IOTA = {
  format: 'program@1', name: 't', args: [act('x', 'f32', [4])],
  eqns: [{ op: 'iota', in: [], out: 'i', shape: [4], dimension: 0, dtype: 'f16' }, { op: 'convert', in: ['i'], out: 'j', dtype: 'f32' }, { op: 'add', in: ['x', 'j'], out: 'y' }],
  results: ['y'],
};

const ROW = {
  format: 'program@1', name: 'r', args: [act('x', 'f32', [2, 4]), act('g', 'f32', [4])],
  eqns: [{ op: 'row_kernel', in: ['x', 'g'], out: 'y', body: { params: ['x', 'g'], steps: [{ op: 'reduce_sum', in: ['g'], out: 's' }, { op: 'mul', in: ['x', 's'], out: 'e' }], results: ['e'] } }],
  results: ['y'],
};

const F16 = {
  format: 'program@1', name: 'h', args: [act('x', 'f16', [4])],
  eqns: [{ op: 'exp', in: ['x'], out: 'y' }], results: ['y'],
};

const QMM = {
  format: 'program@1', name: 'q',
  args: [act('x', 'f32', [1, 32]), { name: 'w', role: 'weight', dtype: 'q8_0', shape: [2, 32] }],
  eqns: [{ op: 'matmul', in: ['x', 'w'], out: 'y' }], results: ['y'],
};

export const cases: readonly HostileCase[] = [
  {
    name: 'host: an f16 iota has no kernel',
    setup: (d) => put(d, 'p.json', IOTA),
    cli: ['plan', '{dir}/p.json', '--target', 'host', '--json'],
    exit: 1, code: 'CapabilityMissing',
  },
  {
    name: 'host: a row kernel body with a step no kernel composes (a sum over the shared row)',
    setup: (d) => { put(d, 'p.json', ROW); put(d, 'in.json', { x: { dtype: 'f32', shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] }, g: { dtype: 'f32', shape: [4], data: [1, 1, 1, 1] } }); },
    cli: ['run', '{dir}/p.json', '--target', 'host', '--inputs', '{dir}/in.json'],
    exit: 1, code: 'CapabilityMissing',
  },
  {
    name: 'host: f16 arithmetic',
    setup: (d) => { put(d, 'p.json', F16); put(d, 'in.json', { x: { dtype: 'f16', shape: [4], data: [1, 2, 3, 4] } }); },
    cli: ['run', '{dir}/p.json', '--target', 'host', '--inputs', '{dir}/in.json'],
    exit: 1, code: 'CapabilityMissing',
  },
  {
    name: 'host: a q8_0 weight file range past the end of the file',
    setup: (d) => {
      writeFileSync(join(d, 'w.bin'), new Uint8Array(40));
      put(d, 'p.json', QMM);
      put(d, 'in.json', { x: { dtype: 'f32', shape: [1, 32], data: new Array(32).fill(1) }, w: { dtype: 'q8_0', shape: [2, 32], file: join(d, 'w.bin'), offset: 0, length: 68 } });
    },
    cli: ['run', '{dir}/p.json', '--target', 'host', '--inputs', '{dir}/in.json'],
    exit: 1, code: 'InvalidInput',
  },
];
