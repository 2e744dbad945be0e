/**
 * Lowers a checked program to one kernel list over one arena (kernelList.ts's format): every element
 * arg, literal and equation output gets its own aligned slot (a reshape shares its operand's: the same
 * bytes, no kernel; a KV cache update in place its state's), a quantized weight an index into the
 * weight table the device builds from its binding. An equation outside what is lowered here is
 * refused with CapabilityMissing naming `host.<op>`, never run some other way.
 */
import { CapabilityMissing } from '../../errors/index.js';
import type { CheckedEqn, CheckedProgram } from '../../ir/checked.js';
import { isLiteral, isQuantized, numel, storageBytes } from '../../ir/types.js';
import type { AnyType, OpName } from '../../ir/ops.js';
import type { BinaryOp, UnaryOp } from '../../ops/elementwise.js';
import { rmsnormOf } from '../../targets/host/rmsnorm.js';
import { rowBodyOf } from '../../targets/host/rowBody.js';
import { lowerRowBody, type RowBodySlots } from './rowKernel.js';
import { lowerMovement } from './movement.js';
import { lowerGather, lowerReduce } from './axes.js';
import { ArenaPlan } from './arena.js';
import { encodeKernels, HOST_Q8_WEIGHTS, type HostMatmulClass, type HostWeightType, type KernelCall } from './kernelList.js';
import { findRewrites, readsOf } from './rewrite.js';

/** The dtypes a literal constant is written in. */
export type HostConstantDtype = 'f32' | 'i32' | 'f16' | 'bf16';

/** A host program: its arena's size, the slot of every named value, its weight table and its kernels. */
export interface HostLowered {
  readonly arenaBytes: number;
  readonly slots: Readonly<Record<string, number>>;
  /** Literal constants to write into the arena once: [offset, dtype, value] (rounded to the dtype as the oracle does). */
  readonly constants: readonly (readonly [number, HostConstantDtype, number])[];
  /** Quantized weights in table order: arg name, type, K, N. */
  readonly weights: readonly { readonly name: string; readonly type: HostWeightType; readonly k: number; readonly n: number }[];
  readonly list: Float64Array;
}

/**
 * Lowers `checked`; CapabilityMissing for an equation no kernel here computes. The rewrites of
 * rewrite.ts (fused attention) apply first, unless `fuse` is false. `matmul` picks the numerics class
 * of a matmul by a quantized weight: `matmul_w` (exact, the default) or `matmul_wq` (q8 activations,
 * for the weight types of HOST_Q8_WEIGHTS; the others stay `matmul_w`). Args, constants,
 * results and states' next values keep their slots for the whole step; any other value's slot (and an
 * equation's scratch) is handed out again once its last reader has run (arena.ts).
 */
