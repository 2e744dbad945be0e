/**
 * The NPU's data movement, simulated: bit exact in any width the device carries, so these copy values
 * unchanged and keep their precision. Indices follow OpenVINO's layers: Gather takes negative indices
 * from the end and gives 0 for one outside its axis; ScatterNDUpdate skips an index outside the data.
 * Neither is checked, as on the hardware (the docs: the NPU's result for such an index is undefined).
 */
import type { Tensor } from '../../ir/tensor.js';
import { numel } from '../../ir/types.js';
import { forEachIndex, stridesOf } from '../../ops/common.js';
import type { GraphNode } from '../../compiler/openvino/blobFormat.js';
import { convertElement } from './fp16Kernels.js';

/** A new tensor of the node's dims whose element at each output index is `src.data[from(idx)]`. */
function gatherInto(node: GraphNode, src: Tensor, from: (idx: readonly number[]) => number): Tensor {
  const out = new Float64Array(numel(node.dims));
  forEachIndex(node.dims, (idx, flat) => { out[flat] = src.data[from(idx)]!; });
  return { dtype: src.dtype, shape: [...node.dims], data: out };
}

/** Reshape: the same elements in row-major order. */
export function reshape(node: GraphNode, a: Tensor): Tensor {
  return { dtype: a.dtype, shape: [...node.dims], data: a.data.slice() };
}

/** Transpose: output dim i is input dim perm[i]. */
export function transpose(node: GraphNode, a: Tensor, perm: readonly number[]): Tensor {
  const st = stridesOf(a.shape);
  return gatherInto(node, a, (idx) => idx.reduce((o, v, i) => o + v * st[perm[i]!]!, 0));
}

/** Broadcast: input dim i goes to output dim axes[i]; an input extent of 1 repeats. */
export function broadcast(node: GraphNode, a: Tensor, axes: readonly number[]): Tensor {
  const st = stridesOf(a.shape);
  return gatherInto(node, a, (idx) => {
    let o = 0;
    for (let i = 0; i < axes.length; i++) if (a.shape[i] !== 1) o += idx[axes[i]!]! * st[i]!;
    return o;
  });
}

/** Slice: output index idx reads input index start + idx * step, per dim. */
export function slice(node: GraphNode, a: Tensor, start: readonly number[], step: readonly number[]): Tensor {
  const st = stridesOf(a.shape);
  return gatherInto(node, a, (idx) => idx.reduce((o, v, i) => o + (start[i]! + v * step[i]!) * st[i]!, 0));
}

/** Concat along `axis`. */
export function concat(node: GraphNode, parts: readonly Tensor[], axis: number): Tensor {
  const outer = numel(node.dims.slice(0, axis));
  const out = new Float64Array(numel(node.dims));
  let at = 0;
  for (let o = 0; o < outer; o++) {
    for (const p of parts) {
      const chunk = numel(p.shape.slice(axis));
      out.set(p.data.subarray(o * chunk, (o + 1) * chunk), at);
      at += chunk;
    }
  }
  return { dtype: parts[0]?.dtype ?? node.precision, shape: [...node.dims], data: out };
}

/** Gather (batch_dims 0): take along `axis`; a negative index counts from the end, one outside gives 0. */
export function gather(node: GraphNode, src: Tensor, indices: Tensor, axis: number): Tensor {
  const extent = src.shape[axis]!;
  const outer = numel(src.shape.slice(0, axis));
  const inner = numel(src.shape.slice(axis + 1));
  const k = indices.data.length;
  const out = new Float64Array(outer * k * inner);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < k; j++) {
      const raw = indices.data[j]!;
      const i = raw < 0 ? raw + extent : raw;
      if (i < 0 || i >= extent) continue;
      const from = (o * extent + i) * inner;
      out.set(src.data.subarray(from, from + inner), (o * k + j) * inner);
    }
  }
  return { dtype: src.dtype, shape: [...node.dims], data: out };
}

/** Range: start + i * step, in the node's precision (an iota). */
export function range(node: GraphNode, start: number, step: number): Tensor {
  const out = new Float64Array(numel(node.dims));
  for (let i = 0; i < out.length; i++) out[i] = convertElement(node.precision, start + i * step);
  return { dtype: node.precision, shape: [...node.dims], data: out };
}

/**
 * ScatterNDUpdate: `indices` is [..., q] (q <= the data's rank); each index tuple names a slice of the
 * data's last rank - q dims, which takes the matching slice of `updates`. A later tuple overwrites an
 * earlier one; a tuple outside the data is skipped.
 */
export function scatterNdUpdate(node: GraphNode, data: Tensor, indices: Tensor, updates: Tensor): Tensor {
  const out = data.data.slice();
  const q = indices.shape[indices.shape.length - 1] ?? 0;
  const st = stridesOf(data.shape);
  const inner = numel(data.shape.slice(q));
  const tuples = q === 0 ? 0 : indices.data.length / q;
  for (let t = 0; t < tuples; t++) {
    let o = 0;
    let inside = true;
    for (let d = 0; d < q; d++) {
      const i = indices.data[t * q + d]!;
      if (i < 0 || i >= data.shape[d]!) inside = false;
      o += i * st[d]!;
    }
    if (inside) out.set(updates.data.subarray(t * inner, (t + 1) * inner), o);
  }
  return { dtype: data.dtype, shape: [...node.dims], data: out };
}
