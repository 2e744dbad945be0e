/**
 * Hostile cases of the `host` target (issue 11): equations it has no kernel for, a row kernel body
 * the kernels do not compose, an f16 row kernel with no derived bound, a reduction past rank 4, a file weight past its file's end. Each is a typed refusal (exit 1), never a crash in the addon.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

const act = (name: string, dtype: string, shape: number[]) => ({ name, role: 'activation', dtype, shape });

const ROW16 = {
  format: 'program@1', name: 't', args: [act('x', 'f16', [2, 4])],
  eqns: [{ op: 'row_kernel', in: ['x'], out: 'y', body: { params: ['x'], steps: [{ op: 'exp', in: ['x'], out: 'e' }, { op: 'exp', in: ['e'], out: 'ee' }], results: ['ee'] } }],
  results: ['y'],
};

const ROW = {
  format: 'program@1', name: 'r', args: [act('x', 'f32', [2, 4]), act('g', 'f32', [4])],
  eqns: [{ op: 'row_kernel', in: ['x', 'g'], out: 'y', body: { params: ['x', 'g'], steps: [{ op: 'reduce_sum', in: ['g'], out: 's' }, { op: 'mul', in: ['x', 's'], out: 'e' }], results: ['e'] } }],
  results: ['y'],
};

const ALTERNATING = {
  format: 'program@1', name: 'h', args: [act('x', 'f32', [2, 2, 2, 2, 2])],
  eqns: [{ op: 'reduce_sum', in: ['x'], out: 'y', axes: [0, 2, 4] }], results: ['y'],
};

const QMM = {
  format: 'program@1', name: 'q',
  args: [act('x', 'f32', [1, 32]), { name: 'w', role: 'weight', dtype: 'q8_0', shape: [2, 32] }],
  eqns: [{ op: 'matmul', in: ['x', 'w'], out: 'y' }], results: ['y'],
};

export const cases: readonly HostileCase[] = [
  {
    name: 'host: an f16 row kernel with a libm step of an inexact value (exp of an exp), which has no derived bound',
    setup: (d) => put(d, 'p.json', ROW16),
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
    name: 'host: a reduction over axes that alternate five times (a copy of rank 5)',
    setup: (d) => { put(d, 'p.json', ALTERNATING); put(d, 'in.json', { x: { dtype: 'f32', shape: [2, 2, 2, 2, 2], data: new Array(32).fill(1) } }); },
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
