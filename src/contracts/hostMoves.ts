/**
 * The host sweep's programs for the exact ops (data movement, iota, convert, gather) and the row
 * kernels (the RMSNorm kernel and a composed softmax body), beside hostOps.ts's arithmetic ones.
 */
import { tensor } from '../ir/tensor.js';
import { QUANT_DTYPES } from '../ir/types.js';
import type { Tensor } from '../ir/tensor.js';
import type { TensorMap } from '../oracle/types.js';
import { F32_U, gamma } from '../targets/host/contracts.js';
import type { F32Source } from './hostCases.js';
import { EDGE_VALUES, fill } from './hostCases.js';
import type { HostProgram } from './hostOps.js';
import { built, chunked, randomQuant } from './hostOps.js';

const exact = () => 'exact' as const;

/** reshape, transpose, broadcast, slice, concat, dynamic_update_slice over edge values and the bulk. */
export function movement(op: string, r: F32Source, bulk: number): HostProgram[] {
  const rows = 16;
  const x = fill(EDGE_VALUES.length + bulk, r, EDGE_VALUES);
  const chunks = chunked(['x', 'u'], [x, x.map((v) => -v)], rows);
  const { checked, json } = built(op, (p) => {
    const v = p.activation('x', 'f32', [rows, 256]);
    const y = p.named('y');
    switch (op) {
      case 'reshape': return [y.reshape(v, [4, 4, 16, 16])];
      case 'transpose': return [y.transpose(p.reshape(v, [4, 4, 16, 16]), [2, 0, 3, 1])];
      case 'broadcast': return [y.broadcast(p.slice(v, [0, 0], [1, 256]), [3, 2, 256], [1, 2])];
      case 'slice': return [y.slice(v, [1, 3], [15, 250], [2, 3])];
      case 'concat': return [y.concat([v, p.slice(v, [0, 0], [16, 7])], 1)];
      default: {
        const u = p.activation('u', 'f32', [rows, 256]);
        return [y.dynamicUpdateSlice(v, p.slice(u, [0, 0], [5, 100]), [3, 101])];
      }
    }
  });
  return [{ name: op, checked, json, weights: {}, chunks, bound: exact }];
}

/** iota in f32 and i32, along each axis. */
export function iota(): HostProgram[] {
  return (['f32', 'i32'] as const).map((dtype) => {
    const { checked, json } = built(`iota-${dtype}`, (p) => [p.named('y').iota([7, 300], 1, dtype), p.named('z').iota([7, 300], 0, dtype)]);
    return { name: `iota ${dtype}`, checked, json, weights: {}, chunks: [{}], bound: exact };
  });
}

/** convert f32 to f16 and bf16 over the edges and the bulk, and every quantized dtype to f32. */
export function convert(r: F32Source, bulk: number): HostProgram[] {
  const out: HostProgram[] = [];
  const x = fill(EDGE_VALUES.length + bulk, r, [...EDGE_VALUES, 65504, 65520, 65519.99, 2 ** -24, 2 ** -25, 3 * 2 ** -26]);
  for (const to of ['f16', 'bf16'] as const) {
    const chunks = chunked(['x'], [x], 16);
    const { checked, json } = built(`convert-${to}`, (p) => [p.named('y').convert(p.activation('x', 'f32', [16, 256]), to)]);
    out.push({ name: `convert f32->${to}`, checked, json, weights: {}, chunks, bound: exact });
  }
  for (const dtype of QUANT_DTYPES) {
    const { t } = randomQuant(dtype, 32, 256, r);
    const { checked, json } = built(`convert-${dtype}`, (p) => [p.named('y').convert(p.weight('w', dtype, [32, 256]), 'f32')]);
    out.push({ name: `convert ${dtype}->f32`, checked, json, weights: { w: t }, chunks: [{}], bound: exact });
  }
  return out;
}

