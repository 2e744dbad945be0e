/**
 * Recognizes the RMSNorm row kernel of docs/PROGRAM_FORMAT.md (x·x, sum, / C, + eps, then sqrt and x / rms or rsqrt and x · it,
 * · g with g one shared row), the one row-kernel body the host addon has a kernel for. The admission
 * table and the backend both ask this, so they cannot disagree.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import type { Operand, RowBody } from '../../ir/types.js';
import { isLiteral } from '../../ir/types.js';

/** Which operand is x and which the gain row, and eps; null for any other body. */
export function rmsnormOf(e: CheckedEqn): { readonly x: number; readonly g: number; readonly eps: number } | null {
  const body = e.eqn.attrs['body'] as RowBody | undefined;
  if (body === undefined || body.params.length !== 2 || body.steps.length !== 7 || body.results.length !== 1) return null;
  const [px, pg] = body.params as [string, string];
  const x = e.ins[0]!;
  const C = x.shape[x.shape.length - 1];
  if (e.ins[1]!.shape.length !== 1 || e.ins[1]!.shape[0] !== C || x.shape.length < 1) return null;
  const s = body.steps;
  const is = (k: number, op: string, a: Operand, b?: Operand): boolean => {
    const st = s[k]!;
    if (st.op !== op || st.in.length !== (b === undefined ? 1 : 2)) return false;
    return same(st.in[0]!, a) && (b === undefined || same(st.in[1]!, b));
  };
  const eps = s[3]?.in[1];
  if (!is(0, 'mul', px, px) || !is(1, 'reduce_sum', s[0]!.out) || !is(2, 'div', s[1]!.out, { lit: C! })) return null;
  if (eps === undefined || !isLiteral(eps) || !(eps.lit >= 0) || !is(3, 'add', s[2]!.out, eps)) return null;
  // x / sqrt(ms + eps) and x * rsqrt(ms + eps) are the same kernel within its bound (docs/HOST.md).
  const scaled = (is(4, 'sqrt', s[3]!.out) && is(5, 'div', px, s[4]!.out)) || (is(4, 'rsqrt', s[3]!.out) && is(5, 'mul', px, s[4]!.out));
  if (!scaled || !is(6, 'mul', s[5]!.out, pg)) return null;
  if (body.results[0] !== s[6]!.out) return null;
  return { x: 0, g: 1, eps: eps.lit };
}

function same(a: Operand, b: Operand): boolean {
  if (isLiteral(a) || isLiteral(b)) return isLiteral(a) && isLiteral(b) && a.lit === b.lit;
  return a === b;
}
