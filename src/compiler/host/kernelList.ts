/**
 * The `host` target's artifact format, shared by its compiler (which writes kernel lists) and its
 * device (which replays them through the host_kernels addon): a step is a Float64Array of records
 * `[op, eqn, ...fields]` over byte offsets into one arena and indices into a weight table, run by
 * one native call. The numbering here is the addon's ABI (src/native/host/list.h, wtypes.h, ops.h);
 * unary and binary ops and dtypes are numbered in the op table's own order. The addon reports its own
 * numbering (abi()), and the host device refuses a build whose numbering differs (abiMismatches).
 * docs/HOST.md describes every record.
 */
import { InvalidInput } from '../../errors/index.js';
import { DTYPES, type DType } from '../../ir/types.js';
import { BINARY_OPS, UNARY_OPS, type BinaryOp, type UnaryOp } from '../../ops/elementwise.js';

/** Weight storage types: ggml's block layouts and Q4NX's 5120-byte q4_1 tile, byte for byte. */
export const HOST_WEIGHT_TYPES = ['f32', 'f16', 'bf16', 'q4_0', 'q4_1', 'q8_0', 'q4_k', 'q6_k', 'q4nx_q41'] as const;
export type HostWeightType = (typeof HOST_WEIGHT_TYPES)[number];

/** Elements per block along K and bytes per block; a q4nx tile is 32 rows x 256 columns in 5120 bytes. */
const WEIGHT_BLOCKS = {
  f32: { elems: 1, bytes: 4 },
  f16: { elems: 1, bytes: 2 },
  bf16: { elems: 1, bytes: 2 },
  q4_0: { elems: 32, bytes: 18 },
  q4_1: { elems: 32, bytes: 20 },
  q8_0: { elems: 32, bytes: 34 },
  q4_k: { elems: 256, bytes: 144 },
  q6_k: { elems: 256, bytes: 210 },
  q4nx_q41: { elems: 256, bytes: 5120 },
} as const satisfies Record<HostWeightType, { readonly elems: number; readonly bytes: number }>;

/** The addon's id of a weight type. */
export function weightTypeId(t: HostWeightType): number {
  return HOST_WEIGHT_TYPES.indexOf(t);
}

/**
 * The bytes a weight of `type` with N rows of K elements occupies (a GGUF tensor of ne0 = K, ne1 = N;
 * a Q4NX grid of ceil(N/32) x ceil(K/256) tiles). A K that is not a whole number of blocks is
 * refused: no file of that type can hold the shape.
 */
export function hostWeightBytes(type: HostWeightType, k: number, n: number, at = 'weight'): number {
  if (!Number.isSafeInteger(k) || !Number.isSafeInteger(n) || k <= 0 || n <= 0) {
    throw new InvalidInput(at, `a ${type} weight has K and N >= 1, got [K=${k}, N=${n}]`);
  }
  const b = WEIGHT_BLOCKS[type];
  if (type === 'q4nx_q41') return Math.ceil(k / 256) * Math.ceil(n / 32) * b.bytes;
  if (k % b.elems !== 0) throw new InvalidInput(at, `K=${k} is not a whole number of ${type} blocks of ${b.elems}`);
  return (k / b.elems) * b.bytes * n;
}

/**
 * The numerics class of a matmul by a quantized weight (docs/HOST.md): `exact` (matmul_w, f32
 * activations, within γ(K+2)) or `q8` (matmul_wq, activations quantized per block of 32; faster
 * prefill, its own bound, batch-invariant). Part of the host artifact's identity.
 */
export type HostMatmulClass = 'exact' | 'q8';
export const HOST_MATMUL_CLASSES = ['exact', 'q8'] as const satisfies readonly HostMatmulClass[];

/**
 * The weight types the q8 class lowers to matmul_wq: those whose tiles every SIMD path unpacks fast
 * (AVX-512 loads and shuffles, AVX2 gathers). matmul_wq computes q4_k, q6_k and q4nx_q41 correctly too
 * (tested), but AVX2 (and every path for q4nx) unpacks them with scalar code that decodes about 15
 * times slower than matmul_w, so the lowering keeps them on matmul_w in either class for now.
 */
export const HOST_Q8_WEIGHTS = ['q4_0', 'q4_1', 'q8_0'] as const satisfies readonly HostWeightType[];