/** gather of rows of every quantized dtype by i32 indices. */
export function gather(r: F32Source, bulk: number): HostProgram[] {
  const steps = Math.max(1, Math.ceil(bulk / (64 * 256)));
  return QUANT_DTYPES.map((dtype) => {
    const { t } = randomQuant(dtype, 32, 256, r);
    const chunks: TensorMap[] = Array.from({ length: steps }, (_, c) => ({
      idx: tensor('i32', [64], fill(64, () => Math.floor(r.u() * 32), c === 0 ? [0, 31, 31, 0, 5] : [])),
    }));
    const { checked, json } = built(`gather-${dtype}`, (p) => [p.named('y').gather(p.weight('w', dtype, [32, 256]), p.activation('idx', 'i32', [64]), 0)]);
    return { name: `gather ${dtype}`, checked, json, weights: { w: t }, chunks, bound: exact };
  });
}

/** Rows of modest values (the row kernels' domain: no overflow inside a row), edge rows first. */
function rowInputs(r: F32Source, bulk: number, rows: number, cols: number): number[] {
  const edges: number[] = [];
  // A row of zeros and signed zeros, a row of subnormals, a row of one large value among small ones.
  for (let j = 0; j < cols; j++) edges.push(j % 2 === 0 ? 0 : -0);
  for (let j = 0; j < cols; j++) edges.push((j % 7 - 3) * 2 ** -140);
  for (let j = 0; j < cols; j++) edges.push(j === 5 ? 1e15 : Math.fround(r.u() - 0.5));
  return fill(Math.max(edges.length + bulk, rows * cols), () => Math.fround((r.u() * 2 - 1) * 2 ** Math.floor(r.u() * 8 - 4)), edges);
}

/**
 * The RMSNorm kernel, y = x / sqrt(Σx²/C + eps) · g: the sum of squares of positive terms is within
 * γ(C) relatively, the square root halves that, and the add, the sqrt, the div and the gain's mul round
 * once each: rel γ(C)/2 + 5u. A composed softmax body, exp(x - max) / Σ exp(x - max): the subtraction's
 * rounding moves exp's argument by u·|x - max|, exp is within its ulps, the positive sum within γ(C),
 * the div rounds once: rel γ(C) + (|x - max| + 3 + 2)·u.
 */
export function rowKernels(r: F32Source, bulk: number): HostProgram[] {
  const rows = 16;
  const C = 256;
  const x = rowInputs(r, bulk, rows, C);
  const g = tensor('f32', [C], fill(C, () => Math.fround(r.u() * 2 - 1), [0, -0, 1, -1]));
  const chunks = chunked(['x'], [x], rows);
  const rms = built('row_kernel-rmsnorm', (p) => {
    const xv = p.activation('x', 'f32', [rows, C]);
    return p.named('y').rowKernel([xv, p.weight('g', 'f32', [C])], (b, v, gv) => {
      const ms = b.div(b.reduceSum(b.mul(v, v)), C);
      return [b.mul(b.div(v, b.sqrt(b.add(ms, 1e-6))), gv)];
    });
  });
  const soft = built('row_kernel-softmax', (p) => {
    const xv = p.activation('x', 'f32', [rows, C]);
    return p.named('y').rowKernel([xv], (b, v) => {
      const e = b.exp(b.sub(v, b.reduceMax(v)));
      return [b.div(e, b.reduceSum(e))];
    });
  });
  const spread = chunks.map((ch) => rowSpread(ch['x']!, rows, C));
  return [
    { name: 'row_kernel rmsnorm', ...rms, weights: { g }, chunks, bound: (_c, _i, want) => (gamma(C) / 2 + 5 * F32_U) * Math.abs(want) + 2 ** -149 },
    { name: 'row_kernel softmax', ...soft, weights: {}, chunks, bound: (c, i, want) => (gamma(C) + (spread[c]![Math.floor(i / C)]! + 5) * F32_U) * Math.abs(want) + 2 ** -149 },
  ];
}

/** Per row, max - min: how far the softmax's subtraction moves exp's argument at most. */
function rowSpread(t: Tensor, rows: number, C: number): number[] {
  return Array.from({ length: rows }, (_, row) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let j = 0; j < C; j++) { const v = t.data[row * C + j]!; lo = Math.min(lo, v); hi = Math.max(hi, v); }
    return hi - lo;
  });
}