export function lowerHost(checked: CheckedProgram, options: { readonly fuse?: boolean; readonly matmul?: HostMatmulClass } = {}): HostLowered {
  const arena = new ArenaPlan();
  const slots: Record<string, number> = {};
  const constants: [number, HostConstantDtype, number][] = [];
  const weights: { name: string; type: HostWeightType; k: number; n: number }[] = [];
  const weightIndex = new Map<string, number>();
  const place = (bytes: number): number => arena.alloc(bytes);
  const experts = expertArgs(checked);
  for (const a of checked.program.args) {
    if (isQuantized(a.dtype) || experts.has(a.name)) {
      // A weight the kernels read in place: N rows of K (an expert weight [E, N, K]: its E·N rows).
      weightIndex.set(a.name, weights.length);
      const k = a.shape[a.shape.length - 1]!;
      weights.push({ name: a.name, type: a.dtype as HostWeightType, k, n: numel(a.shape) / k });
    } else {
      slots[a.name] = place(storageBytes(a.dtype, a.shape));
    }
  }
  const q8 = (options.matmul ?? 'exact') === 'q8';
  const q8Of = (w: number): boolean => q8 && (HOST_Q8_WEIGHTS as readonly string[]).includes(weights[w]!.type);
  const matmulOp = (w: number): 'matmul_w' | 'matmul_wq' => (q8Of(w) ? 'matmul_wq' : 'matmul_w');
  const matmulIdOp = (w: number): 'matmul_id' | 'matmul_idq' => (q8Of(w) ? 'matmul_idq' : 'matmul_id');
  const calls: KernelCall[] = [];
  const inPlace = inPlaceUpdates(checked);
  // Rewrites first (rewrite.ts): an absorbed equation reads nothing and gets no slot, a fused record reads its own operands.
  // `fuse: false` (tests: the unfused lowering to compare with) lowers every equation as it is.
  const rewrites = options.fuse === false ? { at: new Map(), absorbed: new Set<number>() } : findRewrites(checked);
  // A reshape of a value in the arena is the same bytes: its result takes its operand's slot (no copy).
  const alias = (e: CheckedEqn): boolean => aliased(e) && !rewrites.at.has(e.index);
  const lastRead = new Map<string, number>();
  for (const e of checked.eqns) for (const o of readsOf(e, rewrites)) lastRead.set(o, e.index);
  const kept = new Set<string>([...checked.program.args.map((a) => a.name), ...checked.program.results, ...Object.values(checked.program.state)]);
  // Which values share a slot (an update in place writes its operand's, a reshape is its operand's):
  // a slot is freed with its last holder, and never while a kept value (arg, result, state) holds it.
  const holders = new Map<number, number>();
  const pinned = new Set<number>(Object.values(slots));
  const free = (v: string): void => {
    if (kept.has(v) || slots[v] === undefined) return;
    const at = slots[v]!;
    const left = (holders.get(at) ?? 1) - 1;
    holders.set(at, left);
    if (left === 0 && !pinned.has(at)) arena.release(at);
  };
  for (const e of checked.eqns) {
    if (rewrites.absorbed.has(e.index)) continue;
    const outs = Array.isArray(e.eqn.out) ? (e.eqn.out as string[]) : [e.eqn.out as string];
    outs.forEach((o, k) => {
      slots[o] = inPlace.has(e.index) || alias(e) ? slots[e.eqn.in[0] as string]! : place(storageBytes(e.outs[k]!.dtype, e.outs[k]!.shape));
      holders.set(slots[o]!, (holders.get(slots[o]!) ?? 0) + 1);
      if (kept.has(o)) pinned.add(slots[o]!);
    });
    const scratch: number[] = [];
    const temp = (bytes: number): number => { const at = place(bytes); scratch.push(at); return at; };
    const operand = (k: number): number => {
      const o = e.eqn.in[k]!;
      if (!isLiteral(o)) return slots[o]!;
      const at = arena.alloc(4, true);
      const d = e.ins[k]!.dtype;
      constants.push([at, d === 'i32' || d === 'f16' || d === 'bf16' ? d : 'f32', o.lit]);
      return at;
    };
    const weight = (k: number): number | undefined => {
      const o = e.eqn.in[k]!;
      return isLiteral(o) ? undefined : weightIndex.get(o);
    };
    const io: RowBodySlots = {
      at: operand, out: (k) => slots[outs[k]!]!, place: temp,
      literal: (v, d = 'f32') => { const at = arena.alloc(4, true); constants.push([at, d, v]); return at; },
    };
    const fused = rewrites.at.get(e.index);
    if (fused?.kind === 'attention') {
      calls.push({ op: fused.kv === 'f16' ? 'attention_f16' : 'attention', eqn: e.index, q: slots[fused.q]!, k: slots[fused.k]!, v: slots[fused.v]!, bias: slots[fused.bias]!, y: slots[outs[0]!]!, ...fused.shape });
    } else if (fused?.kind === 'rope') {
      // The tables hold one row per token: the record's positions are 0..T-1.
      const { T, H, D } = fused;
      const pos = temp(4 * T);
      calls.push({ op: 'iota', eqn: e.index, y: pos, i32: true, n: T, dim: Math.max(1, T), stride: 1 });
      calls.push({ op: 'rope', eqn: e.index, x: slots[fused.x]!, y: slots[outs[0]!]!, T, H, D, rd: D, pos, cos: slots[fused.cos]!, sin: slots[fused.sin]!, maxPos: Math.max(1, T) });
    } else if (!alias(e)) {
      calls.push(...LOWERINGS[e.op](e, { io, weight, matmulOp, matmulIdOp }));
    }
    // Freed only now, so an equation's output never shares bytes with its own inputs or scratch.
    for (const at of scratch) arena.release(at);
    for (const o of new Set(readsOf(e, rewrites))) if (lastRead.get(o) === e.index) free(o);
    for (const o of outs) if (!lastRead.has(o)) free(o);
  }
  return { arenaBytes: arena.bytes, slots, constants, weights, list: encodeKernels(calls) };
}

