import { expect } from 'chai';
import { backendOf, type CompileOptions } from '../../src/compiler/index.js';
import { loadBackend } from '../../src/compiler/load.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { planProgram } from '../../src/planner/plan.js';
import { resolveTarget } from '../../src/targets/index.js';
import { TARGET_NAMES } from '../../src/targets/target.js';

/** y = x * 3 + 1: admitted by every target. */
function sample() {
  const p = program('load');
  const x = p.activation('x', 'f32', [4, 8]);
  p.results(p.named('y').add(p.mul(x, 3), 1));
  return checkProgram(p.build());
}

describe('compiler: loadBackend (the workers\' backend, imported per target)', () => {
  const options: CompileOptions[] = [{}, { hostMatmul: 'exact' }, { hostMatmul: 'q8' }];
  for (const target of TARGET_NAMES) {
    it(`${target}: the backend backendOf gives, under every compile option (identity, units, artifact bytes)`, async () => {
      const checked = sample();
      const plan = planProgram(checked, resolveTarget(target));
      for (const o of options) {
        const lazy = await loadBackend(target, o);
        const eager = backendOf(target, o);
        expect([lazy.target.name, lazy.compiler, lazy.options], JSON.stringify(o)).to.deep.equal([eager.target.name, eager.compiler, eager.options]);
        expect(JSON.stringify(lazy.units(checked, plan))).to.equal(JSON.stringify(eager.units(checked, plan)));
        expect(Buffer.from(lazy.compile(checked, plan, 0)).equals(Buffer.from(eager.compile(checked, plan, 0))), JSON.stringify(o)).to.equal(true);
      }
    });
  }

  it('control: the host\'s q8 and exact backends differ in identity, so a loader that dropped the option would fail the check above', async () => {
    expect((await loadBackend('host', { hostMatmul: 'q8' })).options).to.not.deep.equal((await loadBackend('host')).options);
  });
});
