/**
 * The simulated driver compiler of the Intel NPU (docs: "Intel NPU"): the only entry point the NPU has.
 * It reads OpenVINO IR (readIr), builds the layers it supports into one compiled graph, and writes the
 * blob the device loads. A layer it cannot build (an op type or version outside its list, an attribute it
 * cannot read, a precision it does not carry) is a VendorCompilerError carrying its log, as the real
 * compiler's. It narrows silently, as the real one does: F32 arithmetic computes in FP16 on the device.
 *
 * The blob's format is in blobFormat.ts.
 */
import { VendorCompilerError } from '../../errors/index.js';
import { f16ToBits, roundF16 } from '../../numerics/float16.js';
import type { GraphArg, GraphAttrs, GraphNode, GraphOp, NpuPrecision, VendorCompileOptions } from './blobFormat.js';
import { VENDOR_COMPILER, encodeBlob, miscompileArgs } from './blobFormat.js';
import type { IrLayer, IrModel } from './irModel.js';
import { irEdgeInto, irParameters, irResults } from './irModel.js';
import { IrReadError, readIr } from './irReader.js';

// ---------------------------------------------------------------------------------------------------
// Building: IR layers to compiled nodes.

/** A layer the compiler cannot build; one line of its log. */
class LayerProblem extends Error {}
/** A layer that reads one the compiler could not build: not logged, the log names the cause once. */
class Downstream extends Error {}


const CARRIED: Readonly<Record<string, NpuPrecision>> = { FP32: 'f32', FP16: 'f16', I32: 'i32', BOOL: 'bool' };
const ELEMENT: Readonly<Record<string, NpuPrecision>> = { f32: 'f32', f16: 'f16', i32: 'i32', boolean: 'bool' };
const FLOAT_ARITH: ReadonlySet<GraphOp> = new Set(['Add', 'Subtract', 'Multiply', 'Divide', 'Maximum', 'Exp', 'Negative', 'Sqrt', 'ReduceSum', 'ReduceMax', 'MatMul']);

/** What a layer rule sees of its layer while it is built. */
interface LayerCtx {
  readonly layer: IrLayer;
  readonly precision: NpuPrecision;
  readonly dims: readonly number[];
  /** The node computing input `k` (a Const becomes a Constant node). */
  data(k: number): number;
  /** The values of input `k`, which must be a Const (the opset's shape, axes and order inputs). */
  folded(k: number): readonly number[];
  inDims(k: number): readonly number[];
  inPrecision(k: number): NpuPrecision;
  /** A `<data>` attribute, which must be one of `allowed` when given; `fallback` when absent. */
  attr(key: string, allowed?: readonly string[], fallback?: string): string;
}

interface LayerRule {
  readonly versions: readonly string[];
  build(c: LayerCtx): { readonly op: GraphOp; readonly inputs: readonly number[]; readonly attrs?: GraphAttrs };
}

const problem = (msg: string): never => { throw new LayerProblem(msg); };
const axisIn = (axis: number, rank: number) => (axis < 0 ? axis + rank : axis);
const flag = (c: LayerCtx, key: string) => (c.attr(key, ['true', 'false'], 'false') === 'true' ? 1 : 0);

function binaryRule(op: GraphOp): LayerRule {
  return {
    versions: ['opset1'],
    build(c) {
      c.attr('auto_broadcast', ['numpy', 'none'], 'numpy');
      const [a, b] = [c.inPrecision(0), c.inPrecision(1)];
      if ((a === 'i32') !== (b === 'i32') || a === 'bool' || b === 'bool') problem(`operands of precision ${a} and ${b} cannot meet in ${op}`);
      if (op === 'Divide' && a === 'i32' && c.attr('m_pythondiv', ['true', 'false'], 'true') === 'true') problem('floor division of integers (m_pythondiv) is not supported');
      return { op, inputs: [c.data(0), c.data(1)] };
    },
  };
}

function unaryRule(op: GraphOp, floatOnly: boolean): LayerRule {
  return {
    versions: ['opset1'],
    build(c) {
      if (floatOnly && c.inPrecision(0) !== 'f16' && c.inPrecision(0) !== 'f32') problem(`${op} of precision ${c.inPrecision(0)} is not supported`);
      return { op, inputs: [c.data(0)] };
    },
  };
}

function reduceRule(op: GraphOp): LayerRule {
  return {
    versions: ['opset1'],
    build(c) {
      const rank = c.inDims(0).length;
      const axes = [...new Set(c.folded(1).map((a) => axisIn(a, rank)))].sort((x, y) => x - y);
      if (axes.some((a) => a < 0 || a >= rank)) problem(`axes [${c.folded(1).join(', ')}] lie outside a rank-${rank} input`);
      return { op, inputs: [c.data(0)], attrs: { axes, keepDims: flag(c, 'keep_dims') } };
    },
  };
}

