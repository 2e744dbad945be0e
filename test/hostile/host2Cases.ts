/**
 * Hostile cases of the `host` target's gather along any axis and its typed kernels: an index outside
 * the gathered axis (past its end, or negative, on an f16 table) is a typed IndexOutOfRange (exit 1)
 * naming the equation, checked before the rows are copied, never a read outside the arena; an i32
 * division by a divisor the typed i32 neg computed as zero is IntegerDivideByZero.
 */
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

const act = (name: string, dtype: string, shape: number[]) => ({ name, role: 'activation', dtype, shape });

const gatherAt = (dtype: string, axis: number) => ({
  format: 'program@1', name: 'g', args: [act('t', dtype, [2, 3, 5]), act('i', 'i32', [2])],
  eqns: [{ op: 'gather', in: ['t', 'i'], out: 'y', axis }], results: ['y'],
});

const table = (dtype: string) => ({ dtype, shape: [2, 3, 5], data: Array.from({ length: 30 }, (_, k) => k / 4) });

const DIV = {
  format: 'program@1', name: 'd', args: [act('a', 'i32', [4]), act('b', 'i32', [4])],
  eqns: [{ op: 'neg', in: ['b'], out: 'nb' }, { op: 'div', in: ['a', 'nb'], out: 'y' }], results: ['y'],
};

export const cases: readonly HostileCase[] = [
  {
    name: 'host: gather along the last axis with an index past its end',
    setup: (d) => { put(d, 'p.json', gatherAt('f32', 2)); put(d, 'in.json', { t: table('f32'), i: { dtype: 'i32', shape: [2], data: [1, 9] } }); },
    cli: ['run', '{dir}/p.json', '--target', 'host', '--inputs', '{dir}/in.json', '--json'],
    exit: 1, code: 'IndexOutOfRange',
  },
  {
    name: 'host: gather along the middle axis of an f16 table with a negative index',
    setup: (d) => { put(d, 'p.json', gatherAt('f16', 1)); put(d, 'in.json', { t: table('f16'), i: { dtype: 'i32', shape: [2], data: [-1, 0] } }); },
    cli: ['run', '{dir}/p.json', '--target', 'host', '--inputs', '{dir}/in.json'],
    exit: 1, code: 'IndexOutOfRange',
  },
  {
    name: 'host: an i32 division by a negated zero',
    setup: (d) => { put(d, 'p.json', DIV); put(d, 'in.json', { a: { dtype: 'i32', shape: [4], data: [1, 2, 3, 4] }, b: { dtype: 'i32', shape: [4], data: [1, 0, 2, 3] } }); },
    cli: ['run', '{dir}/p.json', '--target', 'host', '--inputs', '{dir}/in.json', '--json'],
    exit: 1, code: 'IntegerDivideByZero',
  },
];
