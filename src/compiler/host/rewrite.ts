/**
 * Rewrites of a checked program the host lowering applies before it plans any slot (lower.ts): a small
 * table of patterns, each recognizing a few equations that one native record computes. An equation a
 * rewrite absorbs gets no arena slot and no kernel; the rewrite's record runs in place of the last
 * equation of its pattern and reads only the values named in `reads`.
 *
 * Two patterns: the neox rope of layers.ts's rope() as one `rope` record (ropeAt below), and attention
 * as src/model/qwen3/program.ts writes it:
 *   scores = matmul(q [B, M, D], transpose(k [B, N, D], [0, 2, 1]))   (or k [B, D, N] as it is)
 *   probs  = row_kernel(scores, bias) whose body is maskedSoftmax's: a = s*scale + bias,
 *            exp(a - max(a)) / sum(exp(a - max(a)))
 *   out    = matmul(probs, v [B, N, Dv])
 * where scores and probs have no other reader, lowered to one `attention` record. The bias is read
 * where it lies: through reshape(broadcast(mask [T, N] -> [B, T, G, N])) -> [B, T*G, N] with strides
 * (that reshape and broadcast are absorbed too when the fused records are their only readers), or as a
 * materialized [B, M, N]. The transpose of k (the KV cache's rows, [B, N, D]) is absorbed when the
 * scores are its only reader, and the record reads the rows in place (`kRows`). When k and v are both
 * convert(f16 -> f32) of values (an f16 KV cache) whose only reader is the fused pattern, the converts
 * are absorbed too and the record is `attention_f16`, reading the f16 values (the conversion is exact,
 * so the result is the same bits).
 */
import { isLiteral, type Operand } from '../../ir/types.js';
import type { CheckedEqn, CheckedProgram } from '../../ir/checked.js';
import type { RowBody } from '../../ir/types.js';
import type { KernelArgs } from './kernelList.js';

/** One fused attention: the value names it reads, and the record's shape fields (offsets added by the lowering). */
interface AttentionRewrite {
  readonly kind: 'attention';
  readonly q: string;
  readonly k: string;
  readonly v: string;
  /** The value the bias is read from: the mask under a broadcast, or the bias itself. */
  readonly bias: string;
  /** The dtype k and v are read in: f32, or f16 (an f16 KV cache read through its convert, attention_f16). */
  readonly kv: 'f32' | 'f16';
  readonly shape: Omit<KernelArgs['attention'], 'q' | 'k' | 'v' | 'bias' | 'y'>;
}

/** A neox rope (layers.ts rope()) on x [T, H, D] with per-token tables cos, sin [T, D/2]: one `rope` record. */
interface RopeRewrite {
  readonly kind: 'rope';
  readonly x: string;
  readonly cos: string;
  readonly sin: string;
  readonly T: number;
  readonly H: number;
  readonly D: number;
}

type HostRewrite = AttentionRewrite | RopeRewrite;

/** What the rewrites found: the record replacing an equation (by index), and the equations absorbed. */
export interface HostRewrites {
  readonly at: ReadonlyMap<number, HostRewrite>;
  readonly absorbed: ReadonlySet<number>;
}

/** The values an equation reads once the rewrites are applied (none for an absorbed one). */
export function readsOf(e: CheckedEqn, r: HostRewrites): readonly string[] {
  if (r.absorbed.has(e.index)) return [];
  const w = r.at.get(e.index);
  if (w !== undefined) return w.kind === 'attention' ? [w.q, w.k, w.v, w.bias] : [w.x, w.cos, w.sin];
  return e.eqn.in.filter((o): o is string => !isLiteral(o));
}

/**
 * The scale of a body `a = s*scale + bias; e = exp(a - max(a)); y = e / sum(e)` (either operand order
 * of the mul and the add), or null for any other body. The scores are param 0 and the bias param 1.
 */