/**
 * The dynamic_update_slice equations that may write into their operand's slot: the operand is a state
 * arg whose next value is this update's result and that nothing reads afterwards (a KV cache written
 * at one position). Its slot then holds the next state after the step, and the host device carries it
 * there without a copy (src/devices/host/device.ts).
 */
function inPlaceUpdates(checked: CheckedProgram): Set<number> {
  // A reshape's result is its operand's bytes (aliased): a state is read last where the last of the
  // values sharing its bytes is read, and none of them may be a result or a state's next value.
  const root = new Map<string, string>();
  const rootOf = (v: string): string => root.get(v) ?? v;
  for (const e of checked.eqns) if (aliased(e)) root.set(e.eqn.out as string, rootOf(e.eqn.in[0] as string));
  const lastRead = new Map<string, number>();
  for (const e of checked.eqns) for (const o of e.eqn.in) if (!isLiteral(o)) lastRead.set(rootOf(o), e.index);
  const late = new Set<string>([...checked.program.results, ...[...root.keys()].filter((v) => Object.values(checked.program.state).includes(v))].map(rootOf));
  const found = new Set<number>();
  for (const e of checked.eqns) {
    if (e.op !== 'dynamic_update_slice' || e.ins[0]!.shape.length === 0) continue;
    const x = e.eqn.in[0] as string;
    if (checked.program.state[x] !== e.eqn.out || late.has(x) || lastRead.get(x) !== e.index) continue;
    // Its other operands must not be the state itself (an update of the cache by the cache, or by a reshape of it).
    if (e.eqn.in.slice(1).some((o) => !isLiteral(o) && rootOf(o) === x)) continue;
    found.add(e.index);
  }
  return found;
}

/**
 * The float args that are read only as matmul_id's experts: in the weight table (read in place, each
 * chosen expert's rows only), not copied into the arena. A quantized weight is always in the table.
 */
function expertArgs(checked: CheckedProgram): Set<string> {
  const args = new Set(checked.program.args.filter((a) => !isQuantized(a.dtype) && (HOST_DENSE_WEIGHTS as readonly string[]).includes(a.dtype)).map((a) => a.name));
  const asExperts = new Set<string>();
  const elsewhere = new Set<string>();
  for (const e of checked.eqns) {
    e.eqn.in.forEach((o, k) => {
      if (isLiteral(o) || !args.has(o)) return;
      if (e.op === 'matmul_id' && k === 1) asExperts.add(o);
      else elsewhere.add(o);
    });
  }
  for (const r of [...checked.program.results, ...Object.keys(checked.program.state), ...Object.values(checked.program.state)]) elsewhere.add(r);
  return new Set([...asExperts].filter((a) => !elsewhere.has(a)));
}

/** The float dtypes a weight of the table may have (the addon's f32, f16 and bf16 rows). */
const HOST_DENSE_WEIGHTS = ['f32', 'f16', 'bf16'] as const;

/** A reshape whose operand has a slot in the arena: lowered as an alias of that slot, not a copy. */
function aliased(e: CheckedEqn): boolean {
  return e.op === 'reshape' && !isLiteral(e.eqn.in[0]!) && !isQuantized(e.ins[0]!.dtype);
}

function refused(e: CheckedEqn, what: string = e.op): never {
  throw new CapabilityMissing(e.index, e.op, `host.${what}`);
}

const n = (t: AnyType): number => numel(t.shape);

/** What one equation's lowering is given: its slots, its weights and the matmul class. */
interface LowerCtx {
  readonly io: RowBodySlots;
  /** The weight-table index of input `k` when it is a quantized weight. */
  readonly weight: (k: number) => number | undefined;
  readonly matmulOp: (w: number) => 'matmul_w' | 'matmul_wq';
  readonly matmulIdOp: (w: number) => 'matmul_id' | 'matmul_idq';
}

/** How one op is lowered: the kernels of an equation, or a CapabilityMissing refusal naming what is missing. */
type Lowering = (e: CheckedEqn, c: LowerCtx) => KernelCall[];

