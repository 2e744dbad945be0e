import { expect } from 'chai';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { HOST_ADMISSION, HOST_NUMERICS, HOST_QUANTIZED } from '../../src/targets/host/index.js';
import { CPU_TARGET, admissionOf } from '../../src/targets/index.js';
import type { Admission, Target } from '../../src/targets/target.js';
import { programNumerics } from '../../src/targets/numerics.js';

// The host record before it has a name in TARGET_NAMES: the CPU's record with the host's tables.
const HOST = { ...CPU_TARGET, admission: HOST_ADMISSION, numerics: HOST_NUMERICS, quantizedWeights: HOST_QUANTIZED } as Target;

const capability = (a: Admission): string | null => (a.admitted ? null : a.refusal.kind === 'capability' ? a.refusal.capability : a.refusal.kind);

describe('targets/host', () => {
  it('admits the f32 ops the kernels implement and a quantized matmul, gather and convert', () => {
    const p = program('all');
    const x = p.activation('x', 'f32', [2, 32]);
    const w = p.weight('w', 'q4_0', [8, 32]);
    const e = p.weight('e', 'q8_0', [16, 32]);
    const i = p.activation('i', 'i32', [2]);
    const m = p.matmul(p.exp(p.mul(p.add(x, x), x)), w);
    const s = p.reduceSum(m, [1]);
    const g = p.gather(e, i, 0);
    const d = p.convert(e, 'f32');
    p.results(m, s, p.reshape(g, [64]), d, p.add(i, i));
    const checked = checkProgram(p.build());
    expect(checked.eqns.map((q) => capability(admissionOf(HOST, q)))).to.deep.equal(checked.eqns.map(() => null));
  });

  it('admits f16, bf16 and i32 arithmetic, reductions over any axes and gather along any axis', () => {
    const p = program('wide');
    const x = p.activation('x', 'f16', [2, 4]);
    const b = p.activation('b', 'bf16', [2, 3, 4]);
    const y = p.activation('y', 'f32', [2, 4]);
    const i = p.activation('i', 'i32', [2]);
    const k = p.activation('k', 'i32', [4, 4]);
    p.results(p.exp(x), p.reduceSum(y, [0]), p.iota([4], 0, 'f16'), p.add(x, x), p.reduceMax(b, [0, 2]), p.matmul(b, p.transpose(b, [0, 2, 1])),
      p.gather(b, i, 2), p.gather(y, i, 1), p.neg(k), p.reduceSum(k, [0]), p.matmul(k, k), p.logistic(b),
      p.reduceSum(p.activation('r5', 'f32', [2, 3, 2, 2, 3]), [0, 1]));
    const checked = checkProgram(p.build());
    expect(checked.eqns.map((q) => capability(admissionOf(HOST, q)))).to.deep.equal(checked.eqns.map(() => null));
  });

  it('refuses what no kernel computes with a stable host capability', () => {
    const p = program('no');
    const x = p.activation('x', 'f16', [2, 4]);
    const y = p.activation('y', 'f32', [1, 2, 1, 2, 1]);
    const [r] = p.rowKernel([x], (body, v) => [body.exp(v)]);
    // Five runs of reduced and kept axes: a copy of rank 5 would bring them last ([0, 1] merge to two runs and pass).
    p.results(r!, p.reduceSum(y, [0, 2, 4]), p.transpose(y, [4, 3, 2, 1, 0]));
    const checked = checkProgram(p.build());
    expect(checked.eqns.map((q) => capability(admissionOf(HOST, q)))).to.deep.equal([
      'host.row_kernel.f16.exp', 'host.reduce_sum.rank', 'host.transpose.rank',
    ]);
  });

  it('publishes a contract per op and states the dot-product bound', () => {
    expect(HOST_NUMERICS.kind).to.equal('contracts');
    const p = program('dot');
    p.results(p.matmul(p.activation('x', 'f32', [2, 8]), p.weight('w', 'f32', [8, 3])));
    const a = HOST.admission.matmul(checkProgram(p.build()).eqns[0]!);
    expect(a.admitted && a.contract?.note).to.contain('γ(K+2)');
    expect(HOST_QUANTIZED).to.include.members(['q4_0', 'q4_k', 'q6_k', 'q4nx_q41']);
  });
});

