/**
 * Hostile cases of a partition's hardware contexts counted per target: a program whose npu4,host
 * partition needs more npu4 contexts than the device has, with no segment another target can take, is
 * refused with ContextLimit (naming npu4) by `plan` and by runPartitioned, before any session opens.
 */
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

/**
 * 17 npu4 segments (a transpose of rank 5 between reshapes, which the host refuses past rank 4) each
 * between two host `abs` (which npu4 refuses): npu4 needs 17 contexts and no segment can move.
 */
function overflow(): object {
  const eqns: object[] = [{ op: 'abs', in: ['x'], out: 'h0' }];
  let v = 'h0';
  for (let k = 0; k < 17; k++) {
    eqns.push(
      { op: 'reshape', in: [v], out: `n${k}`, shape: [2, 2, 2, 2, 2] }, { op: 'transpose', in: [`n${k}`], out: `m${k}`, perm: [4, 3, 2, 1, 0] },
      { op: 'reshape', in: [`m${k}`], out: `w${k}`, shape: [4, 8] }, { op: 'abs', in: [`w${k}`], out: `h${k + 1}` },
    );
    v = `h${k + 1}`;
  }
  return { format: 'program@1', name: 'overflow', args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4, 8] }], eqns, results: [v] };
}

export const cases: readonly HostileCase[] = [
  {
    name: 'plan --target npu4,host: npu4 needs 17 contexts over its segments, has 16, and none can move',
    setup: (d) => { put(d, 'p.json', overflow()); }, cli: ['plan', '{dir}/p.json', '--target', 'npu4,host', '--json'],
    exit: 1, code: 'ContextLimit',
  },
  {
    name: 'runPartitioned on npu4,host past npu4\'s contexts: ContextLimit naming it, before any session opens',
    here: true,
    script: `import { createEngine, runPartitioned } from '{pkg}';
const engine = createEngine({ cacheDir: '{dir}/cache' });
const x = [{ dtype: 'f32', shape: [4, 8], data: Array.from({ length: 32 }, (_, i) => i / 32) }];
try { await runPartitioned(engine, { program: ${JSON.stringify(overflow())}, target: 'npu4,host', inputs: { x } }); }
catch (e) { console.log(JSON.stringify({ code: e.code, needed: e.needed, max: e.max, target: e.target })); process.exitCode = e.needed === 17 && e.max === 16 && e.target === 'npu4' ? 1 : 4; }
finally { await engine.close(); }`,
    exit: 1, code: 'ContextLimit',
  },
];
