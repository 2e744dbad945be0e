/**
 * Hostile cases of partitioned planning and runs (issue 14): a target list that is malformed, lists a
 * target twice or names none that exists is a usage error; a program no listed target admits is a
 * typed refusal. The API refuses a bad list as InvalidOptions naming `target`.
 */
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

const act = (name: string, shape: number[]) => ({ name, role: 'activation', dtype: 'f32', shape });

const COLLECTIVE = {
  format: 'program@1', name: 'c', args: [act('x', [4, 8])],
  eqns: [{ op: 'exp', in: ['x'], out: 'e' }, { op: 'all_reduce', in: ['e'], out: 'r', reduce: 'sum' }],
  results: ['r'],
};
const EXP = { format: 'program@1', name: 'e', args: [act('x', [4, 8])], eqns: [{ op: 'exp', in: ['x'], out: 'y' }], results: ['y'] };

const file = (p: object) => (d: string): void => { put(d, 'p.json', p); };
const plan = (target: string): readonly string[] => ['plan', '{dir}/p.json', '--target', target, '--json'];

export const cases: readonly HostileCase[] = [
  { name: 'plan --target xdna2,xdna2: a target listed twice', setup: file(EXP), cli: plan('xdna2,xdna2'), exit: 2, code: 'UsageError' },
  { name: 'plan --target xdna2,: an empty name in the list', setup: file(EXP), cli: plan('xdna2,'), exit: 2, code: 'UsageError' },
  { name: 'plan --target ,: no name at all', setup: file(EXP), cli: plan(','), exit: 2, code: 'UsageError' },
  { name: 'plan --target xdna2,gpu: an unknown target in the list', setup: file(EXP), cli: plan('xdna2,gpu'), exit: 2, code: 'UsageError' },
  {
    name: 'plan --target xdna2,host: a collective no listed target admits',
    setup: file(COLLECTIVE), cli: plan('xdna2,host'), exit: 1, code: 'CapabilityMissing',
  },
  {
    name: 'runPartitioned with a target listed twice: InvalidOptions naming target',
    here: true,
    script: `import { createEngine, runPartitioned } from '{pkg}';
const engine = createEngine({ cacheDir: '{dir}/cache' });
try { await runPartitioned(engine, { program: ${JSON.stringify(EXP)}, target: 'host,host' }); }
catch (e) { console.log(JSON.stringify({ code: e.code, field: e.field })); process.exitCode = e.field === 'target' ? 1 : 4; }
finally { await engine.close(); }`,
    exit: 1, code: 'InvalidOptions',
  },
];