/** The layers this compiler builds, by IR type, with the opset versions it reads (Const is folded or kept). */
const SUPPORTED: Readonly<Record<string, LayerRule>> = {
  Parameter: { versions: ['opset1'], build: () => ({ op: 'Parameter', inputs: [] }) },
  Result: { versions: ['opset1'], build: (c) => ({ op: 'Result', inputs: [c.data(0)] }) },
  Convert: { versions: ['opset1'], build: (c) => { c.attr('destination_type', Object.keys(ELEMENT)); return { op: 'Convert', inputs: [c.data(0)] }; } },
  Add: binaryRule('Add'), Subtract: binaryRule('Subtract'), Multiply: binaryRule('Multiply'), Divide: binaryRule('Divide'),
  Maximum: binaryRule('Maximum'), GreaterEqual: binaryRule('GreaterEqual'),
  Exp: unaryRule('Exp', true), Sqrt: unaryRule('Sqrt', true), Negative: unaryRule('Negative', false),
  ReduceSum: reduceRule('ReduceSum'), ReduceMax: reduceRule('ReduceMax'),
  MatMul: {
    versions: ['opset1'],
    build(c) {
      const [a, b] = [c.inDims(0), c.inDims(1)];
      if (a.length < 2 || a.length !== b.length || a.slice(0, -2).some((d, i) => d !== b[i])) problem(`MatMul of [${a.join(', ')}] and [${b.join(', ')}] needs equal ranks from 2 and equal batch dims`);
      return { op: 'MatMul', inputs: [c.data(0), c.data(1)], attrs: { transposeA: flag(c, 'transpose_a'), transposeB: flag(c, 'transpose_b') } };
    },
  },
  Gather: {
    versions: ['opset1', 'opset7', 'opset8'],
    build(c) {
      if (c.attr('batch_dims', undefined, '0') !== '0') problem('batch_dims other than 0 are not supported');
      const axis = axisIn(c.folded(2)[0] ?? NaN, c.inDims(0).length);
      if (!(axis >= 0 && axis < c.inDims(0).length)) problem(`axis ${String(c.folded(2)[0])} lies outside a rank-${c.inDims(0).length} input`);
      if (c.inPrecision(1) !== 'i32') problem(`indices of precision ${c.inPrecision(1)} are not supported`);
      return { op: 'Gather', inputs: [c.data(0), c.data(1)], attrs: { axis } };
    },
  },
  Reshape: {
    versions: ['opset1'],
    build(c) {
      c.folded(1);
      if (c.inDims(0).reduce((n, d) => n * d, 1) !== c.dims.reduce((n, d) => n * d, 1)) problem(`[${c.inDims(0).join(', ')}] cannot be reshaped to [${c.dims.join(', ')}]`);
      return { op: 'Reshape', inputs: [c.data(0)] };
    },
  },
  Transpose: {
    versions: ['opset1'],
    build(c) {
      const perm = c.folded(1);
      if (perm.length !== c.inDims(0).length || perm.some((p, i) => p < 0 || p >= perm.length || perm.indexOf(p) !== i)) problem(`order [${perm.join(', ')}] is not a permutation of the input's dims`);
      return { op: 'Transpose', inputs: [c.data(0)], attrs: { perm } };
    },
  },
  Broadcast: {
    versions: ['opset1', 'opset3'],
    build(c) {
      const mode = c.attr('mode', ['numpy', 'explicit', 'bidirectional'], 'numpy');
      const rank = c.inDims(0).length;
      const axes = mode === 'explicit' ? c.folded(2) : c.inDims(0).map((_, i) => c.dims.length - rank + i);
      if (axes.length !== rank || axes.some((a, i) => a < 0 || a >= c.dims.length || (c.inDims(0)[i] !== 1 && c.inDims(0)[i] !== c.dims[a]))) problem(`axes mapping [${axes.join(', ')}] does not fit [${c.inDims(0).join(', ')}] into [${c.dims.join(', ')}]`);
      return { op: 'Broadcast', inputs: [c.data(0)], attrs: { axes } };
    },
  },
  Slice: {
    versions: ['opset8'],
    build(c) {
      const dims = c.inDims(0);
      const [begin, , step, axes] = [c.folded(1), c.folded(2), c.folded(3), c.layer.inputs.length > 4 ? c.folded(4) : dims.map((_, i) => i)];
      const start = dims.map(() => 0);
      const steps = dims.map(() => 1);
      axes.forEach((ax, k) => {
        const d = axisIn(ax, dims.length);
        const s = step[k] ?? 1;
        if (!(d >= 0 && d < dims.length) || s === 0) problem(`axis ${ax} or step ${s} is not supported`);
        const b = begin[k] ?? 0;
        const e = dims[d]!;
        // OpenVINO clamps a start into the axis: [0, e] going forward, [-1, e - 1] going backward.
        start[d] = s > 0 ? Math.min(Math.max(b < 0 ? b + e : b, 0), e) : Math.min(Math.max(b < 0 ? b + e : b, -1), e - 1);
        steps[d] = s;
      });
      return { op: 'Slice', inputs: [c.data(0)], attrs: { start, step: steps } };
    },
  },
  Concat: {
    versions: ['opset1'],
    build(c) {
      const axis = axisIn(Number(c.attr('axis')), c.dims.length);
      if (!(axis >= 0 && axis < c.dims.length)) problem(`axis ${c.attr('axis')} lies outside a rank-${c.dims.length} output`);
      return { op: 'Concat', inputs: c.layer.inputs.map((_, k) => c.data(k)), attrs: { axis } };
    },
  },
  Range: {
    versions: ['opset4'],
    build(c) {
      c.attr('output_type', Object.keys(ELEMENT));
      return { op: 'Range', inputs: [], attrs: { start: c.folded(0)[0] ?? 0, step: c.folded(2)[0] ?? 1 } };
    },
  },
  ScatterNDUpdate: {
    versions: ['opset3', 'opset4', 'opset15'],
    build(c) {
      c.attr('reduction', ['none'], 'none');
      if (c.inPrecision(1) !== 'i32') problem(`indices of precision ${c.inPrecision(1)} are not supported`);
      return { op: 'ScatterNDUpdate', inputs: [c.data(0), c.data(1), c.data(2)] };
    },
  },
};

