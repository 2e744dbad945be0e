/**
 * The fused attention record in the host contract sweep (under `row_kernel`: the masked softmax row
 * kernel between its two matmuls, as src/model/qwen3/layers.ts writes attention, which the host
 * lowering fuses into one `attention` record; src/compiler/host/rewrite.ts). Each program's result is
 * judged by attentionBound (src/targets/host/contracts.ts) around the exact result.
 */
import { program, type ProgramBuilder, type Value } from '../ops/builder.js';
import type { CheckedProgram } from '../ir/checked.js';
import { programToJson } from '../ir/codec.js';
import { tensor } from '../ir/tensor.js';
import { checkProgram } from '../ops/validate.js';
import type { TensorMap } from '../oracle/types.js';
import { attentionBound } from '../targets/host/contracts.js';
import type { F32Source } from './hostCases.js';
import type { HostProgram } from './hostOps.js';

/** What layers.ts's MASKED adds to a score. */
const MASKED = -1e30;

/** The shape of one attention: B kv heads, T tokens of G query heads each (M = T·G rows), D, N keys, Dv. */
export interface AttentionShape {
  readonly B: number;
  readonly T: number;
  readonly G: number;
  readonly D: number;
  readonly N: number;
  readonly Dv: number;
  /** 'mask': a [T, N] mask broadcast over heads and groups (layers.ts's form); 'bias': a materialized [B, M, N]. */
  readonly bias: 'mask' | 'bias';
  /** k as rows [B, N, D] read through transpose([0, 2, 1]) (a KV cache's keys, program.ts's form), rather than [B, D, N]. */
  readonly kRows?: boolean;
}

/**
 * softmax(q·k·scale + bias)·v as program.ts writes it: matmul, a masked softmax row kernel, matmul, as
 * result `y`; `extra` adds results beside it (a test that keeps the scores or probabilities alive);
 * `kv: 'f16'` takes k and v as f16 and reads them through convert(f16 -> f32) (an f16 KV cache).
 */
export function attentionProgram(name: string, c: AttentionShape, scale: number, extra: (p: ProgramBuilder, v: { scores: Value; probs: Value }) => Value[] = () => [], kv: 'f32' | 'f16' = 'f32'): CheckedProgram {
  const M = c.T * c.G;
  const p = program(name);
  const q = p.activation('q', 'f32', [c.B, M, c.D]);
  // f16 k and v (an f16 KV cache) are read through convert(f16 -> f32), as program.ts writes it.
  const read = (x: Value): Value => (kv === 'f32' ? x : p.convert(x, 'f32'));
  const k = c.kRows === true ? p.transpose(read(p.activation('k', kv, [c.B, c.N, c.D])), [0, 2, 1]) : read(p.activation('k', kv, [c.B, c.D, c.N]));
  const v = read(p.activation('v', kv, [c.B, c.N, c.Dv]));
  const bias = c.bias === 'mask'
    ? p.reshape(p.broadcast(p.activation('mask', 'f32', [c.T, c.N]), [c.B, c.T, c.G, c.N], [1, 3]), [c.B, M, c.N])
    : p.activation('bias', 'f32', [c.B, M, c.N]);
  const scores = p.matmul(q, k);
  const [probs] = p.rowKernel([scores, bias], (b, s, m) => {
    const a = b.add(b.mul(s, scale), m);
    const e = b.exp(b.sub(a, b.reduceMax(a)));
    return b.div(e, b.reduceSum(e));
  });
  p.results(p.named('y').matmul(probs!, v), ...extra(p, { scores, probs: probs! }));
  return checkProgram(p.build());
}

/**
 * Random inputs of `c`: q and k uniform in ±1.5, v in ±1; a causal mask (the rows of positions
 * p0..p0+T-1 of a cache filled to p0+T <= N, so positions past it are masked) or a random one (40% of
 * positions and the last two masked, the unmasked bias in ±2); masked values are MASKED or -inf.
 * `fullyMaskedRow` masks every position of the first mask row.
 */
