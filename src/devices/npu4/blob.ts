/**
 * The driver's side of a compiled blob (format in src/compiler/openvino/vendorCompiler.ts): decoding it
 * and refusing what the driver would refuse. Every refusal is LoadFailed, so the engine treats the blob
 * like a damaged cache entry and recompiles: a damaged or truncated blob, another format version, a blob
 * another compiler version built, or a graph that does not hang together.
 */
import { LoadFailed, messageOf } from '../../errors/index.js';
import { unframe } from '../../compiler/frame.js';
import type { BlobGraph, CompiledBlob, ExpectedArg, GraphArg, GraphNode, GraphOp, NpuPrecision } from '../../compiler/openvino/blobFormat.js';
import { GRAPH_OPS, VENDOR_COMPILER, VPU_BLOB_MAGIC, VPU_BLOB_VERSION } from '../../compiler/openvino/blobFormat.js';
import { DTYPES, numel } from '../../ir/types.js';

const PRECISIONS: readonly string[] = ['f32', 'f16', 'i32', 'bool'] satisfies readonly NpuPrecision[];
const ELEMENT_BYTES: Readonly<Record<NpuPrecision, number>> = { f32: 4, f16: 2, i32: 4, bool: 1 };

/** Bytes per element of a precision in the blob's constant section and in device memory. */
function elementBytes(p: NpuPrecision): number {
  return ELEMENT_BYTES[p];
}

/** Per layer kind: its input count (min, max) and the attributes its kernel reads. */
const LAYOUT: { readonly [K in GraphOp]: readonly [number, number, readonly string[]] } = {
  Parameter: [0, 0, []], Result: [1, 1, []], Constant: [0, 0, ['offset']], Convert: [1, 1, []],
  Add: [2, 2, []], Subtract: [2, 2, []], Multiply: [2, 2, []], Divide: [2, 2, []], Maximum: [2, 2, []], GreaterEqual: [2, 2, []],
  Exp: [1, 1, []], Negative: [1, 1, []], Sqrt: [1, 1, []], ReduceSum: [1, 1, ['axes']], ReduceMax: [1, 1, ['axes']],
  MatMul: [2, 2, []], Gather: [2, 2, ['axis']], Reshape: [1, 1, []], Transpose: [1, 1, ['perm']], Broadcast: [1, 1, ['axes']],
  Slice: [1, 1, ['start', 'step']], Concat: [1, Infinity, ['axis']], Range: [0, 0, ['start', 'step']], ScatterNDUpdate: [3, 3, []],
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isDims = (v: unknown): v is number[] => Array.isArray(v) && v.every((d) => Number.isSafeInteger(d) && d >= 0);
const isInts = (v: unknown): v is number[] => Array.isArray(v) && v.every((d) => Number.isSafeInteger(d));

/** Decodes and checks a blob; LoadFailed(device, detail) for anything the driver refuses. */
export function decodeBlob(bytes: Uint8Array, device: string): CompiledBlob {
  const fail = (detail: string): never => { throw new LoadFailed(device, detail); };
  const framed = unframe(bytes, VPU_BLOB_MAGIC, VPU_BLOB_VERSION, 'an NPU blob');
  if ('problem' in framed) return fail(framed.problem);
  const payload = framed.payload;
  if (payload.length < 4) fail('the blob has no graph');
  const jsonLength = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0, true);
  const padded = (jsonLength + 3) & ~3;
  if (4 + padded > payload.length) fail('the graph runs past the end of the blob');
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload.subarray(4, 4 + jsonLength)));
  } catch (e) {
    return fail(`the graph is not JSON: ${messageOf(e)}`);
  }
  const constants = payload.slice(4 + padded);
  return { graph: checkGraph(json, constants.length, fail), constants };
}

