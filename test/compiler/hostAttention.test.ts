/**
 * The fused attention of the host target (src/compiler/host/rewrite.ts, src/native/host/attention.cc):
 * matmul -> masked softmax row kernel -> matmul is lowered to one `attention` record, which matches the
 * unfused lowering and the exact (f64) math within the published bound (docs/HOST.md) over random
 * shapes, masks and groupings; a fault in the kernel fails that bound; and a prefill's arena no longer
 * holds the [kvH, t*g, ctx] scores, probabilities and bias.
 */
import { expect } from 'chai';
import { lowerHost, type HostLowered } from '../../src/compiler/host/lower.js';
import { findRewrites } from '../../src/compiler/host/rewrite.js';
import { loadHostKernels, type HostKernels } from '../../src/devices/host/native.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { InvalidInput } from '../../src/errors/index.js';
import { configFromJson } from '../../src/model/qwen3/config.js';
import { rope, ropeTables } from '../../src/model/qwen3/layers.js';
import { buildProgram } from '../../src/model/qwen3/program.js';
import { expectedShapes, type BoundWeight } from '../../src/model/qwen3/weights.js';
import { attentionInputs, attentionProgram, attentionReference, type AttentionShape } from '../../src/contracts/hostAttention.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { f16FromBits, f16ToBits, roundToDtype } from '../../src/numerics/float16.js';

const MASKED = -1e30;

type Case = AttentionShape;

/** Runs a lowered program on the addon: f32 inputs into their slots, constants written, result `y` back. */
function run(h: HostKernels, l: HostLowered, inputs: Record<string, Float32Array>, n: number, halves: Record<string, Uint16Array> = {}): Float32Array {
  const arena = new Uint8Array(l.arenaBytes);
  const dv = new DataView(arena.buffer);
  for (const [at, dtype, v] of l.constants) {
    if (dtype === 'i32') dv.setInt32(at, v, true);
    else dv.setFloat32(at, v, true);
  }
  for (const [name, x] of Object.entries(inputs)) new Float32Array(arena.buffer, l.slots[name], x.length).set(x);
  for (const [name, x] of Object.entries(halves)) new Uint16Array(arena.buffer, l.slots[name], x.length).set(x);
  h.run(arena, l.list);
  return new Float32Array(arena.buffer, l.slots['y'], n).slice();
}

const inputsOf = attentionInputs;
const reference = attentionReference;

/** How many elements of `got` lie outside their bound around the exact result. */
function violations(got: Float32Array, want: Float64Array, bound: Float64Array): number {
  let n = 0;
  for (let i = 0; i < got.length; i++) if (!(Math.abs(got[i]! - want[i]!) <= bound[i]!)) n++;
  return n;
}

function hostOrSkip(ctx: Mocha.Context): HostKernels {
  try { return loadHostKernels(); } catch { ctx.skip(); }
}

