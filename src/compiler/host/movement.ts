/**
 * transpose, broadcast, slice and concat as the addon's strided copies (rank <= 4, docs/HOST.md):
 * the result is written row-major and each is only a choice of source strides and offset.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import { dtypeBytes, elementDtype, numel } from '../../ir/types.js';
import type { KernelCall } from './kernelList.js';
import { stridesOf } from '../../ops/common.js';

const ints = (e: CheckedEqn, name: string): number[] => [...((e.eqn.attrs[name] as readonly number[] | undefined) ?? [])];

/** The strided copies of a movement equation reading operands at `at(k)` and writing at `y`. */
export function lowerMovement(e: CheckedEqn, at: (k: number) => number, y: number): KernelCall[] {
  const out = e.outs[0]!;
  const elem = dtypeBytes(out.dtype);
  const dims = [...out.shape];
  const ys = stridesOf(dims);
  if (numel(dims) === 0) return [];
  const eqn = e.index;
  const x = e.ins[0]!;
  const xs0 = stridesOf(x.shape);
  switch (e.op) {
    case 'transpose': {
      const perm = ints(e, 'perm');
      return [{ op: 'copy_strided', eqn, x: at(0), y, elem, dims, xStrides: perm.map((p) => xs0[p]!), yStrides: ys }];
    }
    case 'broadcast': {
      const map = ints(e, 'dims');
      const xStrides = dims.map((_, k) => {
        const j = map.indexOf(k);
        return j < 0 || x.shape[j] === 1 ? 0 : xs0[j]!;
      });
      return [{ op: 'copy_strided', eqn, x: at(0), y, elem, dims, xStrides, yStrides: ys }];
    }
    case 'slice': {
      const start = ints(e, 'start');
      const step = ints(e, 'stride');
      const from = start.reduce((acc, s, k) => acc + s * xs0[k]!, 0);
      const xStrides = dims.map((_, k) => xs0[k]! * (step[k] ?? 1));
      return [{ op: 'copy_strided', eqn, x: at(0) + from * elem, y, elem, dims, xStrides, yStrides: ys }];
    }
    case 'concat': {
      const axis = e.eqn.attrs['axis'] as number;
      let along = 0;
      const calls: KernelCall[] = [];
      e.ins.forEach((part, k) => {
        const pd = [...part.shape];
        if (numel(pd) > 0) {
          elementDtype(part.dtype, `operand ${k} of equation ${eqn}`);
          calls.push({ op: 'copy_strided', eqn, x: at(k), y: y + along * ys[axis]! * elem, elem, dims: pd, xStrides: stridesOf(pd), yStrides: ys });
        }
        along += pd[axis]!;
      });
      return calls;
    }
    default: return [];
  }
}