/** The fields of each kernel, after [op, eqn]; offsets are bytes into the arena. */
export interface KernelArgs {
  /** y [T, N] = x [T, K] times weight `w` (f32 activations, any weight type). */
  matmul_w: { x: number; y: number; T: number; w: number };
  /** The op table's f32 matmul: y [batch, M, N] = a [batch, M, K] x b [batch, K, N]. */
  matmul: { a: number; b: number; y: number; batch: number; M: number; K: number; N: number };
  /** y = x * (1 / sqrt(mean(x^2) + eps)) * g per row of C; g is one shared row. */
  rmsnorm: { x: number; g: number; y: number; rows: number; C: number; eps: number };
  /** Per row: e = exp(x - max), y = e / sum(e). */
  softmax: { x: number; y: number; rows: number; C: number };
  row_sum: { x: number; y: number; rows: number; C: number };
  row_max: { x: number; y: number; rows: number; C: number };
  /** y = exp(x - m[row]). */
  exp_sub: { x: number; m: number; y: number; rows: number; C: number };
  /** y = x * s[row]. */
  row_scale: { x: number; s: number; y: number; rows: number; C: number };
  /** Neox rope over x [T, H, D] with the first rd dims rotated; cos, sin [maxPos, rd/2]; pos i32 [T]. */
  rope: { x: number; y: number; T: number; H: number; D: number; rd: number; pos: number; cos: number; sin: number; maxPos: number };
  /** y [count, K] = rows idx (i32 [count]) of weight `w`, as f32. */
  gather: { w: number; idx: number; y: number; count: number };
  /** y [rows, K] = rows [row0, row0 + rows) of weight `w`, as f32 (convert of a weight). */
  dequant: { w: number; row0: number; rows: number; y: number };
  /** dynamic_update_slice in place: upd (dims `update`) into dst (dims `dims`) at i32 starts; elem bytes 1, 2 or 4. */
  update: { dst: number; upd: number; starts: number; elem: number; dims: readonly number[]; update: readonly number[] };
  unary: { fn: UnaryOp; x: number; y: number; n: number };
  /** f32 operands; `ge` writes bools (1 byte). A scalar operand is read at index 0. */
  binary: { fn: BinaryOp; a: number; b: number; y: number; n: number; aScalar?: boolean; bScalar?: boolean };
  binary_i32: { fn: BinaryOp; a: number; b: number; y: number; n: number; aScalar?: boolean; bScalar?: boolean };
  convert: { from: DType; to: DType; x: number; y: number; n: number };
  copy: { x: number; y: number; bytes: number };
  /** matmul with b stored transposed, [batch, N, K] (keys as a KV cache holds them). */
  matmul_bt: { a: number; b: number; y: number; batch: number; M: number; K: number; N: number };
  /**
   * y[i...] = x[i...] over `dims` (rank <= 4), with element strides `xStrides` and `yStrides` (>= 0):
   * transpose, slice, broadcast (stride 0), concat; elements of 1, 2, 4 or 8 bytes.
   */
  copy_strided: { x: number; y: number; elem: number; dims: readonly number[]; xStrides: readonly number[]; yStrides: readonly number[] };
  /** y [count, row] = rows idx (i32 [count]) of a table x [rows, row] in the arena, rowBytes each, byte for byte. */
  gather_rows: { x: number; idx: number; y: number; count: number; rows: number; rowBytes: number };
  /** y[i] = (i / stride) % dim, as f32 or i32: each element's index along one dimension. */
  iota: { y: number; i32: boolean; n: number; dim: number; stride: number };
  /** f16 or bf16 (i32: neg and abs) elementwise: each element in f64 from its operand, rounded once (typed.cc). */
  unary_t: { fn: UnaryOp; dtype: DType; x: number; y: number; n: number };
  /** f16, bf16 or i32 operands, computed in f64 (i32 wrapping) and rounded once; `ge` writes bools. */
  binary_t: { fn: BinaryOp; dtype: DType; a: number; b: number; y: number; n: number; aScalar?: boolean; bScalar?: boolean };
  /** y[r] = sum or max of row r of x [rows, C] in f16, bf16 or i32, accumulated in f64 in index order, rounded once. */
  reduce_t: { max: boolean; dtype: DType; x: number; y: number; rows: number; C: number };
  /** y [batch, M, N] = a [batch, M, K] x b [batch, K, N] in f16, bf16 or i32: f64 dot products in k order, rounded once. */
  matmul_t: { dtype: DType; a: number; b: number; y: number; batch: number; M: number; K: number; N: number };
  /**
   * Fused attention (src/compiler/host/rewrite.ts): y [B, M, Dv] = softmax(q·k * scale + bias) · v per
   * head b and row m, q [B, M, D], k [B, N, D] with `kRows` (a KV cache's keys, one row per position,
   * read through a transpose) or else [B, D, N], v [B, N, Dv]; the bias of row m of head b is N
   * elements at bias + b*bB + floor(m/bG)*bRow (a broadcast mask read in place). Key positions past the
   * row's last unmasked one (bias <= -1e30) are skipped (docs/HOST.md). k's layout changes no bit of y.
   */
  attention: { q: number; k: number; v: number; bias: number; y: number; B: number; M: number; D: number; N: number; Dv: number; scale: number; bB: number; bG: number; bRow: number; kRows: boolean };
  /**
   * matmul_w in the q8-activations class (docs/HOST.md, "q8 activations"): each row of x quantized per
   * block of 32 to int8 with an f32 scale, integer dot products with the weight's codes; each output
   * the same bits whatever T and the other rows. f32, f16 and bf16 weights compute as matmul_w.
   */
  matmul_wq: { x: number; y: number; T: number; w: number };
  /**
   * attention over an f16 KV cache: k and v hold f16 bits, each converted to f32 exactly (vcvtph2ps on
   * AVX2 / AVX-512) before use, so the result is `attention` of convert(k), convert(v) bit for bit.
   */
  attention_f16: KernelArgs['attention'];
  /**
   * matmul_id (ops/matmulId.ts): y [T, S, N] = x [T, B, K] (B = 1 or S) times the experts ids (i32
   * [T, S]) choose of weight `w`, E experts of N rows each (the weight's rows, N·E, in expert order).
   * Every id is checked first (an IndexOutOfRange naming the equation); each chosen expert's rows are
   * read once per step, for all the token slots that chose it (matmul_w's kernels over that expert).
   */
  matmul_id: { x: number; ids: number; y: number; T: number; S: number; B: number; N: number; w: number };
  /** matmul_id in the q8-activations class (matmul_wq's kernels over each chosen expert). */
  matmul_idq: KernelArgs['matmul_id'];
}

