/**
 * The docs' verified list for the Intel NPU, each program through the NPU4 backend onto the simulated
 * device in a Session, against the CPU oracle: bit for bit on integer-valued inputs, and under the
 * NarrowStorage class for exp, div and sqrt. The sign of a zero is not promised (neg of +0 is +0).
 */
import { expect } from 'chai';
import type { ProgramBuilder, Value } from '../../../src/ops/builder.js';
import { lit, program } from '../../../src/ops/builder.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import { checkProgram } from '../../../src/ops/validate.js';
import type { Tensor } from '../../../src/ir/tensor.js';
import { tensor } from '../../../src/ir/tensor.js';
import type { DType, Shape } from '../../../src/ir/types.js';
import { compareTensor } from '../../../src/numerics/compare.js';
import { toleranceFor } from '../../../src/numerics/classes.js';
import { runProgram } from '../../../src/oracle/index.js';
import type { TensorMap } from '../../../src/oracle/types.js';
import { Npu4SimDevice } from '../../../src/devices/npu4/simDevice.js';
import { filled, openSession, runOnNpu4 } from './helpers.js';

type Mode = 'exact' | 'narrow';

/** Equal values (+0 and -0 alike: the sign of a zero is not promised), NaN equal to NaN. */
function expectSame(got: Tensor, want: Tensor, what: string): void {
  expect([got.dtype, got.shape], what).to.deep.equal([want.dtype, want.shape]);
  got.data.forEach((g, i) => {
    const w = want.data[i]!;
    if (!(g === w || (Number.isNaN(g) && Number.isNaN(w)))) expect.fail(`${what}[${i}]: got ${g}, want ${w}`);
  });
}

/** Runs the program on the NPU and on the oracle over the same steps and compares every result and state. */
async function matchesOracle(checked: CheckedProgram, feeds: { weights?: TensorMap; state?: TensorMap }, steps: readonly TensorMap[], mode: Mode = 'exact') {
  const want = runProgram(checked, { weights: feeds.weights ?? {}, state: feeds.state ?? {}, steps });
  const got = await runOnNpu4(checked, feeds, steps);
  want.forEach((w, s) => {
    for (const [kind, names] of [['results', Object.keys(w.results)], ['state', Object.keys(w.state)]] as const) {
      for (const n of names) {
        const [g, r] = [got[s]![kind][n]!, w[kind][n]!];
        if (mode === 'exact') expectSame(g, r, `step ${s} ${kind} ${n}`);
        else {
          const c = compareTensor(g, r, toleranceFor('NarrowStorage', r.dtype));
          expect(c.pass, `step ${s} ${kind} ${n}: ${c.reason ?? ''}`).to.equal(true);
        }
      }
    }
  });
}

/** Integer-valued elements in [-k, k] of `dtype`, varied by `salt` (element 0 of salt 0 is +0). */
const ints = (dtype: DType, shape: Shape, salt = 0, k = 7) => filled(dtype, shape, (i) => ((i * 4 + salt * 3 + k) % (2 * k + 1)) - k);

/** One program over F16 activations `x` (and `y`), built by `body`, compared over one step. */
async function f16Case(name: string, shape: Shape, body: (p: ProgramBuilder, x: Value, y: Value) => Value, mode: Mode = 'exact', inputs?: TensorMap) {
  const p = program(name);
  const x = p.activation('x', 'f16', shape);
  const y = p.activation('y', 'f16', shape);
  p.results(body(p, x, y));
  await matchesOracle(checkProgram(p.build()), {}, [inputs ?? { x: ints('f16', shape), y: ints('f16', shape, 1) }], mode);
}

const POSITIVE = { x: filled('f16', [2, 3], (i) => i * 3 + 1), y: filled('f16', [2, 3], (i) => (i % 4) + 1) };