describe('targets/host: run --verify judges each result by the per-op contracts', () => {
  it('propagates: exact ops exact, a unary within 1 ulp, a matmul relative to its K terms, an RMSNorm derived', () => {
    const p = program('verify');
    const x = p.activation('x', 'f32', [2, 64]);
    const moved = p.named('moved').transpose(p.add(x, x), [1, 0]);
    const e = p.named('e').exp(x);
    const m = p.named('m').matmul(x, p.weight('w', 'f32', [64, 16]));
    const [n] = p.rowKernel([x, p.weight('g', 'f32', [64])], (b, v, g) => [b.mul(b.div(v, b.sqrt(b.add(b.div(b.reduceSum(b.mul(v, v)), 64), 1e-6))), g)]);
    p.results(moved, e, m, p.named('n').add(n!, 0));
    const r = programNumerics(checkProgram(p.build()), HOST);
    expect(r.numericsClass).to.equal('Contract');
    expect(r.tolerance['moved']).to.deep.equal({ kind: 'exact' });
    expect(r.tolerance['e']).to.deep.equal({ kind: 'absrel', abs: 2 ** -149, rel: 2 ** -23 });
    expect(r.tolerance['m']).to.deep.equal({ kind: 'absrel', abs: 0, rel: 1.5 * 2 ** -23 * 64 });
    const rn = r.tolerance['n'] as { kind: string; rel: number };
    // Derived from the body's steps (a sum of 64 squares at 2u a term, halved by the sqrt, then a few u): below the old class's rel 1e-5.
    expect(rn.kind).to.equal('absrel');
    expect(rn.rel).to.be.greaterThan(32 * 2 ** -24).and.lessThan(5e-6);
  });

  it('the typed kernels: f16 and bf16 arithmetic exact, a libm function within 1 ulp of its dtype, re-rounded in its dtype downstream', () => {
    const p = program('typed');
    const x = p.activation('x', 'f16', [4, 8]);
    const b = p.activation('b', 'bf16', [4, 8]);
    const f = p.activation('f', 'f32', [64, 2]);
    const q = p.named('q').div(p.mul(p.add(x, x), 3), x);
    const s = p.named('s').reduceSum(b, [0]);
    const e = p.named('e').exp(x);
    const y = p.named('y').mul(e, 3);
    const t = p.named('t').tanh(b);
    const cs = p.named('cs').reduceSum(f, [0]);
    p.results(q, s, e, y, t, cs);
    const r = programNumerics(checkProgram(p.build()), HOST);
    expect(r.tolerance['q']).to.deep.equal({ kind: 'exact' });
    expect(r.tolerance['s']).to.deep.equal({ kind: 'exact' });
    expect(r.tolerance['e']).to.deep.equal({ kind: 'absrel', abs: 2 ** -24, rel: 2 ** -10 });
    expect(r.tolerance['t']).to.deep.equal({ kind: 'absrel', abs: 2 ** -133, rel: 2 ** -7 });
    // exp's ulp, then the mul's own rounding in f16 of a value already off: two f16 ulps, not one and an f32 one.
    expect(r.tolerance['y']).to.deep.equal({ kind: 'absrel', abs: 2 ** -24, rel: 2 * 2 ** -10 });
    // An f32 sum over the first axis: γ(64)·Σ|x| over its 64 terms, not over the last axis' 2.
    expect(r.tolerance['cs']).to.deep.equal({ kind: 'absrel', abs: 0, rel: 64 * 2 ** -23 });
  });
});