function maskedSoftmaxScale(body: RowBody): number | null {
  if (body.params.length !== 2 || body.results.length !== 1 || body.steps.length !== 7) return null;
  const [s, m] = body.params as [string, string];
  const [mul, add, max, sub, exp, sum, div] = body.steps as [RowBody['steps'][number], ...RowBody['steps'][number][]];
  const is = (o: Operand | undefined, name: string): boolean => o !== undefined && !isLiteral(o) && o === name;
  const pair = (ins: readonly Operand[], x: (o: Operand) => boolean, y: (o: Operand) => boolean): boolean =>
    ins.length === 2 && ((x(ins[0]!) && y(ins[1]!)) || (x(ins[1]!) && y(ins[0]!)));
  if (mul.op !== 'mul') return null;
  const lit = mul.in.find((o) => isLiteral(o));
  if (lit === undefined || !isLiteral(lit) || !pair(mul.in, (o) => is(o, s), (o) => isLiteral(o))) return null;
  if (add!.op !== 'add' || !pair(add!.in, (o) => is(o, mul.out), (o) => is(o, m))) return null;
  if (max!.op !== 'reduce_max' || !is(max!.in[0], add!.out)) return null;
  if (sub!.op !== 'sub' || !is(sub!.in[0], add!.out) || !is(sub!.in[1], max!.out)) return null;
  if (exp!.op !== 'exp' || !is(exp!.in[0], sub!.out)) return null;
  if (sum!.op !== 'reduce_sum' || !is(sum!.in[0], exp!.out)) return null;
  if (div!.op !== 'div' || !is(div!.in[0], exp!.out) || !is(div!.in[1], sum!.out)) return null;
  if (body.results[0] !== div!.out) return null;
  return Math.fround(lit.lit);
}

