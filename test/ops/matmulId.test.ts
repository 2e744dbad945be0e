/**
 * matmul_id (src/ops/matmulId.ts): the oracle's product by the experts an index chooses, its shape
 * rule and its out-of-range refusal; the host's kernel (matmul_id / matmul_idq records) against the
 * oracle for q4_0, q8_0, f16 and f32 experts within matmul's dot bound, with a negative control (the
 * same result judged against other experts' product fails it).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { IndexOutOfRange } from '../../src/errors/index.js';
import { quantTensor, tensor } from '../../src/ir/tensor.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { quantize } from '../../src/model/gguf/quantize.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { dequantize } from '../../src/numerics/dequant.js';
import { roundToDtype } from '../../src/numerics/float16.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { planProgram } from '../../src/planner/plan.js';
import { HOST_TARGET } from '../../src/targets/host/index.js';
import { XDNA2_TARGET } from '../../src/targets/xdna2/index.js';
import { refuses, run1, t, ty } from './helpers.js';
import { tempDir } from '../jobs/helpers.js';

const E = 4;
const N = 8;
const K = 64;
const T = 3;
const S = 2;

const rand = mulberry32(7);
const values = (n: number) => Array.from({ length: n }, () => Math.fround(rand() * 2 - 1));

/** out[t, s, n] = Σ_k x[t, b ? s : 0, k]·w[ids[t, s], n, k], in f64. */
function reference(x: readonly number[], b: number, w: ArrayLike<number>, ids: readonly number[]): number[] {
  const out: number[] = [];
  for (let ti = 0; ti < T; ti++) {
    for (let si = 0; si < S; si++) {
      const e = ids[ti * S + si]!;
      for (let n = 0; n < N; n++) {
        let acc = 0;
        for (let k = 0; k < K; k++) acc += x[(ti * b + (b === 1 ? 0 : si)) * K + k]! * w[(e * N + n) * K + k]!;
        out.push(acc);
      }
    }
  }
  return out;
}

/** γ(K+2)·Σ|x·w| per output: matmul's dot contract (HOST_CONTRACTS.matmul). */
function dotBounds(x: readonly number[], b: number, w: ArrayLike<number>, ids: readonly number[]): number[] {
  const g = ((K + 2) * 2 ** -24) / (1 - (K + 2) * 2 ** -24);
  const abs = (a: ArrayLike<number>) => Array.from(a, Math.abs);
  return reference(abs(x), b, abs(w), ids).map((m) => g * m + 2 ** -140);
}

const IDS = [3, 0, 1, 1, 2, 3];