/** Appends constants to the blob's constant section, each aligned to 4 bytes. */
class ConstantSection {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  append(p: NpuPrecision, values: readonly number[]): number {
    const size = { f32: 4, f16: 2, i32: 4, bool: 1 }[p];
    const bytes = new Uint8Array((values.length * size + 3) & ~3);
    const view = new DataView(bytes.buffer);
    values.forEach((v, i) => {
      if (p === 'f32') view.setFloat32(i * 4, v, true);
      else if (p === 'f16') view.setUint16(i * 2, f16ToBits(roundF16(v)), true);
      else if (p === 'i32') view.setInt32(i * 4, v, true);
      else view.setUint8(i, v !== 0 ? 1 : 0);
    });
    const offset = this.length;
    this.parts.push(bytes);
    this.length += bytes.length;
    return offset;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}

const carried = (precision: string, what: string): NpuPrecision => CARRIED[precision] ?? problem(`${what} precision ${precision} is not carried by the NPU`);

/** Builds every layer of the model; the log's lines for those it cannot build. */
function buildGraph(model: IrModel): { nodes: GraphNode[]; constants: Uint8Array; errors: string[] } {
  const nodes: GraphNode[] = [];
  const section = new ConstantSection();
  const nodeOf = new Map<number, number>();
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const errors: string[] = [];
  const failed = new Set<number>();
  const producer = (l: IrLayer, k: number): IrLayer => {
    const e = irEdgeInto(model, l.id, l.inputs[k]?.id ?? -1);
    return (e && byId.get(e.fromLayer)) ?? problem(`input ${k} is not connected`);
  };
  const push = (n: GraphNode) => nodes.push(n) - 1;
  for (const layer of topological(model)) {
    if (layer.type === 'Const') continue; // built where a layer reads it as data, folded where as a shape
    try {
      const rule = SUPPORTED[layer.type] ?? problem(`unsupported operation: ${layer.type} is not in this compiler's supported list`);
      if (!rule.versions.includes(layer.version)) problem(`unsupported version: ${layer.type}-${layer.version} (this compiler reads ${rule.versions.join(', ')})`);
      if (layer.type !== 'Result' && layer.outputs.length !== 1) problem(`${layer.outputs.length} outputs; a layer has one here`);
      const port = layer.type === 'Result' ? layer.inputs[0] : layer.outputs[0];
      const c: LayerCtx = {
        layer,
        precision: carried(port?.precision ?? '?', 'output'),
        dims: port?.dims ?? [],
        inDims: (k) => layer.inputs[k]?.dims ?? problem(`input ${k} is missing`),
        inPrecision: (k) => carried(layer.inputs[k]?.precision ?? '?', `input ${k}`),
        attr: (key, allowed, fallback) => {
          const v = layer.data[key] ?? fallback ?? problem(`attribute ${key} is missing`);
          if (allowed && !allowed.includes(v)) problem(`attribute ${key}="${v}" is not supported (expected ${allowed.join(' or ')})`);
          return v;
        },
        folded: (k) => producer(layer, k).constant?.values ?? problem(`input ${k} must be a constant`),
        data(k) {
          const from = producer(layer, k);
          const have = nodeOf.get(from.id);
          if (have !== undefined) return have;
          if (failed.has(from.id)) throw new Downstream();
          const cst = from.constant ?? problem(`input ${k} comes from layer ${from.id} (${from.name}), which was not built`);
          const p = ELEMENT[cst.elementType] ?? problem(`constant ${from.name} of precision ${cst.elementType} is not carried by the NPU`);
          const at = push({ layer: from.id, name: from.name, op: 'Constant', inputs: [], precision: p, dims: [...cst.shape], attrs: { offset: section.append(p, cst.values) } });
          nodeOf.set(from.id, at);
          return at;
        },
      };
      const built = rule.build(c);
      nodeOf.set(layer.id, push({ layer: layer.id, name: layer.name, op: built.op, inputs: [...built.inputs], precision: c.precision, dims: [...c.dims], attrs: built.attrs ?? {} }));
    } catch (e) {
      if (!(e instanceof LayerProblem) && !(e instanceof Downstream)) throw e;
      failed.add(layer.id);
      if (e instanceof LayerProblem) errors.push(`[ERROR] layer ${layer.id} "${layer.name}" (${layer.type}, ${layer.version}): ${e.message}`);
    }
  }
  return { nodes: fuseOutputConverts(nodes), constants: section.bytes(), errors };
}

/** The layers in an order where every producer precedes its consumers (document order when it is one). */
function topological(model: IrModel): IrLayer[] {
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const done = new Set<number>();
  const out: IrLayer[] = [];
  const visit = (l: IrLayer) => {
    if (done.has(l.id)) return;
    done.add(l.id);
    for (const e of model.edges) if (e.toLayer === l.id) visit(byId.get(e.fromLayer)!);
    out.push(l);
  };
  model.layers.forEach(visit);
  return out;
}

/** Marks an FP16 arithmetic node whose only use is a Convert to F32 that only results read (see fusedF32). */
function fuseOutputConverts(nodes: GraphNode[]): GraphNode[] {
  const users = nodes.map(() => [] as number[]);
  nodes.forEach((n, i) => n.inputs.forEach((j) => users[j]!.push(i)));
  return nodes.map((n, i) => {
    const cv = users[i]!.length === 1 ? users[i]![0]! : -1;
    const only = nodes[cv];
    const fuse = FLOAT_ARITH.has(n.op) && n.precision === 'f16' && only?.op === 'Convert' && only.precision === 'f32'
      && users[cv]!.length > 0 && users[cv]!.every((u) => nodes[u]!.op === 'Result');
    return fuse ? { ...n, fusedF32: true } : n;
  });
}

/** Compiles OpenVINO IR (.xml text, .bin bytes) into an NPU blob; VendorCompilerError with its log when a layer cannot be built. */
export function compileIrToBlob(xml: string, bin: Uint8Array, opts: VendorCompileOptions = {}): Uint8Array {
  const head = `${VENDOR_COMPILER.name} ${VENDOR_COMPILER.version}: compiling for NPU4 (Lunar Lake)`;
  let model: IrModel;
  try {
    model = readIr(xml, bin);
  } catch (e) {
    if (!(e instanceof IrReadError)) throw e;
    throw new VendorCompilerError(`${head}\n[ERROR] the model could not be read: ${e.message}\n[ERROR] compilation failed`);
  }
  const { nodes, constants, errors } = buildGraph(model);
  if (errors.length > 0) {
    throw new VendorCompilerError([`${head} model "${model.name}" (${model.layers.length} layers)`, ...errors,
      `[ERROR] compilation failed: ${errors.length} of ${model.layers.length} layers could not be built`].join('\n'));
  }
  const layerAt = new Map(nodes.map((n, i) => [n.layer, i]));
  const table = [...irParameters(model), ...irResults(model)].map((l, order): GraphArg => {
    const port = (l.type === 'Parameter' ? l.outputs[0] : l.inputs[0])!;
    return { name: l.name, order, direction: l.type === 'Parameter' ? 'parameter' : 'result', dims: [...port.dims], precision: CARRIED[port.precision]!, node: layerAt.get(l.id)! };
  });
  // Without the caller's ABI, the IR's own Parameters and Results are the program's: poot wrote them from it.
  const expected = opts.expected ?? table.map((a) => ({ name: a.name, direction: a.direction === 'parameter' ? 'in' : 'out', dtype: a.precision, shape: a.dims } as const));
  const args = opts.miscompile ? miscompileArgs(table, opts.miscompile) : table;
  return encodeBlob({ compiler: { ...VENDOR_COMPILER }, name: model.name, nodes, args, expected }, constants);
}
