/**
 * Reductions over any set of axes and gather along any axis, as the addon's strided copies around its
 * row kernels (docs/HOST.md): a copy brings the reduced axes last (or the gathered axis first), the row
 * kernel runs on rows, and a gather's result is copied back into place. Adjacent axes that move together
 * are merged first (src/targets/host/axes.ts), so a reduction's copy has rank <= 4 for any operand of
 * rank <= 4, and more where axes merge; a gather's copies are of rank 3. The copies move
 * bytes exactly; the reduced elements keep their row-major order, which is the oracle's order.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import { dtypeBytes, elementDtype, numel, storageBytes } from '../../ir/types.js';
import { axisRuns, reduceCopyRank } from '../../targets/host/axes.js';
import type { KernelCall } from './kernelList.js';
import { stridesOf } from '../../ops/common.js';

/**
 * The calls of reduce_sum or reduce_max of `e` reading `x` and writing `y`: f32 through the SIMD row
 * kernels, f16, bf16 and i32 through reduce_t; `scratch` places the transposed copy when one is needed.
 */
export function lowerReduce(e: CheckedEqn, x: number, y: number, scratch: (bytes: number) => number): KernelCall[] {
  const eqn = e.index;
  const t = e.ins[0]!;
  const dtype = elementDtype(t.dtype, `operand 0 of equation ${eqn}`);
  const axes = (e.eqn.attrs['axes'] as readonly number[] | undefined) ?? [];
  const max = e.op === 'reduce_max';
  const runs = axisRuns(t.shape, axes);
  const kept = runs.filter(([, r]) => !r).map(([d]) => d);
  const red = runs.filter(([, r]) => r).map(([d]) => d);
  const rows = kept.reduce((a, b) => a * b, 1);
  const C = red.reduce((a, b) => a * b, 1);
  const calls: KernelCall[] = [];
  let from = x;
  // Reduced runs that are not one trailing run: copy them last, kept runs first, in order.
  if (reduceCopyRank(t.shape, axes) > 0 && numel(t.shape) > 0) {
    const dims = runs.map(([d]) => d);
    const xs = stridesOf(dims);
    const order = [...runs.keys()].filter((k) => !runs[k]![1]).concat([...runs.keys()].filter((k) => runs[k]![1]));
    const outDims = order.map((k) => dims[k]!);
    from = scratch(storageBytes(dtype, t.shape));
    calls.push({ op: 'copy_strided', eqn, x, y: from, elem: dtypeBytes(dtype), dims: outDims, xStrides: order.map((k) => xs[k]!), yStrides: stridesOf(outDims) });
  }
  if (dtype === 'f32') calls.push({ op: max ? 'row_max' : 'row_sum', eqn, x: from, y, rows, C });
  else calls.push({ op: 'reduce_t', eqn, max, dtype, x: from, y, rows, C });
  return calls;
}

/**
 * gather along `axis` of a table `x` in the arena (any element dtype, any rank): the table viewed as
 * [pre, A, post] is copied to [A, pre, post], its rows gathered by index to [count, pre, post], and
 * that copied to the result [pre, count, post]. Axis 0 is the gather alone.
 */
export function lowerGather(e: CheckedEqn, x: number, idx: number, y: number, scratch: (bytes: number) => number): KernelCall[] {
  const eqn = e.index;
  const t = e.ins[0]!;
  const dtype = elementDtype(t.dtype, `operand 0 of equation ${eqn}`);
  const elem = dtypeBytes(dtype);
  const axis = (e.eqn.attrs['axis'] as number | undefined) ?? 0;
  const count = numel(e.ins[1]!.shape);
  const pre = numel(t.shape.slice(0, axis));
  const A = t.shape[axis]!;
  const post = numel(t.shape.slice(axis + 1));
  if (pre === 1) return [{ op: 'gather_rows', eqn, x, idx, y, count, rows: A, rowBytes: post * elem }];
  const t1 = scratch(storageBytes(dtype, [A, pre, post]));
  const t2 = scratch(storageBytes(dtype, [count, pre, post]));
  return [
    { op: 'copy_strided', eqn, x, y: t1, elem, dims: [A, pre, post], xStrides: [post, A * post, 1], yStrides: [pre * post, post, 1] },
    { op: 'gather_rows', eqn, x: t1, idx, y: t2, count, rows: A, rowBytes: pre * post * elem },
    { op: 'copy_strided', eqn, x: t2, y, elem, dims: [pre, count, post], xStrides: [post, pre * post, 1], yStrides: [count * post, post, 1] },
  ];
}
