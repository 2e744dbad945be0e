/**
 * Hostile inputs against the program limits and the silent acceptances (issue 9, items 6, 9, 11, 14):
 * shapes past the element and byte limits, overflowing numbers, names that cannot be keys, too many
 * equations, nesting too deep, unbounded worker counts and bulks. Each is refused typed, quickly, before
 * anything large is allocated.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { HostileCase } from './case.js';

type Json = Record<string, unknown>;

function prog(args: [string, string, number[]][], eqns: Json[], results: string[]): Json {
  return {
    format: 'program@1', name: 'hostile',
    args: args.map(([name, dtype, shape]) => ({ name, role: 'activation', dtype, shape })),
    eqns, results, state: {},
  };
}

const neg = (shape: number[]) => prog([['x', 'f32', shape]], [{ op: 'neg', in: ['x'], out: 'y' }], ['y']);

/** Writes `text` (or JSON of `v`) as `name` in the case's folder. */
const put = (name: string, v: unknown) => (dir: string) => writeFileSync(join(dir, name), typeof v === 'string' ? v : JSON.stringify(v));

const mulLiteral = (dtype: string, lit: string) => '{"format":"program@1","name":"lit","args":[{"name":"x","role":"activation","dtype":"' + dtype
  + '","shape":[2]}],"eqns":[{"op":"mul","in":["x",{"lit":' + lit + '}],"out":"y"}],"results":["y"],"state":{}}';

const DEPTH = 100_000;
const deepAttr = JSON.stringify(neg([2])).replace('"out":"y"', `"out":"y","junk":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`);

// A hundred thousand and one equations: past the limit, but a file small enough to read (3.5 MB).
const manyEqns = () => prog([['x', 'f32', [1]]], new Array<Json>(100_001).fill({ op: 'neg', in: ['x'], out: 'y' }), ['y']);

const cache = ['--cache-dir', '{dir}/cache'];

export const cases: readonly HostileCase[] = [
  { name: 'validate: a shape of [1e9, 1e9] elements', setup: put('p.json', neg([1e9, 1e9])), cli: ['validate', '{dir}/p.json'], exit: 1, code: 'ResourceLimit' },
  { name: 'validate: a shape of 64 twos (2^64 elements)', setup: put('p.json', neg(new Array<number>(64).fill(2))), cli: ['validate', '{dir}/p.json', '--json'], exit: 1, code: 'ResourceLimit' },
  {
    name: 'plan xdna2: a program whose host arena would be 7e19 bytes', setup: put('p.json', neg([2 ** 32, 2 ** 32])),
    cli: ['plan', '{dir}/p.json', '--target', 'xdna2', '--json'], exit: 1, code: 'ResourceLimit',
  },
  {
    name: 'run: iota [1e9] is refused before it is allocated',
    setup: put('p.json', prog([], [{ op: 'iota', in: [], out: 'y', dtype: 'f32', shape: [1e9], dimension: 0 }], ['y'])),
    ownProcess: 'memory', cli: ['run', '{dir}/p.json', '--target', 'cpu', ...cache, '--json'], exit: 1, code: 'ResourceLimit',
  },
  {
    name: 'validate: reshape [2^53-1, 3] -> [6755399441055743, 4] (equal as doubles)',
    setup: put('p.json', prog([['x', 'f32', [2 ** 53 - 1, 3]]], [{ op: 'reshape', in: ['x'], out: 'y', shape: [6755399441055743, 4] }], ['y'])),
    cli: ['validate', '{dir}/p.json'], exit: 1, code: 'ResourceLimit',
  },
  { name: 'validate: a literal 1e999 (not silently +inf)', setup: put('p.json', mulLiteral('f32', '1e999')), cli: ['validate', '{dir}/p.json', '--json'], exit: 1, code: 'InvalidProgram',
    check: (r) => { expect(r.stdout).to.contain('"path":"/eqns/0/in/1/lit"'); } },
  { name: 'validate: an f16 literal 1e6 (it would round to inf)', setup: put('p.json', mulLiteral('f16', '1e6')), cli: ['validate', '{dir}/p.json', '--json'], exit: 1, code: 'InvalidProgram',
    check: (r) => { expect(r.stdout).to.contain('"path":"/eqns/0/in/1/lit"'); } },
  { name: 'validate: an arg named __proto__', setup: put('p.json', mulLiteral('f32', '2').replace(/"x"/g, '"__proto__"')), cli: ['validate', '{dir}/p.json', '--json'], exit: 1, code: 'InvalidProgram',
    check: (r) => { expect(r.stdout).to.contain('"path":"/args/0/name"'); } },
  {
    name: 'run: an inputs key __proto__ is refused, not dropped',
    setup: (dir) => {
      put('p.json', mulLiteral('f32', '2'))(dir);
      put('in.json', '{"__proto__":{"dtype":"f32","shape":[2],"data":[1,2]},"x":{"dtype":"f32","shape":[2],"data":[1,2]}}')(dir);
    },
    cli: ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', ...cache, '--json'], exit: 1, code: 'InvalidInput',
    check: (r) => { expect(r.stdout).to.contain('"path":"/__proto__"'); },
  },
  { name: 'validate: 100001 equations', setup: put('p.json', manyEqns()), cli: ['validate', '{dir}/p.json'], exit: 1, code: 'ResourceLimit' },
  { name: 'plan: 100001 equations', setup: put('p.json', manyEqns()), cli: ['plan', '{dir}/p.json', '--target', 'xdna2', '--json'], exit: 1, code: 'ResourceLimit' },
  { name: 'validate: an attribute nested 100000 deep', setup: put('p.json', deepAttr), cli: ['validate', '{dir}/p.json', '--json'], exit: 1, code: 'ResourceLimit' },
  { name: 'run: an attribute nested 100000 deep', setup: put('p.json', deepAttr), cli: ['run', '{dir}/p.json', '--target', 'cpu', ...cache], exit: 1, code: 'ResourceLimit' },
  { name: 'validate: a limit flag of 0', setup: put('p.json', neg([2])), cli: ['validate', '{dir}/p.json', '--max-elements', '0', '--json'], exit: 2, code: 'UsageError' },
  { name: 'validate: a raised limit admits what the default refuses', setup: put('p.json', neg([2 ** 29])), cli: ['validate', '{dir}/p.json', '--max-elements', String(2 ** 29)], exit: 0 },
  { name: 'farm --workers 400', setup: put('p.json', neg([2])), cli: ['farm', '{dir}', '--target', 'cpu', '--workers', '400', ...cache], exit: 2, code: 'UsageError' },
  { name: 'contracts --bulk 1e9', cli: ['contracts', '--target', 'xdna2', '--bulk', '1e9'], exit: 2, code: 'UsageError' },
  { name: 'contracts --workers 400', cli: ['contracts', '--target', 'npu4', '--workers', '400', '--json'], exit: 2, code: 'UsageError' },
  {
    name: 'plan npu4: the numerics are NarrowStorage, as run --verify uses',
    setup: put('p.json', prog([['x', 'f32', [4]]], [{ op: 'add', in: ['x', 'x'], out: 'y' }], ['y'])),
    cli: ['plan', '{dir}/p.json', '--target', 'npu4'], exit: 0,
    check: (r) => { expect(r.stdout).to.contain('numerics: NarrowStorage').and.not.contain('numerics: Exact'); },
  },
  { name: 'plan npu4: a multiplied literal 65510 (past FP16\'s 65504)', setup: put('p.json', mulLiteral('f32', '65510')), cli: ['plan', '{dir}/p.json', '--target', 'npu4', '--json'], exit: 1, code: 'NarrowingRange' },
];
