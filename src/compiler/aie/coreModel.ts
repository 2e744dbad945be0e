/**
 * What one core of a region holds and how it walks its data: the per-equation half of the resource
 * model (docs/AIE_REGIONS.md). Every value moves as chunks of one row (its last axis; a scalar is one
 * element), so a fifo has one element type whoever produces or consumes it. A core loops over rows:
 *
 *   pointwise   one output row per step, one row of each operand (a scalar operand is held throughout)
 *   rows        reductions and row kernels: per group, one row of scalar results (an output row), and
 *               per input row inside it one row of each operand and of each vector result
 *   gather      copies its source and indices row by row into tile-local tables (random access needs
 *               the whole table), then writes output rows
 *
 * Tile-local bytes = the stack + FIFO_DEPTH chunks of every distinct operand and result + tables
 * (gather) + body temporaries (row kernels: one row per vector step).
 */
import { CapabilityMissing } from '../../errors/index.js';
import type { CheckedEqn } from '../../ir/checked.js';
import type { DType, RowBody, Shape } from '../../ir/types.js';
import { dtypeBytes, elementDtype, eqnOuts, isLiteral, numel, storageBytes } from '../../ir/types.js';
import { OPS } from '../../ops/table.js';
import { FIFO_DEPTH, STACK_BYTES } from './bounds.js';

type CoreKind = 'pointwise' | 'rows' | 'gather';

/** One value a core reads or writes, chunked by rows. */
export interface CoreStream {
  readonly value: string;
  readonly dtype: DType;
  readonly shape: Shape;
  /** Elements per chunk: the last axis, or 1 for a scalar. */
  readonly chunk: number;
  /** Acquired once and held for the whole run (a broadcast scalar, a row kernel's shared row). */
  readonly held: boolean;
  /** rows kind: a result chunk written once per group (a reduction's or a scalar result's row). */
  readonly perGroup: boolean;
}

export interface CoreModel {
  readonly kind: CoreKind;
  /** Distinct value operands in first-use order (literals are compiled into the kernel). */
  readonly reads: readonly CoreStream[];
  readonly writes: readonly CoreStream[];
  /** pointwise: output rows; rows: groups of `inner` input rows; gather: output rows. */
  readonly groups: number;
  readonly inner: number;
  /** The row length the kernel works on (rows kind: the input row C). */
  readonly cols: number;
  readonly tableBytes: number;
  readonly tempBytes: number;
  readonly localBytes: number;
}

/** Elements in one row chunk of a value of `shape`. */
export function rowElems(shape: Shape): number {
  return shape.length === 0 ? 1 : shape[shape.length - 1]!;
}

/** Rows of a value of `shape` (0 for an empty tensor). */
export function rowCount(shape: Shape): number {
  const c = rowElems(shape);
  return c === 0 ? 0 : numel(shape) / c;
}

/** The body steps whose value is a vector (a row), in order: each costs one row of temporaries. */
export function vectorSteps(body: RowBody): Set<string> {
  const vec = new Set(body.params);
  for (const s of body.steps) {
    const reduces = s.op === 'reduce_sum' || s.op === 'reduce_max';
    if (!reduces && s.in.some((o) => !isLiteral(o) && vec.has(o))) vec.add(s.out);
  }
  for (const p of body.params) vec.delete(p);
  return vec;
}

function stream(value: string, dtype: DType, shape: Shape, held = false, perGroup = false): CoreStream {
  return { value, dtype, shape, chunk: rowElems(shape), held, perGroup };
}

function reads(ce: CheckedEqn, held: (shape: Shape) => boolean): CoreStream[] {
  const seen = new Map<string, CoreStream>();
  ce.eqn.in.forEach((o, k) => {
    if (isLiteral(o) || seen.has(o)) return;
    const t = ce.ins[k]!;
    seen.set(o, stream(o, elementDtype(t.dtype, `operand ${k} of equation ${ce.index}`), t.shape, held(t.shape)));
  });
  return [...seen.values()];
}

function bytesOf(s: CoreStream): number {
  return s.chunk * dtypeBytes(s.dtype);
}

function finish(m: Omit<CoreModel, 'localBytes'>): CoreModel {
  const chunks = [...m.reads, ...m.writes].reduce((n, s) => n + bytesOf(s), 0);
  return { ...m, localBytes: STACK_BYTES + FIFO_DEPTH * chunks + m.tableBytes + m.tempBytes };
}

/** The core of one equation; CapabilityMissing for an equation no AIE core implements. */
export function coreModel(ce: CheckedEqn): CoreModel {
  const outs = eqnOuts(ce.eqn);
  const cat = OPS[ce.op].category;
  if (cat === 'binary' || cat === 'compare' || cat === 'unary') {
    const out = ce.outs[0]!;
    const scalarIn = (s: Shape) => s.length === 0 && out.shape.length > 0;
    return finish({
      kind: 'pointwise', reads: reads(ce, scalarIn), writes: [stream(outs[0]!, out.dtype, out.shape)],
      groups: rowCount(out.shape), inner: 1, cols: rowElems(out.shape), tableBytes: 0, tempBytes: 0,
    });
  }
  if (ce.op === 'reduce_sum' || ce.op === 'reduce_max' || ce.op === 'row_kernel') {
    // Rows are the highest-rank operand's; a row kernel's [C] operand over more rows is a shared row.
    const top = ce.ins.reduce((a, t) => (t.shape.length > a.shape.length ? t : a), ce.ins[0]!);
    if (ce.op !== 'row_kernel') {
      const axes = (ce.eqn.attrs['axes'] ?? []) as readonly number[];
      if (axes.length !== 1 || axes[0] !== top.shape.length - 1) throw new CapabilityMissing(ce.index, ce.op, 'aie.reduce.last-axis-only');
    }
    const lead = top.shape.slice(0, -1);
    const inner = lead.length === 0 ? 1 : lead[lead.length - 1]!;
    const shared = (s: Shape) => s.length === 1 && top.shape.length > 1;
    const body = ce.op === 'row_kernel' ? (ce.eqn.attrs['body'] as RowBody) : undefined;
    const temps = body ? vectorSteps(body).size * rowElems(top.shape) * dtypeBytes(elementDtype(top.dtype, `equation ${ce.index}`)) : 0;
    return finish({
      kind: 'rows', reads: reads(ce, shared),
      writes: outs.map((v, k) => stream(v, ce.outs[k]!.dtype, ce.outs[k]!.shape, false, ce.outs[k]!.shape.length < top.shape.length)),
      groups: inner === 0 ? 0 : numel(lead) / inner, inner, cols: rowElems(top.shape), tableBytes: 0, tempBytes: temps,
    });
  }
  if (ce.op === 'gather') {
    const out = ce.outs[0]!;
    const tables = ce.ins.reduce((n, t, k) => n + (k < 2 && !isLiteral(ce.eqn.in[k]!) ? storageBytes(t.dtype, t.shape) : 0), 0);
    return finish({
      kind: 'gather', reads: reads(ce, () => false), writes: [stream(outs[0]!, out.dtype, out.shape)],
      groups: rowCount(out.shape), inner: 1, cols: rowElems(out.shape), tableBytes: tables, tempBytes: 0,
    });
  }
  throw new CapabilityMissing(ce.index, ce.op, `aie.core.${ce.op}`);
}
