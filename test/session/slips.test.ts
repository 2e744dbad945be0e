/**
 * A state handed between sessions must be of the taker's dtype, not only of its size (issue 27 item 11):
 * an f16 KV cache and a bf16 one have the same bytes, and read as the other they are wrong numbers with
 * no error. Both ways of handing over are checked: on one device (setState from a session) and from
 * another device (exportState, then setSharedState). The control: a taker of the same dtype gets the values.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { InvalidInput } from '../../src/errors/index.js';
import { tensor } from '../../src/ir/tensor.js';
import type { DType } from '../../src/ir/types.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { program } from '../../src/ops/builder.js';
import { tempDir } from '../jobs/helpers.js';

/** A program carrying `cache` [2, 4] of `dtype`: writes `row` at `pos`, returns the cache as f32. */
function build(name: string, dtype: DType) {
  const p = program(name);
  const cache = p.state('cache', dtype, [2, 4]);
  const next = p.dynamicUpdateSlice(cache, p.convert(p.activation('row', 'f32', [1, 4]), dtype), [p.activation('pos', 'i32', []), 0]);
  p.carry(cache, next);
  p.results(p.named('y').convert(next, 'f32'));
  return p.build();
}
const at = (pos: number, v: number) => ({ row: tensor('f32', [1, 4], [v, v, v, v]), pos: tensor('i32', [], [pos]) });

describe('state handoff slips: the dtype of a state handed over', function () {
  this.timeout(120_000);
  const dir = tempDir('npuo-handoff-');
  let engine: Engine | undefined;
  const on = (): Engine => engine!;
  before(() => { engine = createEngine({ cacheDir: join(dir.dir, 'cache') }); });
  after(async () => { await engine?.close(); dir.remove(); });

  for (const [from, to] of [['host', 'host'], ['cpu', 'host']] as const) {
    it(`${from} to ${to}: an f16 state is refused by a bf16 taker (InvalidInput naming it), taken by an f16 one`, async () => {
      const a = await on().openSession({ program: build(`a-${from}`, 'f16'), target: from, zeroState: true });
      await a.step(at(0, 1.5));
      const wrong = await on().openSession({ program: build(`b-${to}`, 'bf16'), target: to, zeroState: true });
      const err = await wrong.takeStateFrom(a).catch((e: unknown) => e);
      expect(err, 'a bf16 taker of an f16 state').to.be.instanceOf(InvalidInput);
      expect((err as Error).message).to.include('cache');
      const right = await on().openSession({ program: build(`c-${to}`, 'f16'), target: to, zeroState: true });
      await right.takeStateFrom(a);
      const y = (await right.step(at(1, 2))).results['y']!.data;
      expect(Array.from(y)).to.deep.equal([1.5, 1.5, 1.5, 1.5, 2, 2, 2, 2]);
      for (const s of [a, wrong, right]) await s.close();
    });
  }
});
