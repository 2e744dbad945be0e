/**
 * The f16 KV cache (loadModel's `cacheType: 'f16'`, docs/MODELS.md "KV cache type"): its programs carry
 * f16 cache states (half the bytes of f32), the host lowering reads them in the fused attention record
 * (`attention_f16`, no convert of the whole cache), and its logits on a tiny model stay at cosine >= 0.999
 * of the f32 cache's and of the fp64 reference of the same f16 program. Negative control: a kernel that
 * reads the f16 bits as bf16 falls below that. `run --verify` of an f16 prefill and decode step passes
 * (the oracle rounds the stores to f16 as the program says) and fails under that fault.
 */
import { expect } from 'chai';
import { KERNEL_FIELDS, KERNEL_OPS } from '../../../src/compiler/host/kernelList.js';
import { lowerHost } from '../../../src/compiler/host/lower.js';
import { loadHostKernels, type HostKernels } from '../../../src/devices/host/native.js';
import { InvalidOptions } from '../../../src/errors/index.js';
import { dtypeBytes, type DType } from '../../../src/ir/types.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { zeros } from '../../../src/ir/tensor.js';
import { buildProgram, cacheShapes, stepActivations } from '../../../src/model/qwen3/program.js';
import { cosine, modelFixture, SMALL, tinyF32Model } from './helpers.js';

/** The records of a lowered list: op name and fields by name. */
function recordsOf(list: Float64Array): { op: string; f: Record<string, number> }[] {
  const out: { op: string; f: Record<string, number> }[] = [];
  for (let at = 0; at < list.length;) {
    const op = KERNEL_OPS[list[at]!]!;
    const names = KERNEL_FIELDS[op];
    out.push({ op, f: Object.fromEntries(names.map((n, i) => [n, list[at + 2 + i]!])) });
    at += 2 + names.length;
  }
  return out;
}

const stateBytes = (m: Qwen3Model): number =>
  m.program(1).args.filter((a) => a.role === 'state').reduce((s, a) => s + dtypeBytes(a.dtype as DType) * a.shape.reduce((x, y) => x * y, 1), 0);

describe('qwen3: the f16 KV cache', function () {
  this.timeout(120_000);
  const fx = modelFixture();
  let h: HostKernels;
  let path: string;
  const CTX = 32;
  const request = { promptIds: [3, 1, 4, 1, 5, 9, 2, 6], maxTokens: 5, logits: true, repetitionPenalty: 1, ignoreEos: true };
  before(function () {
    try { h = loadHostKernels(); } catch { this.skip(); }
    path = fx.gguf('f16cache.gguf', { ...SMALL, type: 'F32' });
  });

  it('refuses a cache type other than f32 and f16 with InvalidOptions naming cacheType', async () => {
    const err = await loadModel(path, { engine: fx.engine(), ctx: CTX, target: 'host', cacheType: 'bf16' as 'f16' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptions);
    expect((err as InvalidOptions).message).to.include('cacheType');
  });

  it('holds the cache as f16 state, half the bytes of f32, under a different program name', async () => {
    const f32 = await loadModel(path, { engine: fx.engine(), ctx: CTX, target: 'host' });
    const f16 = await loadModel(path, { engine: fx.engine(), ctx: CTX, target: 'host', cacheType: 'f16' });
    const states = f16.program(1).args.filter((a) => a.role === 'state');
    expect(states).to.have.length(2 * f16.config.layers);
    expect(states.every((a) => a.dtype === 'f16')).to.equal(true);
    expect(stateBytes(f16) * 2).to.equal(stateBytes(f32));
    expect(f16.program(1).name).to.not.equal(f32.program(1).name);
    await f16.close();
    await f32.close();
  });

  it('lowers the attention of every layer to attention_f16, with no convert of the whole cache', async () => {
    const m = await loadModel(path, { engine: fx.engine(), ctx: CTX, target: 'host', cacheType: 'f16' });
    for (const tokens of [1, 8]) {
      const recs = recordsOf(lowerHost(checkProgram(m.program(tokens))).list);
      expect(recs.filter((r) => r.op === 'attention_f16')).to.have.length(m.config.layers);
      expect(recs.filter((r) => r.op === 'attention')).to.have.length(0);
      const cacheElems = m.config.kvHeads * m.config.headDim * CTX;
      expect(recs.filter((r) => r.op === 'convert' && r.f['n']! >= cacheElems), `tokens ${tokens}`).to.have.length(0);
    }
    await m.close();
  });

  async function logitsOf(cacheType: 'f32' | 'f16', reference = false): Promise<ArrayLike<number>[]> {
    const m = await loadModel(path, { engine: fx.engine(), ctx: CTX, target: 'host', cacheType });
    try {
      const got = await (reference ? m.reference() : m).complete(request);
      return got.logits!.map((l) => l.data);
    } finally {
      await m.close();
    }
  }

  it('gives logits at cosine >= 0.999 of the f32 cache and of the fp64 reference of the f16 program', async () => {
    const f16 = await logitsOf('f16');
    const f32 = await logitsOf('f32');
    const ref = await logitsOf('f16', true);
    expect(f16).to.have.length(request.maxTokens);
    f16.forEach((l, k) => {
      expect(cosine(l, f32[k]!), `f32 cache, step ${k}`).to.be.at.least(0.999);
      expect(cosine(l, ref[k]!), `fp64 reference, step ${k}`).to.be.at.least(0.999);
    });
    // The rounding of the cache shows: not the f32 cache's values.
    expect(Array.from(f16[1]!)).to.not.deep.equal(Array.from(f32[1]!));
  });

  it('negative control: a kernel reading the f16 cache as bf16 falls below cosine 0.999', async () => {
    const ref = await logitsOf('f16', true);
    h.setAttentionFault('f16-as-bf16');
    let bad: ArrayLike<number>[];
    try {
      bad = await logitsOf('f16');
    } finally {
      h.setAttentionFault(null);
    }
    expect(Math.min(...bad.map((l, k) => cosine(l, ref[k]!)))).to.be.below(0.999);
  });

  describe('run --verify of the f16 program (the oracle rounding the stores as the record does)', () => {
    const O = { layers: 2, hidden: 64, intermediate: 96, heads: 4, kvHeads: 2, headDim: 16, vocab: 64, std: 0.05 } as const;
    const { cfg, weights, values } = tinyF32Model(O);
    const C = 24;
    const verified = async () => {
      const prefill = buildProgram(cfg, weights, { tokens: 5, ctx: C, cacheType: 'f16' });
      const decode = buildProgram(cfg, weights, { tokens: 1, ctx: C, cacheType: 'f16' });
      const zero = Object.fromEntries([...cacheShapes(cfg, C)].map(([n, sh]) => [n, zeros('f16', sh)]));
      const first = await fx.engine().submit({ program: prefill, target: 'host', verify: true, inputs: { ...values, ...zero, ...stepActivations(prefill, [3, 17, 9, 40, 22], [0, 1, 2, 3, 4]) } }).result;
      const next = await fx.engine().submit({ program: decode, target: 'host', verify: true, inputs: { ...values, ...first.state, ...stepActivations(decode, [7], [5]) } }).result;
      return [first.verification?.pass, next.verification?.pass];
    };

    it('a prefill and a decode step verify', async () => {
      expect(await verified()).to.deep.equal([true, true]);
    });

    it('negative control: reading the cache as bf16 fails verification', async () => {
      h.setAttentionFault('f16-as-bf16');
      try {
        expect(await verified()).to.deep.equal([false, false]);
      } finally {
        h.setAttentionFault(null);
      }
    });
  });
});