function binary(e: CheckedEqn, { io }: LowerCtx): KernelCall[] {
  const [a, b] = e.ins as [AnyType, AnyType];
  const aScalar = n(a) === 1 && n(e.outs[0]!) !== 1;
  const bScalar = n(b) === 1 && n(e.outs[0]!) !== 1;
  if ((!aScalar && n(a) !== n(e.outs[0]!)) || (!bScalar && n(b) !== n(e.outs[0]!))) refused(e, `${e.op}.shape`);
  const args = { eqn: e.index, fn: e.op as BinaryOp, a: io.at(0), b: io.at(1), y: io.out(0), n: n(e.outs[0]!), aScalar, bScalar };
  if (a.dtype === 'f32') return [{ op: 'binary', ...args }];
  if (a.dtype === 'i32') return [{ op: 'binary_i32', ...args }];
  if (a.dtype === 'f16' || a.dtype === 'bf16') return [{ op: 'binary_t', dtype: a.dtype, ...args }];
  return refused(e, `${e.op}.${a.dtype}`);
}

function unary(e: CheckedEqn, { io }: LowerCtx): KernelCall[] {
  const d = e.ins[0]!.dtype;
  const args = { eqn: e.index, fn: e.op as UnaryOp, x: io.at(0), y: io.out(0), n: n(e.outs[0]!) };
  if (d === 'f32') return [{ op: 'unary', ...args }];
  if (d === 'f16' || d === 'bf16' || (d === 'i32' && (e.op === 'neg' || e.op === 'abs'))) return [{ op: 'unary_t', dtype: d, ...args }];
  return refused(e, `${e.op}.${d}`);
}

function iota(e: CheckedEqn, { io }: LowerCtx): KernelCall[] {
  const out = e.outs[0]!;
  const d = (e.eqn.attrs as { dimension: number }).dimension;
  const stride = numel(out.shape.slice(d + 1));
  const call = (to: number, i32: boolean): KernelCall => ({ op: 'iota', eqn: e.index, y: to, i32, n: n(out), dim: Math.max(1, out.shape[d] ?? 1), stride: Math.max(1, stride) });
  if (out.dtype === 'f32' || out.dtype === 'i32') return [call(io.out(0), out.dtype === 'i32')];
  if (out.dtype !== 'f16' && out.dtype !== 'bf16') return refused(e, `iota.${out.dtype}`);
  // The exact f32 indices rounded once to the dtype, as the oracle rounds each index.
  const wide = io.place(4 * n(out));
  return [call(wide, false), { op: 'convert', eqn: e.index, from: 'f32', to: out.dtype, x: wide, y: io.out(0), n: n(out) }];
}

function matmul(e: CheckedEqn, { io, weight, matmulOp }: LowerCtx): KernelCall[] {
  const x = e.ins[0]!;
  const w = weight(1);
  if (w !== undefined) return [{ op: matmulOp(w), eqn: e.index, x: io.at(0), y: io.out(0), T: x.shape[0]!, w }];
  const b = e.ins[1]!;
  const r = x.shape.length;
  const dims = { batch: numel(x.shape.slice(0, r - 2)), M: x.shape[r - 2]!, K: x.shape[r - 1]!, N: b.shape[r - 1]! };
  const args = { eqn: e.index, a: io.at(0), b: io.at(1), y: io.out(0), ...dims };
  if (x.dtype === 'f32') return [{ op: 'matmul', ...args }];
  if (x.dtype === 'f16' || x.dtype === 'bf16' || x.dtype === 'i32') return [{ op: 'matmul_t', dtype: x.dtype, ...args }];
  return refused(e, `matmul.${x.dtype}`);
}

/** matmul_id by a weight of the table (experts computed in the program, not an arg, are refused). */
function matmulId(e: CheckedEqn, { io, weight, matmulIdOp }: LowerCtx): KernelCall[] {
  const w = weight(1);
  if (w === undefined) return refused(e, 'matmul_id.arena');
  const [T, B] = e.ins[0]!.shape as [number, number, number];
  const [, S, N] = e.outs[0]!.shape as [number, number, number];
  return [{ op: matmulIdOp(w), eqn: e.index, x: io.at(0), ids: io.at(2), y: io.out(0), T, S, B, N, w }];
}