describe('matmul_id', () => {
  it('the oracle multiplies each slot by the expert its id chooses, x shared (B = 1) or per slot (B = S)', () => {
    const w = values(E * N * K);
    for (const b of [1, S]) {
      const x = values(T * b * K);
      const got = run1('matmul_id', [t('f32', [T, b, K], x), t('f32', [E, N, K], w), t('i32', [T, S], IDS)], {}, { fp64: true });
      expect(got.shape).to.deep.equal([T, S, N]);
      const want = reference(x, b, w, IDS);
      got.data.forEach((v, i) => expect(v).to.be.closeTo(want[i]!, 1e-12));
      // Negative control: the same product with every slot's expert moved by one differs.
      const other = reference(x, b, w, IDS.map((e) => (e + 1) % E));
      expect(other.some((v, i) => Math.abs(v - got.data[i]!) > 1e-6)).to.equal(true);
    }
  });

  it('refuses an id outside [0, E) when it runs, and bad shapes when it is checked', () => {
    const w = t('f32', [E, N, K], values(E * N * K));
    const x = t('f32', [T, 1, K], values(T * K));
    expect(() => run1('matmul_id', [x, w, t('i32', [T, S], [0, 1, 2, 3, 4, 0])], {}, { eqn: 5 })).to.throw(IndexOutOfRange);
    expect(() => run1('matmul_id', [x, w, t('i32', [T, S], [0, 1, 2, 3, -1, 0])])).to.throw(IndexOutOfRange);
    refuses('matmul_id', [ty('f32', [T, 3, K]), ty('f32', [E, N, K]), ty('i32', [T, S])], {}, '/in/0');
    refuses('matmul_id', [ty('f32', [T, 1, K]), ty('f32', [E, N, K + 1]), ty('i32', [T, S])], {}, '/in/1');
    refuses('matmul_id', [ty('f32', [T, 1, K]), ty('f32', [E, N, K]), ty('f32', [T, S])], {}, '/in/2');
    refuses('matmul_id', [ty('f32', [T, 1, K]), ty('f32', [E, N, K]), ty('i32', [T + 1, S])], {}, '/in/2');
  });

  it('the NPUs refuse it with a capability; the host admits it', () => {
    const p = program('moe');
    p.results(p.matmulId(p.activation('x', 'f32', [T, 1, K]), p.weight('w', 'f32', [E, N, K]), p.activation('ids', 'i32', [T, S])));
    const checked = checkProgram(p.build());
    expect(() => planProgram(checked, XDNA2_TARGET)).to.throw(/matmul_id/);
    expect(() => planProgram(checked, HOST_TARGET)).to.not.throw();
  });

  describe('on the host', function () {
    this.timeout(60_000);
    let tmp: ReturnType<typeof tempDir>;
    let engine: Engine;
    let q8: Engine;
    before(() => {
      tmp = tempDir();
      engine = createEngine({ cacheDir: join(tmp.dir, 'cache') });
      q8 = createEngine({ cacheDir: join(tmp.dir, 'cache-q8'), devices: { host: { matmul: 'q8' } } });
    });
    after(async () => { await engine.close(); await q8.close(); tmp.remove(); });

    for (const dtype of ['q4_0', 'q8_0', 'f16', 'f32'] as const) {
      for (const b of [1, S]) {
        it(`${dtype} experts, B = ${b}: within the dot bound of the oracle (exact and q8 classes)`, async () => {
          const raw = values(E * N * K).map((v) => (dtype === 'f16' ? roundToDtype('f16', v) : v));
          const arg = dtype === 'f32' || dtype === 'f16'
            ? tensor(dtype, [E, N, K], raw)
            : quantTensor(dtype, [E, N, K], quantize(dtype === 'q4_0' ? 'Q4_0' : 'Q8_0', raw));
          const w: ArrayLike<number> = dtype === 'f32' || dtype === 'f16' ? raw : dequantize(arg as never);
          const x = values(T * b * K);
          const p = program('moe');
          p.results(p.named('y').matmulId(p.activation('x', 'f32', [T, b, K]), p.weight('w', dtype, [E, N, K]), p.activation('ids', 'i32', [T, S])));
          const inputs = { x: tensor('f32', [T, b, K], x), w: arg, ids: tensor('i32', [T, S], IDS) };
          const got = Array.from((await engine.submit({ program: p.build(), target: 'host', inputs }).result).results['y']!.data);
          const want = reference(x, b, w, IDS);
          const bound = dotBounds(x, b, w, IDS);
          got.forEach((v, i) => expect(Math.abs(v - want[i]!), `element ${i}`).to.be.at.most(bound[i]!));
          // Negative control: judged against the product by other experts, the result is far outside the bound.
          const other = reference(x, b, w, IDS.map((e) => (e + 1) % E));
          expect(got.some((v, i) => Math.abs(v - other[i]!) > bound[i]! * 100)).to.equal(true);
          // The q8 class: each activation block of 32 rounded to int8 (half a step, amax/254, per element).
          const fast = Array.from((await q8.submit({ program: p.build(), target: 'host', inputs }).result).results['y']!.data);
          const step: number[] = [];
          for (let r = 0; r < T * b; r++) {
            for (let k0 = 0; k0 < K; k0 += 32) {
              const amax = Math.max(...x.slice(r * K + k0, r * K + k0 + 32).map(Math.abs));
              for (let k = 0; k < 32; k++) step.push(amax / 254 * (1 + 2 ** -10) + 2 ** -140);
            }
          }
          const q8Bound = reference(step, b, Array.from(w, Math.abs), IDS).map((v, i) => v + 2 * bound[i]!);
          fast.forEach((v, i) => expect(Math.abs(v - want[i]!), `q8 element ${i}`).to.be.at.most(q8Bound[i]!));
        });
      }
    }

    it('an expert no slot chooses is never read: NaN experts leave the result finite (a dense product masked by 0 would not)', async () => {
      const p = program('moe');
      p.results(p.named('y').matmulId(p.activation('x', 'f32', [T, 1, K]), p.weight('w', 'f32', [E, N, K]), p.activation('ids', 'i32', [T, S])));
      const raw = values(E * N * K);
      // Experts 1 and 3 are NaN throughout; the ids choose 0 and 2 only.
      for (const e of [1, 3]) raw.fill(NaN, e * N * K, (e + 1) * N * K);
      const ids = [0, 2, 2, 0, 2, 2];
      const inputs = { x: tensor('f32', [T, 1, K], values(T * K)), w: tensor('f32', [E, N, K], raw), ids: tensor('i32', [T, S], ids) };
      for (const target of ['host', 'cpu'] as const) {
        const y = Array.from((await engine.submit({ program: p.build(), target, inputs }).result).results['y']!.data);
        expect(y.every(Number.isFinite), target).to.equal(true);
      }
      // Control: choosing expert 1 once makes its slot NaN.
      const bad = Array.from((await engine.submit({ program: p.build(), target: 'host', inputs: { ...inputs, ids: tensor('i32', [T, S], [0, 1, 2, 0, 2, 2]) } }).result).results['y']!.data);
      expect(bad.slice(N, 2 * N).every(Number.isNaN)).to.equal(true);
      expect(bad.filter(Number.isNaN)).to.have.length(N);
    });

    it('an id out of range on the host is the IndexOutOfRange of the equation', async () => {
      const p = program('moe');
      p.results(p.named('y').matmulId(p.activation('x', 'f32', [T, 1, K]), p.weight('w', 'q8_0', [E, N, K]), p.activation('ids', 'i32', [T, S])));
      const inputs = { x: tensor('f32', [T, 1, K], values(T * K)), w: quantTensor('q8_0', [E, N, K], quantize('Q8_0', values(E * N * K))), ids: tensor('i32', [T, S], [0, 1, 2, 3, 4, 0]) };
      const err = await engine.submit({ program: p.build(), target: 'host', inputs }).result.then(() => null, (e: unknown) => e);
      expect((err as { code?: string } | null)?.code).to.equal('IndexOutOfRange');
    });
  });
});