export function attentionInputs(c: AttentionShape, rnd: () => number, causal: boolean, fullyMaskedRow: boolean): Record<string, Float32Array> {
  const M = c.T * c.G;
  const f = (n: number, a: number) => Float32Array.from({ length: n }, () => (rnd() * 2 - 1) * a);
  const out: Record<string, Float32Array> = { q: f(c.B * M * c.D, 1.5), k: f(c.B * c.D * c.N, 1.5), v: f(c.B * c.N * c.Dv, 1) };
  const rows = c.bias === 'mask' ? c.T : c.B * M;
  const m = new Float32Array(rows * c.N);
  const p0 = Math.floor(rnd() * (c.N - c.T + 1));
  for (let r = 0; r < rows; r++) {
    const t = c.bias === 'mask' ? r : Math.floor((r % M) / c.G);
    for (let j = 0; j < c.N; j++) {
      const masked = causal ? j > p0 + t : rnd() < 0.4 || j > c.N - 3;
      m[r * c.N + j] = masked ? (rnd() < 0.2 ? -Infinity : MASKED) : causal ? 0 : (rnd() * 2 - 1) * 2;
    }
  }
  if (fullyMaskedRow) m.fill(MASKED, 0, c.N);
  out[c.bias] = m;
  return out;
}

/** The exact result (f64) of `c` over inputs `x`, and each element's bound (attentionBound). */
export function attentionReference(c: AttentionShape, scale: number, x: Record<string, ArrayLike<number>>): { y: Float64Array; bound: Float64Array } {
  const M = c.T * c.G;
  const sc = Math.fround(scale);
  const y = new Float64Array(c.B * M * c.Dv);
  const bound = new Float64Array(y.length);
  const [q, k, v] = [x['q']!, x['k']!, x['v']!];
  for (let b = 0; b < c.B; b++) for (let m = 0; m < M; m++) {
    const biasAt = (j: number) => (c.bias === 'mask' ? x['mask']![Math.floor(m / c.G) * c.N + j]! : x['bias']![(b * M + m) * c.N + j]!);
    const a = new Float64Array(c.N);
    const mag = new Float64Array(c.N);
    for (let j = 0; j < c.N; j++) {
      let s = 0;
      let g = 0;
      for (let d = 0; d < c.D; d++) {
        const t = q[(b * M + m) * c.D + d]! * k[c.kRows === true ? (b * c.N + j) * c.D + d : (b * c.D + d) * c.N + j]!;
        s += t;
        g += Math.abs(t);
      }
      a[j] = s * sc + biasAt(j);
      mag[j] = g;
    }
    let mx = -Infinity;
    for (const t of a) mx = Math.max(mx, t);
    const probs = Array.from(a, (t) => Math.exp(t - mx));
    const sum = probs.reduce((p, t) => p + t, 0);
    for (let j = 0; j < c.N; j++) probs[j] = probs[j]! / sum;
    const masked = Array.from({ length: c.N }, (_, j) => biasAt(j) <= MASKED);
    const vAbs = new Float64Array(c.N);
    for (let d = 0; d < c.Dv; d++) {
      let acc = 0;
      for (let j = 0; j < c.N; j++) {
        const vj = v[(b * c.N + j) * c.Dv + d]!;
        acc += probs[j]! * vj;
        vAbs[j] = Math.abs(vj);
      }
      const at = (b * M + m) * c.Dv + d;
      y[at] = acc;
      bound[at] = attentionBound({ D: c.D, N: c.N, scale: sc, a, masked, scoreMagnitudes: mag, probs, vAbs });
    }
  }
  return { y, bound };
}

/** The sweep's attention programs: a decode (t = 1, grouped heads), a causal prefill, a materialized random bias. */
export function attentionPrograms(r: F32Source, bulk: number): HostProgram[] {
  const steps = Math.max(1, Math.ceil(bulk / 8192));
  const variants: [string, AttentionShape, boolean][] = [
    ['decode', { B: 2, T: 1, G: 2, D: 64, N: 96, Dv: 64, bias: 'mask', kRows: true }, true],
    ['prefill', { B: 2, T: 8, G: 2, D: 32, N: 48, Dv: 32, bias: 'mask', kRows: true }, true],
    ['bias', { B: 2, T: 3, G: 2, D: 16, N: 37, Dv: 24, bias: 'bias' }, false],
  ];
  return variants.map(([variant, c, causal]) => {
    const scale = 1 / Math.sqrt(c.D);
    const checked = attentionProgram(`host-contract-row_kernel-attention-${variant}`, c, scale);
    const shapes = Object.fromEntries(checked.program.args.map((a) => [a.name, a.shape]));
    const inputs = Array.from({ length: steps }, (_, k) => attentionInputs(c, () => r.u(), causal, k % 2 === 1));
    const chunks: TensorMap[] = inputs.map((x) => Object.fromEntries(Object.entries(x).map(([n, d]) => [n, tensor('f32', shapes[n]!, Float64Array.from(d))])));
    const bounds = inputs.map((x) => attentionReference(c, scale, x).bound);
    return { name: `row_kernel attention ${variant}`, checked, json: programToJson(checked.program), weights: {}, chunks, bound: (ch: number, i: number) => bounds[ch]![i]! };
  });
}
