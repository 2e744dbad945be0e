/**
 * A row kernel's body as the host addon runs it when it is not the RMSNorm it has a kernel for: step
 * by step over the whole [rows, C] tensor, each value either a vector (one per row), a shared row
 * ([C], the same for every row) or a per-row scalar. Elementwise steps and reduce_sum / reduce_max
 * over the row, in one dtype (f32, f16, bf16 or i32), are admitted; `ge` (a bool result) and anything else refuse the body. The admission
 * table and the backend both ask this, so they cannot disagree.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import { isLiteral, numel, type Operand, type RowBody } from '../../ir/types.js';
import { BINARY_OPS, UNARY_OPS, type BinaryOp, type UnaryOp } from '../../ops/elementwise.js';

/** How a body value is laid out: a vector per row, one row shared by all, a scalar per row, or a literal. */
export type RowValueKind = 'vector' | 'shared' | 'scalar' | 'literal';

/** One step of a planned body: its op and its operands' kinds, and its result's kind. */
interface RowStepPlan {
  readonly op: UnaryOp | BinaryOp | 'reduce_sum' | 'reduce_max';
  readonly in: readonly Operand[];
  readonly kinds: readonly RowValueKind[];
  readonly out: string;
  readonly kind: RowValueKind;
}

/** A planned body: its element dtype, rows and row length, each param's kind, the steps, and the results. */
export interface RowBodyPlan {
  /** Every param's dtype: f32 runs on the SIMD kernels, f16, bf16 and i32 on the typed ones. */
  readonly dtype: 'f32' | 'f16' | 'bf16' | 'i32';
  readonly rows: number;
  readonly C: number;
  readonly params: ReadonlyMap<string, RowValueKind>;
  readonly steps: readonly RowStepPlan[];
  readonly results: readonly string[];
}

const ELEMENTWISE = new Set<string>([...UNARY_OPS, ...BINARY_OPS.filter((b) => b !== 'ge')]);

/** The plan of `e`'s body, or null when a step is outside what the addon's kernels compose. */
export function rowBodyOf(e: CheckedEqn): RowBodyPlan | null {
  const body = e.eqn.attrs['body'] as RowBody | undefined;
  if (body === undefined) return null;
  const widest = e.ins.reduce((a, t) => (t.shape.length > a.shape.length ? t : a), e.ins[0]!);
  const C = widest.shape[widest.shape.length - 1] ?? 1;
  const rows = numel(widest.shape.slice(0, -1));
  const kinds = new Map<string, RowValueKind>();
  const dtype = e.ins[0]!.dtype;
  if (dtype !== 'f32' && dtype !== 'f16' && dtype !== 'bf16' && dtype !== 'i32') return null;
  for (const [k, name] of body.params.entries()) {
    const t = e.ins[k]!;
    if (t.dtype !== dtype) return null;
    kinds.set(name, t.shape.length === widest.shape.length ? 'vector' : 'shared');
  }
  const params = new Map(kinds);
  const kindOf = (o: Operand): RowValueKind | undefined => (isLiteral(o) ? 'literal' : kinds.get(o));
  const steps: RowStepPlan[] = [];
  for (const s of body.steps) {
    const ks = s.in.map(kindOf);
    if (ks.some((k) => k === undefined)) return null;
    const inKinds = ks as RowValueKind[];
    let kind: RowValueKind;
    if (s.op === 'reduce_sum' || s.op === 'reduce_max') {
      // A reduction of a vector per row; of a shared row it would be one value for every row.
      if (inKinds[0] !== 'vector') return null;
      kind = 'scalar';
    } else if (ELEMENTWISE.has(s.op)) {
      if (inKinds.every((k) => k === 'literal')) return null;
      kind = inKinds.includes('vector') || (inKinds.includes('shared') && inKinds.includes('scalar')) ? 'vector'
        : inKinds.includes('shared') ? 'shared' : 'scalar';
    } else {
      return null;
    }
    kinds.set(s.out, kind);
    steps.push({ op: s.op as RowStepPlan['op'], in: s.in, kinds: inKinds, out: s.out, kind });
  }
  // A result has its equation output's layout: a vector or a per-row scalar, as the op rule says.
  for (const [k, r] of body.results.entries()) {
    const want = e.outs[k]!.shape.length === widest.shape.length ? 'vector' : 'scalar';
    const have = kinds.get(r);
    if (have !== want && !(want === 'vector' && have === 'shared')) return null;
  }
  return { dtype, rows, C, params, steps, results: body.results };
}
