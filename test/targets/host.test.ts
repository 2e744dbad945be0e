import { expect } from 'chai';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { HOST_ADMISSION, HOST_NUMERICS, HOST_QUANTIZED } from '../../src/targets/host/index.js';
import { CPU_TARGET, admissionOf } from '../../src/targets/index.js';
import type { Admission, Target } from '../../src/targets/target.js';

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

  it('refuses what no kernel computes with a stable host capability', () => {
    const p = program('no');
    const x = p.activation('x', 'f16', [2, 4]);
    const y = p.activation('y', 'f32', [2, 4]);
    p.results(p.exp(x), p.reduceSum(y, [0]), p.iota([4], 0, 'f16'), p.add(x, x));
    const checked = checkProgram(p.build());
    expect(checked.eqns.map((q) => capability(admissionOf(HOST, q)))).to.deep.equal([
      'host.exp.f16', 'host.reduce_sum.axes', 'host.iota.f16', 'host.add.f16',
    ]);
  });

  it('publishes the Contract class and states the dot-product bound', () => {
    expect(HOST_NUMERICS.numericsClass).to.equal('Contract');
    expect(HOST_NUMERICS.perEquation).to.contain('γ(K+2)');
    expect(HOST_QUANTIZED).to.include.members(['q4_0', 'q4_k', 'q6_k', 'q4nx_q41']);
  });
});