export type KernelOp = keyof KernelArgs;

/** One kernel call; `eqn` is the equation a data-dependent error names (-1: none). */
export type KernelCall = { [O in KernelOp]: { readonly op: O; readonly eqn?: number } & Readonly<KernelArgs[O]> }[KernelOp];

/** The ops in the addon's numbering. */
export const KERNEL_OPS = [
  'matmul_w', 'matmul', 'rmsnorm', 'softmax', 'row_sum', 'row_max', 'exp_sub', 'row_scale', 'rope',
  'gather', 'dequant', 'update', 'unary', 'binary', 'binary_i32', 'convert', 'copy', 'matmul_bt',
  'copy_strided', 'iota', 'gather_rows', 'unary_t', 'binary_t', 'reduce_t', 'matmul_t', 'attention', 'matmul_wq',
  'attention_f16', 'matmul_id', 'matmul_idq',
] as const satisfies readonly KernelOp[];

/**
 * The names of each op's record words after [op, eqn], in order: the addon's own table
 * (src/native/host/list.h HOST_KERNEL_OPS) must say the same, which the host device checks when it
 * loads the addon (src/devices/host/native.ts) and a test checks against ENCODE.
 */
export const KERNEL_FIELDS: { readonly [O in KernelOp]: readonly string[] } = {
  matmul_w: ['x', 'y', 'T', 'w'],
  matmul: ['a', 'b', 'y', 'batch', 'M', 'K', 'N'],
  rmsnorm: ['x', 'g', 'y', 'rows', 'C', 'eps'],
  softmax: ['x', 'y', 'rows', 'C'],
  row_sum: ['x', 'y', 'rows', 'C'],
  row_max: ['x', 'y', 'rows', 'C'],
  exp_sub: ['x', 'm', 'y', 'rows', 'C'],
  row_scale: ['x', 's', 'y', 'rows', 'C'],
  rope: ['x', 'y', 'T', 'H', 'D', 'rd', 'pos', 'cos', 'sin', 'maxPos'],
  gather: ['w', 'idx', 'y', 'count'],
  dequant: ['w', 'row0', 'rows', 'y'],
  update: ['dst', 'upd', 'starts', 'elem', 'rank', 'd0', 'd1', 'd2', 'd3', 'u0', 'u1', 'u2', 'u3'],
  unary: ['fn', 'x', 'y', 'n'],
  binary: ['fn', 'a', 'b', 'y', 'n', 'aScalar', 'bScalar'],
  binary_i32: ['fn', 'a', 'b', 'y', 'n', 'aScalar', 'bScalar'],
  convert: ['from', 'to', 'x', 'y', 'n'],
  copy: ['x', 'y', 'bytes'],
  matmul_bt: ['a', 'b', 'y', 'batch', 'M', 'K', 'N'],
  copy_strided: ['x', 'y', 'elem', 'rank', 'd0', 'd1', 'd2', 'd3', 'xs0', 'xs1', 'xs2', 'xs3', 'ys0', 'ys1', 'ys2', 'ys3'],
  iota: ['y', 'i32', 'n', 'dim', 'stride'],
  gather_rows: ['x', 'idx', 'y', 'count', 'rows', 'rowBytes'],
  unary_t: ['fn', 'dtype', 'x', 'y', 'n'],
  binary_t: ['fn', 'dtype', 'a', 'b', 'y', 'n', 'aScalar', 'bScalar'],
  reduce_t: ['max', 'dtype', 'x', 'y', 'rows', 'C'],
  matmul_t: ['dtype', 'a', 'b', 'y', 'batch', 'M', 'K', 'N'],
  attention: ['q', 'k', 'v', 'bias', 'y', 'B', 'M', 'D', 'N', 'Dv', 'scale', 'bB', 'bG', 'bRow', 'kRows'],
  matmul_wq: ['x', 'y', 'T', 'w'],
  attention_f16: ['q', 'k', 'v', 'bias', 'y', 'B', 'M', 'D', 'N', 'Dv', 'scale', 'bB', 'bG', 'bRow', 'kRows'],
  matmul_id: ['x', 'ids', 'y', 'T', 'S', 'B', 'N', 'w'],
  matmul_idq: ['x', 'ids', 'y', 'T', 'S', 'B', 'N', 'w'],
};