/** Finds every rewrite of `checked` (see the file's doc). */
export function findRewrites(checked: CheckedProgram): HostRewrites {
  const producer = new Map<string, CheckedEqn>();
  const readers = new Map<string, CheckedEqn[]>();
  for (const e of checked.eqns) {
    const outs = Array.isArray(e.eqn.out) ? (e.eqn.out as string[]) : [e.eqn.out as string];
    for (const o of outs) producer.set(o, e);
    for (const o of new Set(e.eqn.in)) if (!isLiteral(o)) readers.set(o, [...(readers.get(o) ?? []), e]);
  }
  const kept = new Set<string>([...checked.program.results, ...Object.values(checked.program.state)]);
  const onlyReader = (v: string, e: CheckedEqn): boolean => !kept.has(v) && (readers.get(v) ?? []).length === 1 && readers.get(v)![0] === e;
  const found: { out: number; sm: number; biasName: string; view: BiasView; base: Omit<AttentionRewrite, 'bias' | 'shape'>; dims: { B: number; M: number; D: number; N: number; Dv: number; scale: number; kRows: boolean } }[] = [];
  const absorbed = new Set<number>();
  for (const out of checked.eqns) {
    if (out.op !== 'matmul' || isLiteral(out.eqn.in[0]!) || isLiteral(out.eqn.in[1]!)) continue;
    const sm = producer.get(out.eqn.in[0] as string);
    if (sm === undefined || sm.op !== 'row_kernel' || !onlyReader(out.eqn.in[0] as string, out)) continue;
    const body = sm.eqn.attrs['body'] as RowBody | undefined;
    const scale = body === undefined ? null : maskedSoftmaxScale(body);
    if (scale === null || sm.eqn.in.length !== 2 || sm.eqn.in.some((o) => isLiteral(o))) continue;
    const [scoresName, biasName] = sm.eqn.in as [string, string];
    const qk = producer.get(scoresName);
    if (qk === undefined || qk.op !== 'matmul' || !onlyReader(scoresName, sm) || qk.eqn.in.some((o) => isLiteral(o))) continue;
    const [qT, kT] = qk.ins;
    const [sT, bT] = sm.ins;
    const vT = out.ins[1]!;
    // f32 operands of rank 3: q [B, M, D], k [B, D, N], bias [B, M, N], v [B, N, Dv].
    const all = [qT!, kT!, sT!, bT!, vT, out.outs[0]!];
    if (all.some((t) => t.dtype !== 'f32' || t.shape.length !== 3)) continue;
    const [B, M, D] = qT!.shape as [number, number, number];
    const N = kT!.shape[2]!;
    const Dv = vT.shape[2]!;
    if (bT!.shape.join() !== [B, M, N].join() || vT.shape[0] !== B || vT.shape[1] !== N) continue;
    // k as rows [B, N, D] under transpose([0, 2, 1]) (read in place, the transpose absorbed), or [B, D, N].
    const kTr = rowsSource(qk.eqn.in[1] as string, qk, producer, onlyReader);
    const kName = kTr === null ? (qk.eqn.in[1] as string) : (kTr.eqn.in[0] as string);
    const vName = out.eqn.in[1] as string;
    const kCvt = halfSource(kName, kTr ?? qk, producer, onlyReader);
    const vCvt = halfSource(vName, out, producer, onlyReader);
    const half = kCvt !== null && vCvt !== null && kName !== vName;
    found.push({
      out: out.index, sm: sm.index, biasName, view: biasView(biasName, B, M, N, producer, kept),
      base: half
        ? { kind: 'attention', q: qk.eqn.in[0] as string, k: kCvt.eqn.in[0] as string, v: vCvt.eqn.in[0] as string, kv: 'f16' }
        : { kind: 'attention', q: qk.eqn.in[0] as string, k: kName, v: vName, kv: 'f32' },
      dims: { B, M, D, N, Dv, scale, kRows: kTr !== null },
    });
    absorbed.add(qk.index);
    absorbed.add(sm.index);
    if (kTr !== null) absorbed.add(kTr.index);
    if (half) {
      absorbed.add(kCvt.index);
      absorbed.add(vCvt.index);
    }
  }
  // A bias chain (reshape of a broadcast) goes when every reader of the bias is a fused row kernel and
  // the broadcast's only reader is the reshape; otherwise the records read the materialized bias.
  const fusedRows = new Set(found.map((f) => f.sm));
  const at = new Map<number, HostRewrite>();
  for (const f of found) {
    let view = f.view;
    if (view.chain.length > 0) {
      const [reshape, bcast] = view.chain as [CheckedEqn, CheckedEqn];
      const strided = (readers.get(f.biasName) ?? []).every((e) => fusedRows.has(e.index)) && onlyReader(reshape.eqn.in[0] as string, reshape);
      if (strided) {
        absorbed.add(reshape.index);
        absorbed.add(bcast.index);
      } else {
        view = materialized(f.biasName, f.dims.M, f.dims.N);
      }
    }
    const { B, M, D, N, Dv, scale, kRows } = f.dims;
    at.set(f.out, { ...f.base, bias: view.read, shape: { B, M, D, N, Dv, scale, bB: view.bB, bG: view.bG, bRow: view.bRow, kRows } });
  }
  for (const e of checked.eqns) {
    const rope = ropeAt(e, producer, readers, kept);
    if (rope === null) continue;
    at.set(e.index, rope.rewrite);
    for (const i of rope.absorbed) absorbed.add(i);
  }
  return { at, absorbed };
}

/** The transpose([0, 2, 1]) of a rank-3 value producing `name` when `reader` is its only reader, else null. */
function rowsSource(name: string, reader: CheckedEqn, producer: Map<string, CheckedEqn>, onlyReader: (v: string, e: CheckedEqn) => boolean): CheckedEqn | null {
  const t = producer.get(name);
  if (t === undefined || t.op !== 'transpose' || isLiteral(t.eqn.in[0]!) || !onlyReader(name, reader)) return null;
  const perm = t.eqn.attrs['perm'] as readonly number[];
  return perm.join() === '0,2,1' ? t : null;
}

