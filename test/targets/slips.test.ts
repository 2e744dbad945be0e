/**
 * The host's published contract constants, pinned (issue 27 item 11: "a bound twice too loose passes").
 * The sweeps check that the kernels stay within the bounds; nothing checked that the bounds themselves
 * are the ones docs/HOST.md publishes. Each expected value here is worked out by hand from that text:
 * u = 2^-24 (f32's unit roundoff), γ(n) = n·u / (1 − n·u), 1 ulp for every transcendental, and the fused
 * attention bound γ(N+2)·Σp|v| + ε·Σp|v| with ε = γ(N) + (max − min + 5)·u + 2·max_j(|scale|·(γ(D+2) + u)·Σ|q·k| + u·|a_j|).
 */
import { expect } from 'chai';
import { attentionBound, F32_U, gamma, HOST_CONTRACTS, HOST_TYPED_CONTRACTS } from '../../src/targets/host/contracts.js';

const u = 2 ** -24;
const g = (n: number): number => (n * u) / (1 - n * u);

describe('host contract constants (pinned against docs/HOST.md)', () => {
  it('u is 2^-24 and γ(n) is n·u / (1 − n·u)', () => {
    expect(F32_U).to.equal(u);
    for (const n of [1, 3, 64, 4096]) expect(gamma(n), `γ(${n})`).to.equal(g(n));
  });

  it('every transcendental is published at 1 ulp, in f32 and in the typed (f16/bf16) table', () => {
    const ops = ['rsqrt', 'exp', 'log', 'tanh', 'erf', 'logistic', 'sin', 'cos'] as const;
    for (const table of [HOST_CONTRACTS, HOST_TYPED_CONTRACTS]) {
      for (const op of ops) {
        const c = table[op];
        expect(c.kind, op).to.equal('ulps');
        expect((c as { ulps: number }).ulps, op).to.equal(1);
      }
    }
  });

  it('the fused attention bound of a hand-worked row', () => {
    // One position, D 4, scale 0.5, Σ|q·k| 3, a = 1, p = 1, |v| = 2 (Σp|v| = 2); max = min.
    const row = { D: 4, N: 1, scale: 0.5, a: [1], masked: [false], scoreMagnitudes: [3], probs: [1], vAbs: [2] };
    const delta = 0.5 * (g(6) + u) * 3 + u * 1;
    const eps = g(1) + 5 * u + 2 * delta;
    expect(attentionBound(row)).to.equal(g(3) * 2 + eps * 2);
    // Two positions, one masked: the masked one adds to Σp|v| only through its weight (0 here).
    const two = { D: 4, N: 2, scale: 1, a: [2, -1e30], masked: [false, true], scoreMagnitudes: [1, 1], probs: [1, 0], vAbs: [1, 5] };
    const d2 = (g(6) + u) * 1 + u * 2;
    expect(attentionBound(two)).to.equal(g(4) * 1 + (g(2) + 5 * u + 2 * d2) * 1);
  });
});
