/**
 * The host sweep's programs for the typed kernels (src/native/host/typed.cc) and the axis lowerings
 * (src/compiler/host/axes.ts), beside hostOps.ts's f32 ones: each op in f16 and bf16 (i32 where the op
 * table takes it) over that dtype's edges and a bulk (every one of the 65536 bit patterns of a unary
 * op's operand once the bulk reaches 65536), reductions over the first axis and over two axes, matmul
 * in each dtype, gather along every axis and iota in f16 and bf16. Each element is judged by
 * HOST_TYPED_CONTRACTS (src/targets/host/contracts.ts), or by the f32 sum bound for an f32 reduction.
 */
import { tensor } from '../ir/tensor.js';
import { bf16FromBits, f16FromBits, roundToDtype } from '../numerics/float16.js';
import { ulpOf } from '../numerics/ulp.js';
import type { Value } from '../ops/builder.js';
import type { TensorMap } from '../oracle/types.js';
import { HOST_TYPED_CONTRACTS, gamma } from '../targets/host/contracts.js';
import type { HostContract } from '../targets/host/contracts.js';
import type { F32Source } from './hostCases.js';
import { EDGE_VALUES, fill } from './hostCases.js';
import type { ElementBound, HostContractOp, HostProgram } from './hostOps.js';
import { built, chunked } from './hostOps.js';

const COLS = 256;
const HALVES = ['f16', 'bf16'] as const;
type Half = (typeof HALVES)[number];
const BINARY = ['add', 'sub', 'mul', 'div', 'max', 'min', 'ge'];
const exact = () => 'exact' as const;

/** Each dtype's own edges beside the f32 ones: its least subnormal, least normal, largest finite and the overflow tie. */
const OWN_EDGES: Readonly<Record<Half | 'i32', readonly number[]>> = {
  f16: [2 ** -24, -(2 ** -24), 2 ** -25, 3 * 2 ** -25, 2 ** -14, 65504, -65504, 65520, 2048, 2049, 4097],
  bf16: [2 ** -133, -(2 ** -133), 2 ** -126, 3.3895313892515355e38, -3.3895313892515355e38, 257, 1 + 2 ** -8, 1 + 3 * 2 ** -8],
  i32: [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 30, -(2 ** 30) - 1, 65536, 46341, -46341],
};

/** One value of `dtype` from the f32 source: rounded once (a float), or a wrapped integer (i32). */
function valueOf(dtype: Half | 'i32', r: F32Source): () => number {
  if (dtype === 'i32') return () => (r.u() < 0.5 ? Math.floor(r.u() * 64) - 32 : (Math.floor(r.u() * 2 ** 32) | 0));
  return () => roundToDtype(dtype, r());
}

/** The edges of `dtype`, each rounded to it. */
function edgesOf(dtype: Half | 'i32'): number[] {
  const own = OWN_EDGES[dtype];
  if (dtype === 'i32') return [...own];
  return [...EDGE_VALUES, ...own].map((v) => roundToDtype(dtype, v));
}

/** Every bit pattern of a 16-bit dtype, as values. */
function everyPattern(dtype: Half): number[] {
  return Array.from({ length: 65536 }, (_, b) => (dtype === 'f16' ? f16FromBits(b) : bf16FromBits(b)));
}

function boundOf(c: HostContract, dtype: Half | 'i32', xs: ((c: number, i: number) => number) | null) {
  return (k: number, i: number, want: number): ElementBound => {
    if (c.kind !== 'ulps' || dtype === 'i32') return 'exact';
    const v = xs?.(k, i);
    if (v !== undefined && !Number.isNaN(v) && !(v >= c.lo && v <= c.hi)) return null;
    return c.ulps * (Number.isFinite(want) ? ulpOf(dtype, want) : Infinity);
  };
}