/** The convert(f16 -> f32) producing `name` when `reader` is its only reader, else null. */
function halfSource(name: string, reader: CheckedEqn, producer: Map<string, CheckedEqn>, onlyReader: (v: string, e: CheckedEqn) => boolean): CheckedEqn | null {
  const c = producer.get(name);
  if (c === undefined || c.op !== 'convert' || isLiteral(c.eqn.in[0]!) || !onlyReader(name, reader)) return null;
  return c.ins[0]!.dtype === 'f16' && c.outs[0]!.dtype === 'f32' ? c : null;
}

/**
 * The neox rope layers.ts's rope() writes, ending at the concat `e`:
 *   x1 = slice(x, [0, 0, 0], [T, H, D/2]), x2 = slice(x, [0, 0, D/2], [T, H, D]),
 *   c = broadcast(cos [T, D/2], [T, H, D/2], [0, 2]), s likewise from sin,
 *   concat([x1*c - x2*s, x2*c + x1*s], 2)
 * (either operand order of each mul and of the add), every value between only read inside the
 * pattern. The `rope` record computes the same two products and one sum per output, so the same bits.
 */
function ropeAt(e: CheckedEqn, producer: Map<string, CheckedEqn>, readers: Map<string, CheckedEqn[]>, kept: Set<string>):
  { rewrite: RopeRewrite; absorbed: number[] } | null {
  if (e.op !== 'concat' || e.eqn.in.length !== 2 || (e.eqn.attrs as { axis: number }).axis !== 2) return null;
  const out = e.outs[0]!;
  if (out.dtype !== 'f32' || out.shape.length !== 3 || out.shape[2]! % 2 !== 0) return null;
  const [T, H, D] = out.shape as [number, number, number];
  const half = D / 2;
  const by = (o: Operand | undefined, op: string): CheckedEqn | null => {
    if (o === undefined || isLiteral(o)) return null;
    const p = producer.get(o);
    return p !== undefined && p.op === op && !kept.has(o) ? p : null;
  };
  const y1 = by(e.eqn.in[0], 'sub');
  const y2 = by(e.eqn.in[1], 'add');
  if (y1 === null || y2 === null) return null;
  const muls = [...y1.eqn.in, ...y2.eqn.in].map((o) => by(o, 'mul'));
  if (muls.some((m) => m === null)) return null;
  // Each mul's operands: one slice of x (lo or hi half) and one broadcast table (cos or sin).
  type Term = { half: 'lo' | 'hi'; table: string; tableKind?: string; slice: CheckedEqn; bcast: CheckedEqn };
  // Set inside termOf(): a `let x: string | null = null` would read as always null after the calls.
  let x = null as string | null;
  const termOf = (m: CheckedEqn): Term | null => {
    for (const [a, b] of [[0, 1], [1, 0]] as const) {
      const sl = by(m.eqn.in[a], 'slice');
      const bc = by(m.eqn.in[b], 'broadcast');
      if (sl === null || bc === null || isLiteral(sl.eqn.in[0]!) || isLiteral(bc.eqn.in[0]!)) continue;
      const at = sl.eqn.attrs as { start: readonly number[]; limit: readonly number[]; stride?: readonly number[] };
      if (sl.ins[0]!.shape.join() !== [T, H, D].join() || (at.stride ?? [1, 1, 1]).some((v) => v !== 1)) continue;
      const lo = at.start.join() === '0,0,0' && at.limit.join() === [T, H, half].join();
      const hi = at.start.join() === [0, 0, half].join() && at.limit.join() === [T, H, D].join();
      const bat = bc.eqn.attrs as { shape: readonly number[]; dims: readonly number[] };
      if ((!lo && !hi) || bc.ins[0]!.shape.join() !== [T, half].join() || bat.dims.join() !== '0,2' || bc.ins[0]!.dtype !== 'f32') continue;
      const src = sl.eqn.in[0] as string;
      if (x !== null && x !== src) return null;
      x = src;
      return { half: lo ? 'lo' : 'hi', table: bc.eqn.in[0] as string, slice: sl, bcast: bc };
    }
    return null;
  };
  const [a, b, c, d] = muls.map<Term | null>((m) => termOf(m!));
  if (a == null || b == null || c == null || d == null || x === null) return null;
  // y1 = x1*cos - x2*sin; y2 = {x2*cos, x1*sin} in either order.
  if (a.half !== 'lo' || b.half !== 'hi') return null;
  const [cT, sT] = [a.table, b.table];
  if (cT === sT) return null;
  const y2ok = (c.half === 'hi' && c.table === cT && d.half === 'lo' && d.table === sT) || (c.half === 'lo' && c.table === sT && d.half === 'hi' && d.table === cT);
  if (!y2ok) return null;
  const inside = new Set<number>([y1.index, y2.index, ...muls.map((m) => m!.index), ...[a, b, c, d].flatMap((t) => [t.slice.index, t.bcast.index])]);
  // Every value between x and the concat is read only inside the pattern.
  for (const i of inside) {
    const eq = [y1, y2, ...muls.map((m) => m!), ...[a, b, c, d].flatMap((t) => [t.slice, t.bcast])].find((q) => q.index === i)!;
    const o = eq.eqn.out as string;
    if (kept.has(o) || (readers.get(o) ?? []).some((r) => r.index !== e.index && !inside.has(r.index))) return null;
  }
  return { rewrite: { kind: 'rope', x, cos: cT, sin: sT, T, H, D }, absorbed: [...inside] };
}