/** What an addon build reports of its numbering (the addon's abi(), src/native/host/addon.cc). */
export interface HostAbi {
  readonly kernels: readonly { readonly name: string; readonly fields: readonly string[] }[];
  readonly unary: readonly string[];
  readonly binary: readonly string[];
  readonly dtypes: readonly string[];
  readonly weights: readonly string[];
}

/** Where `abi` numbers or lays out anything differently from this file's tables: one line each (none: they agree). */
export function abiMismatches(abi: HostAbi): string[] {
  const out: string[] = [];
  const list = (what: string, got: readonly string[], want: readonly string[]): void => {
    if (got.join() !== want.join()) out.push(`${what}: the addon has [${got.join(', ')}], the compiler [${want.join(', ')}]`);
  };
  list('kernel ops', abi.kernels.map((k) => k.name), KERNEL_OPS);
  for (const [i, op] of KERNEL_OPS.entries()) {
    const k = abi.kernels[i];
    if (k !== undefined && k.name === op) list(`${op}'s fields`, k.fields, KERNEL_FIELDS[op]);
  }
  list('unary ops', abi.unary, UNARY_OPS);
  list('binary ops', abi.binary, BINARY_OPS);
  list('dtypes', abi.dtypes, DTYPES);
  list('weight types', abi.weights, HOST_WEIGHT_TYPES);
  return out;
}

const flag = (b: boolean | undefined): number => (b ? 1 : 0);

