/**
 * `run --verify` of Qwen3 programs on the host target with the fused attention record: a prefill and
 * decode steps after it (their cache filled only in part, so positions past the last written one are
 * skipped) verify against the oracle, every layer's attention is one record (its two ropes one each), and a kernel that drops
 * the last visible position fails verification. (The weights' spread is 0.05: at 0.2 a logit near 0
 * cancels past the propagated relative tolerance on the third decode step with the unfused lowering as
 * well, the premise the tolerance records.)
 */
import { expect } from 'chai';
import { findRewrites } from '../../../src/compiler/host/rewrite.js';
import { loadHostKernels, type HostKernels } from '../../../src/devices/host/native.js';
import { tensor } from '../../../src/ir/tensor.js';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { buildProgram, cacheRow, cacheShapes, stepActivations } from '../../../src/model/qwen3/program.js';
import { InvalidOptions } from '../../../src/errors/index.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { tempDir } from '../../jobs/helpers.js';
import { tinyF32Model } from './helpers.js';

const OPTS = { layers: 2, hidden: 64, intermediate: 96, heads: 4, kvHeads: 2, headDim: 16, vocab: 64, std: 0.05 } as const;
const CTX = 24;

describe('model/qwen3: run --verify on host with the fused attention', function () {
  this.timeout(120_000);
  let h: HostKernels;
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  before(function () {
    try { h = loadHostKernels(); } catch { this.skip(); }
  });
  beforeEach(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeEach() failed before setting them
  afterEach(async () => { await engine?.close(); tmp?.remove(); });

  const { cfg, weights, values } = tinyF32Model(OPTS);
  const zeroCache = () => Object.fromEntries([...cacheShapes(cfg, CTX)].map(([n, s]) => [n, tensor('f32', s, new Float64Array(s.reduce((a, b) => a * b, 1)))]));

  async function prefillThenDecode(steps: number) {
    const prefill = buildProgram(cfg, weights, { tokens: 5, ctx: CTX });
    const decode = buildProgram(cfg, weights, { tokens: 1, ctx: CTX });
    for (const p of [prefill, decode]) {
      const kinds = [...findRewrites(checkProgram(p)).at.values()].map((w) => w.kind).sort();
      expect(kinds).to.deep.equal([...new Array<string>(cfg.layers).fill('attention'), ...new Array<string>(2 * cfg.layers).fill('rope')]);
    }
    const ids = [3, 17, 9, 40, 22];
    const first = await engine.submit({
      program: prefill, target: 'host', verify: true,
      inputs: { ...values, ...zeroCache(), ...stepActivations(prefill, ids, [0, 1, 2, 3, 4]) },
    }).result;
    const acts = Array.from({ length: steps }, (_, k) => stepActivations(decode, [(7 * k + 5) % 60], [5 + k]));
    const names = Object.keys(acts[0]!);
    const next = await engine.submit({
      program: decode, target: 'host', verify: true, steps,
      inputs: { ...values, ...first.state, ...Object.fromEntries(names.map((n) => [n, acts.map((a) => a[n]!)])) },
    }).result;
    return { first, next };
  }

  it('a prefill of 5 tokens and 3 decode steps at a context of 24 verify against the oracle', async () => {
    const { first, next } = await prefillThenDecode(3);
    expect(first.verification?.pass, JSON.stringify(first.verification)).to.equal(true);
    expect(next.verification?.pass, JSON.stringify(next.verification)).to.equal(true);
  });

  it('the cache holds each written position\'s keys and values as the rows cacheRow names, and nothing else (the old [heads, dim, ctx] reading of the keys does not)', async () => {
    const { first } = await prefillThenDecode(1);
    const nonzero = (d: ArrayLike<number>, at: number, n: number) => Array.from({ length: n }, (_, i) => d[at + i]!).some((x) => x !== 0);
    for (let l = 0; l < cfg.layers; l++) for (const which of ['k', 'v'] as const) {
      const { name, length } = cacheRow(cfg, CTX, which, l, 0, 0);
      const data = first.state[name]!.data;
      expect(first.state[name]!.shape).to.deep.equal(cacheShapes(cfg, CTX).get(name));
      let written = 0;
      for (let head = 0; head < cfg.kvHeads; head++) for (let pos = 0; pos < CTX; pos++) {
        const r = cacheRow(cfg, CTX, which, l, head, pos);
        expect(r.name).to.equal(name);
        // The prefill wrote positions 0..4 (its 5 tokens); every other row is still zero.
        expect(nonzero(data, r.offset, length), `${name} head ${head} position ${pos}`).to.equal(pos < 5);
        if (pos < 5) written += length;
      }
      expect(Array.from(data).filter((x) => x !== 0).length).to.be.at.most(written);
      if (which === 'k') {
        // Control: the unwritten position 6 of head 0 read as the old [heads, dim, ctx] layout lands in written rows.
        expect(Array.from({ length: cfg.headDim }, (_, d) => data[d * CTX + 6]!).some((x) => x !== 0)).to.equal(true);
      }
    }
    const bad: [string, number, number, number][] = [['layer', cfg.layers, 0, 0], ['head', 0, cfg.kvHeads, 0], ['pos', 0, 0, CTX], ['pos', 0, 0, -1]];
    for (const [what, layer, head, pos] of bad) {
      expect(() => cacheRow(cfg, CTX, 'k', layer, head, pos), what).to.throw(InvalidOptions).with.property('field', what);
    }
  });

  it('negative control: a kernel that drops each row\'s last visible position fails verification', async () => {
    h.setAttentionFault('drop-last');
    try {
      const { first, next } = await prefillThenDecode(1);
      expect(first.verification?.pass).to.equal(false);
      expect(next.verification?.pass).to.equal(false);
    } finally {
      h.setAttentionFault(null);
    }
  });
});