function convert(e: CheckedEqn, { io, weight }: LowerCtx): KernelCall[] {
  const x = e.ins[0]!;
  const w = weight(0);
  if (w !== undefined) return [{ op: 'dequant', eqn: e.index, w, row0: 0, rows: x.shape[0]!, y: io.out(0) }];
  if (isQuantized(x.dtype)) return refused(e);
  return [{ op: 'convert', eqn: e.index, from: x.dtype, to: e.outs[0]!.dtype, x: io.at(0), y: io.out(0), n: n(x) }];
}

function gather(e: CheckedEqn, { io, weight }: LowerCtx): KernelCall[] {
  const w = weight(0);
  if (w !== undefined) return [{ op: 'gather', eqn: e.index, w, idx: io.at(1), y: io.out(0), count: n(e.ins[1]!) }];
  // A table in the arena (an f32, f16 or bf16 weight, or a computed value): rows copied by index.
  return lowerGather(e, io.at(0), io.at(1), io.out(0), io.place);
}

function rowKernel(e: CheckedEqn, { io }: LowerCtx): KernelCall[] {
  const x = e.ins[0]!;
  // The RMSNorm kernel is f32; a body of other rows runs step by step on the typed kernels.
  const r = x.dtype === 'f32' ? rmsnormOf(e) : null;
  // Rows from the leading dims, so a row of zero elements still counts its rows.
  const rows = numel(x.shape.slice(0, -1));
  const C = x.shape[x.shape.length - 1] ?? 1;
  if (r !== null) return [{ op: 'rmsnorm', eqn: e.index, x: io.at(r.x), g: io.at(r.g), y: io.out(0), rows, C, eps: r.eps }];
  const plan = rowBodyOf(e);
  if (plan === null) return refused(e, 'row_kernel.body');
  return lowerRowBody(e, plan, io);
}

function update(e: CheckedEqn, { io }: LowerCtx): KernelCall[] {
  const x = e.ins[0]!;
  const y = io.out(0);
  const bytes = storageBytes(x.dtype, x.shape);
  const u = e.ins[1]!;
  if (x.shape.length === 0) return [{ op: 'copy', eqn: e.index, x: io.at(1), y, bytes }];
  // The kernel updates in place and reads its starts as one i32 array: copy both into place first.
  const starts = io.place(4 * x.shape.length);
  // An update in place (inPlaceUpdates) finds its operand already in its slot.
  const calls: KernelCall[] = io.at(0) === y ? [] : [{ op: 'copy', eqn: e.index, x: io.at(0), y, bytes }];
  x.shape.forEach((_, k) => calls.push({ op: 'copy', eqn: e.index, x: io.at(2 + k), y: starts + 4 * k, bytes: 4 }));
  calls.push({ op: 'update', eqn: e.index, dst: y, upd: io.at(1), starts, elem: storageBytes(x.dtype, [1]), dims: [...x.shape], update: [...u.shape] });
  return calls;
}

const movement: Lowering = (e, { io }) => lowerMovement(e, io.at, io.out(0));
const reduce: Lowering = (e, { io }) => lowerReduce(e, io.at(0), io.out(0), io.place);
/** A reshape that is not an alias (aliased): its bytes copied into its own slot. */
const reshape: Lowering = (e, { io }) => [{ op: 'copy', eqn: e.index, x: io.at(0), y: io.out(0), bytes: storageBytes(e.outs[0]!.dtype, e.outs[0]!.shape) }];
/** An op the host has no kernel for: refused, naming it. */
const none: Lowering = (e) => refused(e);

/**
 * Every op's lowering. The mapped type over OpName makes a new op refuse to compile until it has a row
 * here: a kernel, or `none`, the refusal a planner reads as `host.<op>`.
 */
const LOWERINGS: { readonly [P in OpName]: Lowering } = {
  add: binary, sub: binary, mul: binary, div: binary, max: binary, min: binary, ge: binary,
  neg: unary, recip: unary, exp: unary, log: unary, tanh: unary, erf: unary, sqrt: unary, rsqrt: unary, abs: unary,
  logistic: unary, sin: unary, cos: unary,
  convert, reduce_sum: reduce, reduce_max: reduce, matmul, gather, reshape,
  transpose: movement, broadcast: movement, slice: movement, concat: movement,
  iota, dynamic_update_slice: update, row_kernel: rowKernel, all_reduce: none, matmul_id: matmulId,
};