interface BiasView {
  readonly read: string;
  readonly bB: number;
  readonly bG: number;
  readonly bRow: number;
  /** The reshape and broadcast read through (absorbed when nothing else needs the bias), or none. */
  readonly chain: readonly CheckedEqn[];
}

const materialized = (name: string, M: number, N: number): BiasView => ({ read: name, bB: M * N, bG: 1, bRow: N, chain: [] });

/**
 * Where the bias of row m of head b lies: `read` + (b*bB + floor(m/bG)*bRow + j) elements. Through
 * reshape(broadcast(x [T, N] or [B?, T, N] -> [B, T, G, N])) -> [B, T*G, N], x itself with strides (and
 * `chain`, the two equations, may be absorbed); otherwise the bias [B, M, N] as it is.
 */
function biasView(name: string, B: number, M: number, N: number, producer: Map<string, CheckedEqn>, kept: Set<string>): BiasView {
  const plain = materialized(name, M, N);
  const reshape = producer.get(name);
  if (reshape === undefined || reshape.op !== 'reshape' || isLiteral(reshape.eqn.in[0]!) || kept.has(name)) return plain;
  const bcast = producer.get(reshape.eqn.in[0] as string);
  if (bcast === undefined || bcast.op !== 'broadcast' || isLiteral(bcast.eqn.in[0]!) || kept.has(reshape.eqn.in[0] as string)) return plain;
  const shape = bcast.outs[0]!.shape;
  if (shape.length !== 4 || shape[0] !== B || shape[1]! * shape[2]! !== M || shape[3] !== N) return plain;
  const x = bcast.ins[0]!;
  const dims = bcast.eqn.attrs['dims'] as readonly number[];
  // The source's element stride along each output dim (0 where broadcast).
  const strides = [0, 0, 0, 0];
  let s = 1;
  for (let i = x.shape.length - 1; i >= 0; i--) {
    if (x.shape[i] !== 1) strides[dims[i]!] = s;
    s *= x.shape[i]!;
  }
  // The kernel reads N contiguous elements per row, rows grouped by G along the second dim.
  if (strides[3] !== 1 && N > 1) return plain;
  if (strides[2] !== 0 && shape[2] !== 1) return plain;
  const G = shape[2]!;
  return { read: bcast.eqn.in[0] as string, bB: strides[0]!, bG: G, bRow: strides[1]!, chain: [reshape, bcast] };
}
