/**
 * Hostile cases of a partition's hardware contexts counted per target: a program whose npu4,host
 * partition leaves the host (the last target) more segments than its device has contexts is refused
 * with ContextLimit by `plan` and by runPartitioned, before any session opens.
 */
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

/** 17 npu4 segments (sub, mul on f32) between 18 host ones (abs): one npu4 segment goes on, the host still needs 17. */
function overflow(): object {
  const eqns: object[] = [{ op: 'abs', in: ['x'], out: 'h0' }];
  let v = 'h0';
  for (let k = 0; k < 17; k++) {
    eqns.push({ op: 'sub', in: [v, 'x'], out: `s${k}` }, { op: 'mul', in: [`s${k}`, { lit: 0.5 }], out: `m${k}` }, { op: 'abs', in: [`m${k}`], out: `h${k + 1}` });
    v = `h${k + 1}`;
  }
  return { format: 'program@1', name: 'overflow', args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4, 8] }], eqns, results: [v] };
}

export const cases: readonly HostileCase[] = [
  {
    name: 'plan --target npu4,host: the host needs 17 contexts over its segments, has 16',
    setup: (d) => { put(d, 'p.json', overflow()); }, cli: ['plan', '{dir}/p.json', '--target', 'npu4,host', '--json'],
    exit: 1, code: 'ContextLimit',
  },
  {
    name: 'runPartitioned on npu4,host past the host\'s contexts: ContextLimit before any session opens',
    script: `import { createEngine, runPartitioned } from '{pkg}';
const engine = createEngine({ cacheDir: '{dir}/cache' });
const x = [{ dtype: 'f32', shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i / 32) }];
try { await runPartitioned(engine, { program: ${JSON.stringify(overflow())}, target: 'npu4,host', inputs: { x } }); }
catch (e) { console.log(JSON.stringify({ code: e.code, needed: e.needed, max: e.max })); process.exitCode = e.needed === 17 && e.max === 16 ? 1 : 4; }
finally { await engine.close(); }`,
    exit: 1, code: 'ContextLimit',
  },
];