function checkGraph(json: unknown, constBytes: number, fail: (d: string) => never): BlobGraph {
  if (!isObj(json) || !isObj(json.compiler) || !Array.isArray(json.nodes) || !Array.isArray(json.args) || !Array.isArray(json.expected)) {
    return fail('the graph lacks its compiler, nodes, args or expected ABI');
  }
  const c = json.compiler;
  // A blob is only good for the compiler that built it: the driver refuses another version's.
  if (c.name !== VENDOR_COMPILER.name || c.version !== VENDOR_COMPILER.version) {
    fail(`the blob was built by ${String(c.name)} ${String(c.version)}; this driver's compiler is ${VENDOR_COMPILER.name} ${VENDOR_COMPILER.version}`);
  }
  const nodes = json.nodes as unknown[];
  nodes.forEach((n, i) => checkNode(n, i, constBytes, fail));
  const checked = nodes as GraphNode[];
  const args = json.args as unknown[];
  args.forEach((a, i) => {
    if (!isObj(a) || typeof a.name !== 'string' || !Number.isSafeInteger(a.order) || !isDims(a.dims)
      || (a.direction !== 'parameter' && a.direction !== 'result') || !PRECISIONS.includes(String(a.precision))
      || !Number.isSafeInteger(a.node)) {
      fail(`argument ${i} of the graph is malformed`);
    }
    const node = checked[(a as unknown as GraphArg).node];
    // Which kind of layer it binds is checked after the argument check, which names a wrong direction.
    if (!node || (node.op !== 'Parameter' && node.op !== 'Result')) fail(`argument ${a.name} binds no Parameter or Result layer`);
  });
  const expected = json.expected as unknown[];
  expected.forEach((e, i) => {
    if (!isObj(e) || typeof e.name !== 'string' || (e.direction !== 'in' && e.direction !== 'out')
      || !(DTYPES as readonly string[]).includes(String(e.dtype)) || !isDims(e.shape)) {
      fail(`expected argument ${i} is malformed`);
    }
  });
  if (json.name !== undefined && typeof json.name !== 'string') fail('the graph\'s name is not a string');
  return { compiler: { name: c.name, version: c.version }, name: json.name ?? '', nodes: checked, args: args as GraphArg[], expected: expected as ExpectedArg[] };
}

function checkNode(n: unknown, i: number, constBytes: number, fail: (d: string) => never): void {
  if (!isObj(n) || !(GRAPH_OPS as readonly string[]).includes(String(n.op)) || !isInts(n.inputs) || !isDims(n.dims)
    || !PRECISIONS.includes(String(n.precision)) || !isObj(n.attrs)) {
    fail(`node ${i} of the graph is malformed`);
  }
  const node = n as unknown as GraphNode;
  // Inputs point backwards only, so the nodes run in order and the graph has no cycle.
  if (node.inputs.some((j) => j < 0 || j >= i)) fail(`node ${i} (${node.name}) reads a node that does not precede it`);
  const [min, max, attrs] = LAYOUT[node.op];
  if (node.inputs.length < min || node.inputs.length > max) fail(`node ${i} (${node.name}): a ${node.op} reads ${min}${max === min ? '' : ' or more'} inputs, not ${node.inputs.length}`);
  for (const k of attrs) if (!(k in node.attrs)) fail(`node ${i} (${node.name}): a ${node.op} needs attribute ${k}`);
  for (const v of Object.values(node.attrs)) {
    if (!(typeof v === 'number' && Number.isFinite(v)) && !(Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isFinite(x)))) {
      fail(`node ${i} (${node.name}) has an attribute that is not a number or a list of numbers`);
    }
  }
  if (node.op === 'Constant') {
    const off = node.attrs.offset;
    const end = typeof off === 'number' ? off + numel(node.dims) * elementBytes(node.precision) : NaN;
    if (typeof off !== 'number' || off < 0 || !(end <= constBytes)) fail(`constant ${node.name} lies outside the constant section`);
  }
}

/** LoadFailed unless every argument binds a layer of its direction and every Parameter and Result has an argument. */
export function checkArgumentLayers(blob: CompiledBlob, device: string): void {
  const bound = new Set<number>();
  for (const a of blob.graph.args) {
    if (blob.graph.nodes[a.node]?.op !== (a.direction === 'parameter' ? 'Parameter' : 'Result')) {
      throw new LoadFailed(device, `argument ${a.name} is a ${a.direction} bound to a ${String(blob.graph.nodes[a.node]?.op)} layer`);
    }
    bound.add(a.node);
  }
  blob.graph.nodes.forEach((n, i) => {
    if ((n.op === 'Parameter' || n.op === 'Result') && !bound.has(i)) throw new LoadFailed(device, `${n.op} ${n.name} is no argument of the graph`);
  });
}