/** An elementwise op in f16 and bf16 (and i32 for neg and abs). */
function elementwise(op: keyof typeof HOST_TYPED_CONTRACTS, r: F32Source, bulk: number): HostProgram[] {
  const contract: HostContract = HOST_TYPED_CONTRACTS[op];
  const two = BINARY.includes(op);
  const dtypes: readonly (Half | 'i32')[] = op === 'neg' || op === 'abs' ? [...HALVES, 'i32'] : HALVES;
  const rows = 64;
  return dtypes.map((dtype) => {
    const next = valueOf(dtype, r);
    const name = `${op}-${dtype}`;
    if (two) {
      const e = edgesOf(dtype);
      const a = fill(e.length * e.length + bulk, next, e.flatMap((x) => e.map(() => x)));
      const b = fill(e.length * e.length + bulk, next, e.flatMap(() => e));
      const chunks = chunked(['a', 'b'], [a, b], rows, dtype);
      const { checked, json } = built(name, (p) => {
        const f = (p.named('y') as unknown as Record<string, (u: Value, v: Value) => Value>)[op]!;
        return [f.call(p.named('y'), p.activation('a', dtype, [rows, COLS]), p.activation('b', dtype, [rows, COLS]))];
      });
      return { name: `${op} ${dtype}`, checked, json, weights: {}, chunks, bound: exact };
    }
    const x = dtype !== 'i32' && bulk >= 65536 ? everyPattern(dtype) : fill(edgesOf(dtype).length + bulk, next, edgesOf(dtype));
    const chunks = chunked(['x'], [x], rows, dtype);
    const { checked, json } = built(name, (p) => {
      const f = (p.named('y') as unknown as Record<string, (u: Value) => Value>)[op]!;
      return [f.call(p.named('y'), p.activation('x', dtype, [rows, COLS]))];
    });
    return { name: `${op} ${dtype}`, checked, json, weights: {}, chunks, bound: boundOf(contract, dtype, (c, i) => chunks[c]!['x']!.data[i]!) };
  });
}

/**
 * reduce_sum and reduce_max over the first axis and over axes 0 and 2 of a [16, 8, 32] operand, in f32
 * (a strided copy, then the SIMD rows: the sum within γ(n)·Σ|x| of its n terms) and in f16, bf16 and i32
 * (the typed kernel: the oracle's result bit for bit).
 */
function reductions(op: 'reduce_sum' | 'reduce_max', r: F32Source, bulk: number): HostProgram[] {
  const shape = [16, 8, 32];
  const n = 16 * 8 * 32;
  const out: HostProgram[] = [];
  for (const dtype of ['f32', ...HALVES, 'i32'] as const) {
    const next = dtype === 'f32' ? () => Math.fround(r.u() * 2 - 1) : valueOf(dtype, r);
    const edges = dtype === 'f32' ? [] : edgesOf(dtype).filter((v) => op === 'reduce_max' || Number.isFinite(v));
    const steps = Math.max(1, Math.ceil(bulk / n));
    const chunks: TensorMap[] = Array.from({ length: steps }, (_, c) => ({ x: tensor(dtype, shape, fill(n, next, c === 0 ? edges : [])) }));
    for (const axes of [[0], [0, 2]]) {
      const { checked, json } = built(`${op}-${dtype}-${axes.join('-')}`, (p) => {
        const x = p.activation('x', dtype, shape);
        return [op === 'reduce_sum' ? p.named('y').reduceSum(x, axes) : p.named('y').reduceMax(x, axes)];
      });
      let bound: HostProgram['bound'] = exact;
      if (dtype === 'f32' && op === 'reduce_sum') {
        // |x| summed over each result's terms, in the result's order.
        const terms = axes.reduce((a, k) => a * shape[k]!, 1);
        const mags = chunks.map((ch) => {
          const m = new Float64Array(n / terms);
          const t = ch['x']!.data;
          for (let i = 0; i < 16; i++) for (let j = 0; j < 8; j++) for (let k = 0; k < 32; k++) {
            const o = axes.length === 1 ? j * 32 + k : j;
            m[o] = m[o]! + Math.abs(t[(i * 8 + j) * 32 + k]!);
          }
          return m;
        });
        bound = (c, i) => gamma(terms) * mags[c]![i]!;
      }
      out.push({ name: `${op} ${dtype} axes ${axes.join(',')}`, checked, json, weights: {}, chunks, bound });
    }
  }
  return out;
}

/** matmul in f16, bf16 and i32 (the typed kernel: f64 dot products in k order), batched, K off any vector width. */
function matmuls(r: F32Source, bulk: number): HostProgram[] {
  const [B, M, K, N] = [2, 5, 67, 9];
  const steps = Math.max(1, Math.ceil(bulk / (B * M * N * 64)));
  return [...HALVES, 'i32' as const].map((dtype) => {
    const next = valueOf(dtype, r);
    const small = dtype === 'i32' ? next : () => roundToDtype(dtype, r.u() * 4 - 2);
    const chunks: TensorMap[] = Array.from({ length: steps }, (_, c) => ({
      a: tensor(dtype, [B, M, K], fill(B * M * K, c === 0 ? next : small, c === 0 ? edgesOf(dtype).filter(Number.isFinite) : [])),
      b: tensor(dtype, [B, K, N], fill(B * K * N, small)),
    }));
    const { checked, json } = built(`matmul-${dtype}`, (p) => [p.named('y').matmul(p.activation('a', dtype, [B, M, K]), p.activation('b', dtype, [B, K, N]))]);
    return { name: `matmul ${dtype}`, checked, json, weights: {}, chunks, bound: exact };
  });
}

