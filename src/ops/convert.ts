/**
 * `convert`: every dtype to every dtype. Float to i32 truncates toward zero and saturates, NaN to 0;
 * bool converts to 0 or 1; anything to bool is `x != 0`, so NaN converts to true (as C, NumPy and XLA
 * do: NaN is not equal to zero).
 */
import type { DType } from '../ir/types.js';
import { isFloat } from '../ir/types.js';
import type { EvalCtx, OpRule } from './rule.js';
import { finish } from './common.js';
import { mapTensor } from './elementwise.js';

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

/** One element converted from `from` to `to` (rounded once unless fp64 keeps a float result exact). */
export function convertValue(x: number, from: DType, to: DType, ctx: EvalCtx): number {
  if (to === 'bool') return x !== 0 ? 1 : 0;
  if (to === 'i32') {
    if (!isFloat(from)) return x;
    if (Number.isNaN(x)) return 0;
    return Math.min(I32_MAX, Math.max(I32_MIN, Math.trunc(x))) | 0;
  }
  return finish(to, x, ctx);
}

/** The row of `convert`. */
export const convertRule: OpRule<{ readonly dtype: DType }> = {
  category: 'convert',
  arity: [1, 1],
  attrs: { dtype: { kind: 'dtype' } },
  // A body step is computed in the row inputs' dtype, so a step that changes dtype has no place there.
  rowStep: false,
  literalDtype: () => undefined,
  infer(ins, attrs) {
    return [{ dtype: attrs.dtype, shape: ins[0]!.shape }];
  },
  evaluate(ins, attrs, ctx) {
    const a = ins[0]!;
    return [mapTensor(a, attrs.dtype, (x) => convertValue(x, a.dtype, attrs.dtype, ctx))];
  },
};