/** The record words of each op after [op, eqn], in the addon's field order. */
const ENCODE: { readonly [O in KernelOp]: (a: KernelArgs[O]) => number[] } = {
  matmul_w: (a) => [a.x, a.y, a.T, a.w],
  matmul: (a) => [a.a, a.b, a.y, a.batch, a.M, a.K, a.N],
  rmsnorm: (a) => [a.x, a.g, a.y, a.rows, a.C, a.eps],
  softmax: (a) => [a.x, a.y, a.rows, a.C],
  row_sum: (a) => [a.x, a.y, a.rows, a.C],
  row_max: (a) => [a.x, a.y, a.rows, a.C],
  exp_sub: (a) => [a.x, a.m, a.y, a.rows, a.C],
  row_scale: (a) => [a.x, a.s, a.y, a.rows, a.C],
  rope: (a) => [a.x, a.y, a.T, a.H, a.D, a.rd, a.pos, a.cos, a.sin, a.maxPos],
  gather: (a) => [a.w, a.idx, a.y, a.count],
  dequant: (a) => [a.w, a.row0, a.rows, a.y],
  update: (a) => {
    if (a.dims.length > 4 || a.update.length !== a.dims.length) {
      throw new InvalidInput('/update', `update takes operands of rank <= 4 with an update of the same rank, got [${a.dims.join(', ')}] and [${a.update.join(', ')}]`);
    }
    const pad = (d: readonly number[]) => [...d, ...new Array<number>(4 - d.length).fill(1)];
    return [a.dst, a.upd, a.starts, a.elem, a.dims.length, ...pad(a.dims), ...pad(a.update)];
  },
  unary: (a) => [UNARY_OPS.indexOf(a.fn), a.x, a.y, a.n],
  binary: (a) => [BINARY_OPS.indexOf(a.fn), a.a, a.b, a.y, a.n, flag(a.aScalar), flag(a.bScalar)],
  binary_i32: (a) => [BINARY_OPS.indexOf(a.fn), a.a, a.b, a.y, a.n, flag(a.aScalar), flag(a.bScalar)],
  convert: (a) => [DTYPES.indexOf(a.from), DTYPES.indexOf(a.to), a.x, a.y, a.n],
  copy: (a) => [a.x, a.y, a.bytes],
  matmul_bt: (a) => [a.a, a.b, a.y, a.batch, a.M, a.K, a.N],
  copy_strided: (a) => {
    const r = a.dims.length;
    if (r > 4 || a.xStrides.length !== r || a.yStrides.length !== r) {
      throw new InvalidInput('/copy_strided', `copy_strided takes rank <= 4 with one stride per dim, got dims [${a.dims.join(', ')}], strides [${a.xStrides.join(', ')}] and [${a.yStrides.join(', ')}]`);
    }
    const pad = (d: readonly number[], v: number) => [...d, ...new Array<number>(4 - r).fill(v)];
    return [a.x, a.y, a.elem, r, ...pad(a.dims, 1), ...pad(a.xStrides, 0), ...pad(a.yStrides, 0)];
  },
  iota: (a) => [a.y, flag(a.i32), a.n, a.dim, a.stride],
  gather_rows: (a) => [a.x, a.idx, a.y, a.count, a.rows, a.rowBytes],
  unary_t: (a) => [UNARY_OPS.indexOf(a.fn), DTYPES.indexOf(a.dtype), a.x, a.y, a.n],
  binary_t: (a) => [BINARY_OPS.indexOf(a.fn), DTYPES.indexOf(a.dtype), a.a, a.b, a.y, a.n, flag(a.aScalar), flag(a.bScalar)],
  reduce_t: (a) => [flag(a.max), DTYPES.indexOf(a.dtype), a.x, a.y, a.rows, a.C],
  matmul_t: (a) => [DTYPES.indexOf(a.dtype), a.a, a.b, a.y, a.batch, a.M, a.K, a.N],
  attention: (a) => [a.q, a.k, a.v, a.bias, a.y, a.B, a.M, a.D, a.N, a.Dv, a.scale, a.bB, a.bG, a.bRow, flag(a.kRows)],
  matmul_wq: (a) => [a.x, a.y, a.T, a.w],
  attention_f16: (a) => [a.q, a.k, a.v, a.bias, a.y, a.B, a.M, a.D, a.N, a.Dv, a.scale, a.bB, a.bG, a.bRow, flag(a.kRows)],
  matmul_id: (a) => [a.x, a.ids, a.y, a.T, a.S, a.B, a.N, a.w],
  matmul_idq: (a) => [a.x, a.ids, a.y, a.T, a.S, a.B, a.N, a.w],
};

/** The kernel list of `calls`, as the addon's runList reads it. */
export function encodeKernels(calls: readonly KernelCall[]): Float64Array {
  const words: number[] = [];
  for (const c of calls) {
    const encode = ENCODE[c.op] as (a: KernelCall) => number[];
    words.push(KERNEL_OPS.indexOf(c.op), c.eqn ?? -1, ...encode(c));
  }
  return Float64Array.from(words);
}