describe('devices/npu4: the verified list against the oracle', () => {
  for (const op of ['add', 'sub', 'mul', 'max', 'ge'] as const) {
    it(`F16 elementwise ${op}, bit for bit`, () => f16Case(op, [2, 3], (p, x, y) => p.named('z')[op](x, y)));
  }
  it('F16 neg, bit for bit but for the sign of zero', () => f16Case('neg', [2, 3], (p, x) => p.named('z').neg(x)));
  it('F16 div within FP16 tolerance', () => f16Case('div', [2, 3], (p, x, y) => p.named('z').div(x, y), 'narrow', POSITIVE));
  it('F16 sqrt within FP16 tolerance', () => f16Case('sqrt', [2, 3], (p, x) => p.named('z').sqrt(x), 'narrow', POSITIVE));
  it('F16 exp within FP16 tolerance', () => f16Case('exp', [2, 3], (p, x) => p.named('z').exp(x), 'narrow'));

  it('inline scalar literals on either side', () => f16Case('lits', [2, 3], (p, x) =>
    p.named('z').mul(p.named('b').sub(3, p.named('a').add(x, 2)), lit(-2))));

  it('row and column sums and maxima', async () => {
    const p = program('reduce');
    const x = p.activation('x', 'f16', [3, 4]);
    p.results(p.named('rs').reduceSum(x, [1]), p.named('cs').reduceSum(x, [0]), p.named('rm').reduceMax(x, [1]), p.named('cm').reduceMax(x, [0]));
    await matchesOracle(checkProgram(p.build()), {}, [{ x: ints('f16', [3, 4]) }]);
  });

  it('a matmul', async () => {
    const p = program('matmul');
    const a = p.activation('a', 'f16', [2, 3]);
    const w = p.weight('w', 'f16', [3, 4]);
    p.results(p.named('c').matmul(a, w));
    await matchesOracle(checkProgram(p.build()), { weights: { w: ints('f16', [3, 4], 2) } }, [{ a: ints('f16', [2, 3]) }]);
  });

  it('a gather by I32 indices (on either axis) and by an iota', async () => {
    const p = program('gather');
    const src = p.activation('src', 'f16', [4, 3]);
    const idx = p.activation('idx', 'i32', [5]);
    const iota = p.named('io').iota([3], 0, 'i32');
    p.results(p.named('g0').gather(src, idx, 0), p.named('g1').gather(src, iota, 1), p.named('g2').gather(src, p.named('part').slice(idx, [1], [3]), 1));
    const feeds = { src: ints('f16', [4, 3]), idx: tensor('i32', [5], [3, 0, 2, 2, 1]) };
    await matchesOracle(checkProgram(p.build()), {}, [feeds]);
  });

  it('transpose, reshape, slice (with a stride), concat and broadcast', async () => {
    const p = program('movement');
    const x = p.activation('x', 'f16', [2, 3]);
    const v = p.activation('v', 'f16', [3]);
    const t = p.named('t').transpose(x, [1, 0]);
    const r = p.named('r').reshape(t, [6]);
    const s = p.named('s').slice(r, [1], [6], [2]);
    const c = p.named('c').concat([x, p.named('b').broadcast(v, [1, 3], [1])], 0);
    p.results(t, r, s, c);
    await matchesOracle(checkProgram(p.build()), {}, [{ x: ints('f16', [2, 3]), v: ints('f16', [3], 4) }]);
  });

  it('a dynamic_update_slice at a literal and at a runtime index', async () => {
    const p = program('dus');
    const x = p.activation('x', 'f16', [4, 3]);
    const u = p.activation('u', 'f16', [1, 3]);
    const pos = p.activation('pos', 'i32', []);
    p.results(p.named('lit').dynamicUpdateSlice(x, u, [lit(2, 'i32'), lit(0, 'i32')]), p.named('rt').dynamicUpdateSlice(x, u, [pos, lit(0, 'i32')]));
    const steps = [0, 3, 1].map((k) => ({ x: ints('f16', [4, 3], k), u: filled('f16', [1, 3], (i) => 100 + i + k), pos: tensor('i32', [], [k]) }));
    await matchesOracle(checkProgram(p.build()), {}, steps);
  });

  it('rank four tensors', async () => {
    const p = program('rank4');
    const x = p.activation('x', 'f16', [2, 3, 2, 4]);
    const y = p.activation('y', 'f16', [2, 3, 2, 4]);
    const t = p.named('t').transpose(p.named('s').add(x, y), [0, 2, 1, 3]);
    p.results(t, p.named('r').reduceSum(t, [3]), p.named('m').reduceMax(x, [1, 2]));
    await matchesOracle(checkProgram(p.build()), {}, [{ x: ints('f16', [2, 3, 2, 4]), y: ints('f16', [2, 3, 2, 4], 2) }]);
  });

  it('an F32 boundary around FP16 arithmetic: bit for bit on integer values, NarrowStorage otherwise', async () => {
    const p = program('boundary');
    const x = p.activation('x', 'f32', [2, 4]);
    const w = p.weight('w', 'f32', [4, 3]);
    const m = p.named('m').matmul(p.named('h').add(x, 1), w);
    p.results(m, p.named('s').reduceSum(p.named('e').mul(m, m), [1]));
    const checked = checkProgram(p.build());
    await matchesOracle(checked, { weights: { w: ints('f32', [4, 3], 1, 3) } }, [{ x: ints('f32', [2, 4]) }]);
    const frac = filled('f32', [2, 4], (i) => (i - 3.3) / 7);
    await matchesOracle(checked, { weights: { w: filled('f32', [4, 3], (i) => Math.sin(i)) } }, [{ x: frac }], 'narrow');
  });

  it('activation slots and a carried running-sum state, replayed over changing inputs', async () => {
    const p = program('running');
    const x = p.activation('x', 'f32', [2, 3]);
    const acc = p.state('acc', 'f32', [2, 3]);
    const acc2 = p.named('acc2').add(acc, x);
    p.results(p.named('y').mul(acc2, 2));
    p.carry(acc, acc2);
    const steps = [0, 1, 2, 3, 4].map((k) => ({ x: ints('f32', [2, 3], k) }));
    await matchesOracle(checkProgram(p.build()), { state: { acc: ints('f32', [2, 3], 9) } }, steps);
  });

  it('a program is one compiled graph and one replay per step, however many equations it holds', async () => {
    const p = program('many');
    let v = p.activation('x', 'f16', [4]);
    for (let i = 0; i < 12; i++) v = p.named(`v${i}`)[i % 2 ? 'add' : 'max'](v, i);
    p.results(v);
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, checkProgram(p.build()));
    for (let k = 0; k < 3; k++) await s.replay({ x: ints('f16', [4], k) }, [v.name], 5000);
    expect(dev.live().contexts).to.equal(1);
    expect(dev.runs).to.equal(3);
  });
});