describe('compiler/host: fused attention', function () {
  this.timeout(60_000);
  let h: HostKernels;
  before(function () { h = hostOrSkip(this); });

  it('the rewrite takes layers.ts\'s pattern: scores, probs and the broadcast bias get no slot; another reader of the probs keeps it unfused', () => {
    const c: Case = { B: 2, T: 3, G: 2, D: 16, N: 12, Dv: 16, bias: 'mask' };
    const fused = attentionProgram('attn', c, 0.25);
    const r = findRewrites(fused);
    expect(r.at.size).to.equal(1);
    // matmul, row_kernel, broadcast, reshape
    expect(r.absorbed.size).to.equal(4);
    const l = lowerHost(fused);
    const big = fused.eqns.filter((e) => e.outs[0]!.shape.join() === [c.B, c.T * c.G, c.N].join() || e.outs[0]!.shape.length === 4);
    expect(big.length).to.equal(4);
    for (const e of big) expect(l.slots[e.eqn.out as string], e.op).to.equal(undefined);
    const kept = attentionProgram('attn', c, 0.25, (p, { probs }) => [p.named('p').add(probs, 0)]);
    expect(findRewrites(kept).at.size).to.equal(0);
    // Keys as rows [B, N, D] (program.ts's KV cache) through transpose([0, 2, 1]): the transpose goes too,
    // and the record reads k in place (kRows); no [B, D, N] copy of the keys is made.
    const rows = attentionProgram('attn', { ...c, kRows: true }, 0.25);
    const rr = findRewrites(rows);
    expect([...rr.at.values()].map((w) => w.kind === 'attention' && w.shape.kRows)).to.deep.equal([true]);
    expect(rr.absorbed.size).to.equal(5);
    const lr = lowerHost(rows);
    const tr = rows.eqns.find((e) => e.op === 'transpose')!;
    expect(lr.slots[tr.eqn.out as string]).to.equal(undefined);
    expect(lr.slots['k']).to.not.equal(undefined);
  });

  const cases: [string, Case, boolean][] = [
    ['decode t=1 g=1', { B: 2, T: 1, G: 1, D: 32, N: 40, Dv: 32, bias: 'mask' }, true],
    ['decode t=1 g=2 (grouped query heads)', { B: 3, T: 1, G: 2, D: 64, N: 67, Dv: 64, bias: 'mask' }, true],
    ['prefill t=5 g=3', { B: 2, T: 5, G: 3, D: 24, N: 33, Dv: 20, bias: 'mask' }, true],
    ['prefill t=12 g=2 (rows past one block of 16), ctx 70', { B: 2, T: 12, G: 2, D: 48, N: 70, Dv: 40, bias: 'mask' }, true],
    ['prefill t=9 g=1, odd sizes', { B: 1, T: 9, G: 1, D: 7, N: 19, Dv: 5, bias: 'mask' }, true],
    ['a non-causal mask t=4 g=2', { B: 2, T: 4, G: 2, D: 16, N: 29, Dv: 16, bias: 'mask' }, false],
    ['a materialized bias [B, M, N], random', { B: 3, T: 2, G: 2, D: 16, N: 21, Dv: 8, bias: 'bias' }, false],
  ];
  for (const [name0, c0, causal] of cases) for (const kRows of [false, true]) {
    const c: Case = { ...c0, kRows };
    const name = `${name0}${kRows ? ', keys as rows [B, N, D]' : ''}`;
    it(`${name}: within the bound of the exact result on every ISA path, as the unfused lowering is`, () => {
      const rnd = mulberry32(name.length * 7919 + c.N);
      const scale = 1 / Math.sqrt(c.D);
      const checked = attentionProgram('attn', c, scale);
      const fused = lowerHost(checked);
      const unfused = lowerHost(checked, { fuse: false });
      expect(findRewrites(checked).at.size).to.equal(1);
      const n = c.B * c.T * c.G * c.Dv;
      for (const fullyMasked of [false, true]) {
        const x = inputsOf(c, rnd, causal, fullyMasked);
        const { y, bound } = reference(c, scale, x);
        for (const isa of h.info().available) {
          h.setIsa(isa);
          const got = run(h, fused, x, n);
          const plain = run(h, unfused, x, n);
          expect(violations(got, y, bound), `${isa} fused`).to.equal(0);
          expect(violations(plain, y, bound), `${isa} unfused`).to.equal(0);
          // A masked position's weight is exactly 0: a row that sees one position gives that v row bit for bit.
        }
        h.setIsa(h.info().available[h.info().available.length - 1]!);
      }
    });
  }

  it('keys as rows [B, N, D] give the bits of the same keys as [B, D, N] on every ISA path (negative control: the rows read as columns do not)', () => {
    for (const c0 of [cases[1]![1], cases[3]![1], cases[4]![1]]) {
      const scale = 1 / Math.sqrt(c0.D);
      const cols = lowerHost(attentionProgram('attn', c0, scale));
      const rows = lowerHost(attentionProgram('attn', { ...c0, kRows: true }, scale));
      const x = inputsOf(c0, mulberry32(c0.N * 17), true, false);
      // The same keys laid out as rows: kr[(b*N + j)*D + d] = k[(b*D + d)*N + j].
      const kr = new Float32Array(x['k']!.length);
      for (let b = 0; b < c0.B; b++) for (let d = 0; d < c0.D; d++) for (let j = 0; j < c0.N; j++) kr[(b * c0.N + j) * c0.D + d] = x['k']![(b * c0.D + d) * c0.N + j]!;
      const n = c0.B * c0.T * c0.G * c0.Dv;
      for (const isa of h.info().available) {
        h.setIsa(isa);
        const want = Array.from(run(h, cols, x, n));
        expect(Array.from(run(h, rows, { ...x, k: kr }, n)), isa).to.deep.equal(want);
        expect(Array.from(run(h, rows, x, n)), `${isa} control`).to.not.deep.equal(want);
      }
      h.setIsa(h.info().available[h.info().available.length - 1]!);
    }
  });

  it('scores in the dot16 order (lane d mod 16, then a halving tree) on every ISA path, decode and prefill, keys as rows or columns (negative control: the order of one chain over d gives another answer)', () => {
    // q all ones; key 0 holds 2^24 at d = 0, fifteen ones at d = 1..15 and -2^24 at d = 16; key 1 is zero.
    // In one chain over d the ones vanish into 2^24 and the score is 0 (weights 1/2, 1/2); in the dot16
    // order 2^24 and -2^24 share lane 0, the ones keep their lanes and the score is 15.
    const D = 32;
    const ones = (k: number[]) => {
      let seq = Math.fround(-0);
      for (const t of k) seq = Math.fround(seq + t);
      const lane = new Array<number>(16).fill(-0);
      k.forEach((t, d) => { lane[d % 16] = Math.fround(lane[d % 16]! + t); });
      for (let h = 8; h >= 1; h /= 2) for (let l = 0; l < h; l++) lane[l] = Math.fround(lane[l]! + lane[l + h]!);
      return { seq, dot16: lane[0]! };
    };
    const key0 = Array.from({ length: D }, (_, d) => (d === 0 ? 2 ** 24 : d === 16 ? -(2 ** 24) : d < 16 ? 1 : 0));
    const { seq, dot16 } = ones(key0);
    expect([seq, dot16]).to.deep.equal([0, 15]);
    const p0 = (s: number) => 1 / (1 + Math.exp(-s));
    for (const T of [1, 12]) for (const kRows of [false, true]) {
      const c: Case = { B: 1, T, G: 2, D, N: 2, Dv: 16, bias: 'mask', kRows };
      const l = lowerHost(attentionProgram('attn', c, 1));
      const M = T * c.G;
      const k = new Float32Array(D * 2);
      for (let d = 0; d < D; d++) k[kRows ? d : d * 2] = key0[d]!;
      const v = new Float32Array(2 * c.Dv);
      v.fill(1, 0, c.Dv);
      const x = { q: new Float32Array(M * D).fill(1), k, v, mask: new Float32Array(T * 2) };
      for (const isa of h.info().available) {
        h.setIsa(isa);
        const got = run(h, l, x, M * c.Dv);
        for (const e of got) {
          expect(Math.abs(e - p0(dot16)), `${isa} T=${T} kRows=${kRows}`).to.be.below(1e-6);
          expect(Math.abs(e - p0(seq)), `${isa} control`).to.be.above(0.4);
        }
      }
      h.setIsa(h.info().available[h.info().available.length - 1]!);
    }
  });

  it('attention_f16 (k and v f16 through their converts) gives attention\'s bits of the converted values on every ISA path', () => {
    for (const c of [cases[1]![1], cases[3]![1], cases[4]![1], { ...cases[3]![1], kRows: true }]) {
      const scale = 1 / Math.sqrt(c.D);
      const half = attentionProgram('attn-f16', c, scale, undefined, 'f16');
      const r = findRewrites(half);
      expect([...r.at.values()].map((w) => w.kind === 'attention' && w.kv)).to.deep.equal(['f16']);
      const l16 = lowerHost(half);
      const l32 = lowerHost(attentionProgram('attn', c, scale));
      // No convert record: the record reads the f16 arrays where they lie.
      expect(Array.from(l16.list).length).to.equal(Array.from(l32.list).length);
      const x = inputsOf(c, mulberry32(c.N * 31), true, false);
      const bits = (a: Float32Array) => Uint16Array.from(a, (e) => f16ToBits(roundToDtype('f16', e)));
      const k16 = bits(x['k']!);
      const v16 = bits(x['v']!);
      const as32 = { ...x, k: Float32Array.from(k16, f16FromBits), v: Float32Array.from(v16, f16FromBits) };
      const arena16 = Object.fromEntries(Object.entries(x).filter(([name]) => name !== 'k' && name !== 'v'));
      const n = c.B * c.T * c.G * c.Dv;
      for (const isa of h.info().available) {
        h.setIsa(isa);
        const want = run(h, l32, as32, n);
        const got = run(h, l16, arena16, n, { k: k16, v: v16 });
        expect(Array.from(got), isa).to.deep.equal(Array.from(want));
        h.setAttentionFault('f16-as-bf16');
        try {
          expect(Array.from(run(h, l16, arena16, n, { k: k16, v: v16 })), `${isa} fault`).to.not.deep.equal(Array.from(want));
        } finally {
          h.setAttentionFault(null);
        }
      }
      h.setIsa(h.info().available[h.info().available.length - 1]!);
    }
  });

  it('a row that sees one key position gives that position\'s v row exactly (the masked weights are exactly 0)', () => {
    const c: Case = { B: 2, T: 1, G: 2, D: 16, N: 24, Dv: 16, bias: 'mask' };
    const checked = attentionProgram('attn', c, 0.25);
    const x = inputsOf(c, mulberry32(5), true, false);
    x['mask']!.fill(MASKED);
    x['mask']![0] = 0;
    const got = run(h, lowerHost(checked), x, c.B * c.G * c.Dv);
    for (let b = 0; b < c.B; b++) for (let g = 0; g < c.G; g++) {
      expect(Array.from(got.subarray((b * c.G + g) * c.Dv, (b * c.G + g + 1) * c.Dv))).to.deep.equal(Array.from(x['v']!.subarray(b * c.N * c.Dv, b * c.N * c.Dv + c.Dv)));
    }
  });

  it('negative control: a kernel that drops the last visible position, or uses a wrong scale, fails the bound; reset, it passes', () => {
    const c: Case = { B: 2, T: 3, G: 2, D: 32, N: 40, Dv: 32, bias: 'mask' };
    const scale = 1 / Math.sqrt(c.D);
    const checked = attentionProgram('attn', c, scale);
    const l = lowerHost(checked);
    const x = inputsOf(c, mulberry32(11), true, false);
    const { y, bound } = reference(c, scale, x);
    const n = c.B * c.T * c.G * c.Dv;
    for (const fault of ['drop-last', 'scale'] as const) {
      h.setAttentionFault(fault);
      let bad: number;
      try {
        bad = violations(run(h, l, x, n), y, bound);
      } finally {
        h.setAttentionFault(null);
      }
      expect(bad, fault).to.be.greaterThan(n / 2);
    }
    expect(violations(run(h, l, x, n), y, bound)).to.equal(0);
  });

  it('the checker refuses a record whose bias runs past the arena, whose output overlaps an input, or whose scale is no f32', () => {
    const base = { op: 'attention' as const, q: 0, k: 1024, v: 2048, bias: 3072, y: 4096, B: 2, M: 2, D: 8, N: 16, Dv: 8, scale: 0.5, bB: 0, bG: 2, bRow: 16, kRows: false };
    const arena = new Uint8Array(8192);
    h.run(arena, [base]);
    const refused = (call: typeof base, field: string) => {
      let e: unknown;
      try { h.run(arena, [call]); } catch (x) { e = x; }
      expect(e, field).to.be.instanceOf(InvalidInput);
      expect((e as InvalidInput).path, field).to.equal(`/kernels/0/${field}`);
    };
    refused({ ...base, bias: 8192 - 32 }, 'bias');
    refused({ ...base, bB: 2000 }, 'bias');
    refused({ ...base, y: 1024 + 64 }, 'y');
    refused({ ...base, scale: 0.1 }, 'scale');
    refused({ ...base, bG: 0 }, 'bG');
    h.run(arena, [{ ...base, kRows: true }]);
  });

  it('rope: layers.ts\'s neox rope is one rope record, bit for bit the unfused lowering; a fourth mul reading a half keeps it unfused', () => {
    for (const [T, H, D] of [[1, 4, 16], [7, 3, 64], [5, 2, 6]] as const) {
      const p = program('rope');
      const x = p.activation('x', 'f32', [T, H, D]);
      p.results(p.named('y').add(rope(p, x, ropeTables(p, p.activation('positions', 'i32', [T]), D, 10000)), 0));
      const checked = checkProgram(p.build());
      const r = findRewrites(checked);
      expect([...r.at.values()].map((w) => w.kind)).to.deep.equal(['rope']);
      const fused = lowerHost(checked);
      const unfused = lowerHost(checked, { fuse: false });
      expect(fused.list.length).to.be.below(unfused.list.length);
      const rnd = mulberry32(T * 100 + D);
      const positions = Int32Array.from({ length: T }, (_, t) => 40 + 3 * t);
      const xs = Float32Array.from({ length: T * H * D }, () => (rnd() * 2 - 1) * 3);
      const runWith = (l: HostLowered) => {
        const arena = new Uint8Array(l.arenaBytes);
        const dv = new DataView(arena.buffer);
        for (const [at, dtype, v] of l.constants) dtype === 'i32' ? dv.setInt32(at, v, true) : dv.setFloat32(at, v, true);
        new Float32Array(arena.buffer, l.slots['x'], xs.length).set(xs);
        new Int32Array(arena.buffer, l.slots['positions'], T).set(positions);
        h.run(arena, l.list);
        return Array.from(new Float32Array(arena.buffer, l.slots['y'], xs.length));
      };
      const want = runWith(unfused);
      expect(runWith(fused), `[${T}, ${H}, ${D}]`).to.deep.equal(want);
      expect(want.some((v, i) => v !== xs[i])).to.equal(true);
    }
    // A half of x read outside the pattern: not a rope any more (the rewrite must not absorb that slice).
    const [T, H, D] = [2, 2, 8];
    const q = program('rope-spoilt2');
    const x2 = q.activation('x', 'f32', [T, H, D]);
    const t2 = ropeTables(q, q.activation('positions', 'i32', [T]), D, 10000);
    const cos = q.broadcast(t2.cos, [T, H, D / 2], [0, 2]);
    const sin = q.broadcast(t2.sin, [T, H, D / 2], [0, 2]);
    const a = q.slice(x2, [0, 0, 0], [T, H, D / 2]);
    const b = q.slice(x2, [0, 0, D / 2], [T, H, D]);
    const y2 = q.concat([q.sub(q.mul(a, cos), q.mul(b, sin)), q.add(q.mul(b, cos), q.mul(a, sin))], 2);
    q.results(q.named('y').add(y2, 0), q.named('a').add(a, 1));
    expect(findRewrites(checkProgram(q.build())).at.size).to.equal(0);
  });

  it('a Qwen3 prefill (0.6B attention shapes, 256 tokens, ctx 1024): no [kvH, t*g, ctx] value has a slot, and the arena drops', () => {
    const cfg = configFromJson({
      model_type: 'qwen3', num_hidden_layers: 2, hidden_size: 1024, intermediate_size: 3072, num_attention_heads: 16,
      num_key_value_heads: 8, head_dim: 128, vocab_size: 1024, tie_word_embeddings: true, max_position_embeddings: 40960,
    }, 'config.json');
    const weights = new Map<string, BoundWeight>();
    for (const [k, shape] of expectedShapes(cfg, false)) weights.set(k, { dtype: shape.length === 1 ? 'f32' : 'q4_0', shape, file: '/m.gguf', offset: 0, length: 0 });
    const [t, ctx] = [256, 1024];
    const checked = checkProgram(buildProgram(cfg, weights, { tokens: t, ctx }));
    const fused = lowerHost(checked);
    const unfused = lowerHost(checked, { fuse: false });
    const kinds = [...findRewrites(checked).at.values()].map((w) => w.kind);
    expect(kinds.filter((k) => k === 'attention').length).to.equal(cfg.layers);
    expect(kinds.filter((k) => k === 'rope').length).to.equal(2 * cfg.layers);
    const wide = checked.eqns.filter((e) => e.outs.some((o) => o.shape.join() === [8, 2 * t, ctx].join() || o.shape.join() === [8, t, 2, ctx].join()));
    expect(wide.length).to.be.greaterThan(0);
    for (const e of wide) expect(fused.slots[e.eqn.out as string], `${e.op} #${e.index}`).to.equal(undefined);
    expect(wide.some((e) => unfused.slots[e.eqn.out as string] !== undefined)).to.equal(true);
    // The caches (2 layers x 2 x 4 MiB) stay; at least three [8, 512, 1024] f32 tensors (16 MiB each) go.
    const tensorBytes = 8 * 2 * t * ctx * 4;
    expect(unfused.arenaBytes - fused.arenaBytes).to.be.at.least(3 * tensorBytes);
  });
});