/** gather along every axis of a rank-3 table in the arena, in f32, f16 and i32 (bytes moved exactly). */
function gathers(r: F32Source): HostProgram[] {
  const shape = [4, 6, 8];
  const out: HostProgram[] = [];
  for (const dtype of ['f32', 'f16', 'i32'] as const) {
    const next = dtype === 'f32' ? r : valueOf(dtype, r);
    for (const axis of [0, 1, 2]) {
      const idx = tensor('i32', [3, 2], fill(6, () => Math.floor(r.u() * shape[axis]!), [0, shape[axis]! - 1]));
      const t = tensor(dtype, shape, fill(4 * 6 * 8, next, dtype === 'f32' ? EDGE_VALUES : edgesOf(dtype)));
      const { checked, json } = built(`gather-${dtype}-axis${axis}`, (p) => [p.named('y').gather(p.activation('t', dtype, shape), p.activation('idx', 'i32', [3, 2]), axis)]);
      out.push({ name: `gather ${dtype} axis ${axis}`, checked, json, weights: {}, chunks: [{ t, idx }], bound: exact });
    }
  }
  return out;
}

/** iota in f16 and bf16: the exact indices rounded once (bf16 rounds from 257 on, f16 from 2049). */
function iotas(): HostProgram[] {
  return HALVES.map((dtype) => {
    const { checked, json } = built(`iota-${dtype}`, (p) => [p.named('y').iota([3, 4100], 1, dtype), p.named('z').iota([300, 2], 0, dtype)]);
    return { name: `iota ${dtype}`, checked, json, weights: {}, chunks: [{}], bound: exact };
  });
}

/**
 * Row kernels on the typed kernels: an RMSNorm body in f16 and bf16 (rows of modest values, so the
 * sum of squares stays finite) and an i32 body (a row minus its max, scaled, its sum), step by step.
 */
function rowTyped(r: F32Source, bulk: number): HostProgram[] {
  const [rows, C] = [16, 64];
  const steps = Math.max(1, Math.ceil(bulk / (rows * C)));
  const out: HostProgram[] = [];
  for (const dtype of HALVES) {
    const modest = () => roundToDtype(dtype, (r.u() * 2 - 1) * 2 ** Math.floor(r.u() * 6 - 3));
    const chunks: TensorMap[] = Array.from({ length: steps }, (_, c) => ({ x: tensor(dtype, [rows, C], fill(rows * C, modest, c === 0 ? [0, -0, 1, -1, 0.5] : [])) }));
    const g = tensor(dtype, [C], fill(C, modest, [0, -0, 1, -1]));
    const { checked, json } = built(`row_kernel-rmsnorm-${dtype}`, (p) => {
      const xv = p.activation('x', dtype, [rows, C]);
      return p.named('y').rowKernel([xv, p.weight('g', dtype, [C])], (b, v, gv) => {
        const ms = b.div(b.reduceSum(b.mul(v, v)), C);
        return [b.mul(b.div(v, b.sqrt(b.add(ms, 1e-3))), gv)];
      });
    });
    out.push({ name: `row_kernel rmsnorm ${dtype}`, checked, json, weights: { g }, chunks, bound: exact });
  }
  const next = valueOf('i32', r);
  const chunks: TensorMap[] = Array.from({ length: steps }, (_, c) => ({ x: tensor('i32', [rows, C], fill(rows * C, next, c === 0 ? edgesOf('i32') : [])) }));
  const { checked, json } = built('row_kernel-i32', (p) => p.named('y', 's').rowKernel([p.activation('x', 'i32', [rows, C])], (b, v) => {
    const t = b.mul(b.sub(v, b.reduceMax(v)), 3);
    return [t, b.reduceSum(b.abs(t))];
  }));
  out.push({ name: 'row_kernel i32', checked, json, weights: {}, chunks, bound: exact });
  return out;
}

/** The typed and axis programs of `op` (none for an op that has only its f32 programs). */
export function hostTyped(op: HostContractOp, r: F32Source, bulk: number): HostProgram[] {
  switch (op) {
    case 'reduce_sum': case 'reduce_max': return reductions(op, r, bulk);
    case 'matmul': return matmuls(r, bulk);
    case 'gather': return gathers(r);
    case 'iota': return iotas();
    case 'row_kernel': return rowTyped(r, bulk);
    default: return op in HOST_TYPED_CONTRACTS ? elementwise(op as keyof typeof HOST_TYPED_CONTRACTS, r, bulk) : [];
  }
}
