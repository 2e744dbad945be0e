/**
 * Reads an OpenVINO IR v11 model (.xml text and .bin bytes) back into an IrModel: layers, ports,
 * edges, and every Const decoded from the .bin. It checks what a consumer relies on (ids, port
 * numbering, one edge per input port, matching precisions and dims at both ends of an edge, constants
 * inside the .bin and of the size their shape needs) and names the place at fault when one is broken.
 */
import { decodeValues } from './bin.js';
import type { IrConstant, IrEdge, IrElementType, IrLayer, IrModel, IrPort } from './irModel.js';
import { IR_ELEMENT_TYPES, IR_PRECISIONS, elementBytes, precisionOf } from './irModel.js';
import type { XmlElement } from './xml.js';
import { XmlSyntaxError, parseXml, splitNames } from './xml.js';

/** A malformed IR: `at` names the element (`layer 3 (y)`, `edge 2`, `net`), `reason` what is wrong. */
export class IrReadError extends Error {
  constructor(readonly at: string, readonly reason: string) {
    super(`malformed OpenVINO IR at ${at}: ${reason}`);
  }
}

function children(el: XmlElement, tag: string): XmlElement[] {
  return el.children.filter((c) => c.tag === tag);
}

function only(el: XmlElement, tag: string, at: string, required: boolean): XmlElement | undefined {
  const found = children(el, tag);
  if (found.length > 1) throw new IrReadError(at, `more than one <${tag}>`);
  if (required && found.length === 0) throw new IrReadError(at, `no <${tag}>`);
  return found[0];
}

function attr(el: XmlElement, key: string, at: string): string {
  const v = el.attrs[key];
  if (v === undefined) throw new IrReadError(at, `<${el.tag}> has no ${key} attribute`);
  return v;
}

function natural(s: string, at: string, what: string): number {
  if (!/^\d+$/.test(s.trim())) throw new IrReadError(at, `${what} is not a non-negative integer: ${JSON.stringify(s)}`);
  const n = Number(s.trim());
  if (!Number.isSafeInteger(n)) throw new IrReadError(at, `${what} ${s} is too large`);
  return n;
}

function shapeList(s: string, at: string): number[] {
  return s.trim() === '' ? [] : s.split(',').map((d) => natural(d, at, 'a shape dim'));
}

function elementType(s: string, at: string): IrElementType {
  const e = IR_ELEMENT_TYPES.find((x) => x === s);
  if (e === undefined) throw new IrReadError(at, `element_type ${JSON.stringify(s)} is not one of ${IR_ELEMENT_TYPES.join(', ')}`);
  return e;
}

function readPort(el: XmlElement, at: string): IrPort {
  const id = natural(attr(el, 'id', at), at, 'a port id');
  const pAt = `${at} port ${id}`;
  const raw = attr(el, 'precision', pAt);
  const precision = IR_PRECISIONS.find((x) => x === raw);
  if (precision === undefined) throw new IrReadError(pAt, `precision ${JSON.stringify(raw)} is not one of ${IR_PRECISIONS.join(', ')}`);
  const dims = children(el, 'dim').map((d) => natural(d.text, pAt, 'a dim'));
  const names = el.attrs['names'];
  return names === undefined ? { id, precision, dims } : { id, precision, dims, names: splitNames(names) };
}

function readConstant(l: IrLayer, bin: Uint8Array, at: string): IrConstant {
  const elementTypeV = elementType(attr(dataOf(l), 'element_type', at), at);
  const shape = shapeList(attr(dataOf(l), 'shape', at), at);
  const offset = natural(attr(dataOf(l), 'offset', at), at, 'offset');
  const size = natural(attr(dataOf(l), 'size', at), at, 'size');
  const want = shape.reduce((a, d) => a * d, 1) * elementBytes(elementTypeV);
  if (size !== want) throw new IrReadError(at, `size ${size} is not the ${want} bytes a ${elementTypeV} [${shape.join(', ')}] holds`);
  if (offset + size > bin.length) throw new IrReadError(at, `bytes ${offset}..${offset + size} lie beyond the .bin's ${bin.length}`);
  let values: number[];
  try {
    values = decodeValues(elementTypeV, bin.subarray(offset, offset + size));
  } catch (err) {
    throw new IrReadError(at, (err as Error).message);
  }
  return { elementType: elementTypeV, shape, offset, size, values };
}

// The <data> attributes as an element, so attr() names a missing one.
function dataOf(l: IrLayer): XmlElement {
  return { tag: 'data', attrs: l.data, children: [], text: '', line: 0 };
}

function checkDeclared(l: IrLayer, at: string, type: IrElementType, shape: readonly number[]): void {
  const out = l.outputs[0];
  if (l.outputs.length !== 1 || l.inputs.length !== 0 || out === undefined) throw new IrReadError(at, `a ${l.type} has no inputs and one output port`);
  if (out.id !== 0) throw new IrReadError(at, `a ${l.type}'s output port is 0, not ${out.id}`);
  if (out.precision !== precisionOf(type)) throw new IrReadError(at, `output precision ${out.precision} differs from element_type ${type}`);
  if (out.dims.length !== shape.length || out.dims.some((d, k) => d !== shape[k])) throw new IrReadError(at, `output dims [${out.dims.join(', ')}] differ from shape [${shape.join(', ')}]`);
}

function readLayer(el: XmlElement, bin: Uint8Array): IrLayer {
  const at0 = `layer on line ${el.line}`;
  const id = natural(attr(el, 'id', at0), at0, 'a layer id');
  const name = attr(el, 'name', at0);
  const at = `layer ${id} (${name})`;
  const type = attr(el, 'type', at);
  const version = attr(el, 'version', at);
  const data = { ...(only(el, 'data', at, false)?.attrs ?? {}) };
  const inputs = (only(el, 'input', at, false)?.children ?? []).map((p) => readPort(p, at));
  const outputs = (only(el, 'output', at, false)?.children ?? []).map((p) => readPort(p, at));
  // The IR numbers input ports 0..n-1 and output ports after them.
  [...inputs, ...outputs].forEach((p, k) => { if (p.id !== k) throw new IrReadError(at, `port ${p.id} where port ${k} belongs (inputs first, then outputs, counting up)`); });
  const l: IrLayer = { id, name, type, version, data, inputs, outputs };
  if (type === 'Const') {
    const constant = readConstant(l, bin, at);
    checkDeclared(l, at, constant.elementType, constant.shape);
    return { ...l, constant };
  }
  if (type === 'Parameter') checkDeclared(l, at, elementType(attr(dataOf(l), 'element_type', at), at), shapeList(attr(dataOf(l), 'shape', at), at));
  if (type === 'Result' && (inputs.length !== 1 || outputs.length !== 0)) throw new IrReadError(at, 'a Result has one input port and no outputs');
  return l;
}

function samePort(a: IrPort, b: IrPort): boolean {
  return a.precision === b.precision && a.dims.length === b.dims.length && a.dims.every((d, k) => d === b.dims[k]);
}

function checkEdges(layers: readonly IrLayer[], edges: readonly IrEdge[]): void {
  const byId = new Map(layers.map((l) => [l.id, l]));
  const fed = new Set<string>();
  edges.forEach((e, k) => {
    const at = `edge ${k} (${e.fromLayer}:${e.fromPort} -> ${e.toLayer}:${e.toPort})`;
    const from = byId.get(e.fromLayer);
    const to = byId.get(e.toLayer);
    if (!from || !to) throw new IrReadError(at, `layer ${from ? e.toLayer : e.fromLayer} does not exist`);
    const out = from.outputs.find((p) => p.id === e.fromPort);
    const inp = to.inputs.find((p) => p.id === e.toPort);
    if (!out) throw new IrReadError(at, `layer ${from.id} (${from.name}) has no output port ${e.fromPort}`);
    if (!inp) throw new IrReadError(at, `layer ${to.id} (${to.name}) has no input port ${e.toPort}`);
    if (!samePort(out, inp)) throw new IrReadError(at, `${out.precision} [${out.dims.join(', ')}] flows into a port declared ${inp.precision} [${inp.dims.join(', ')}]`);
    const key = `${e.toLayer}:${e.toPort}`;
    if (fed.has(key)) throw new IrReadError(at, `input port ${e.toPort} of layer ${to.id} has more than one edge`);
    fed.add(key);
  });
  for (const l of layers) {
    for (const p of l.inputs) if (!fed.has(`${l.id}:${p.id}`)) throw new IrReadError(`layer ${l.id} (${l.name})`, `input port ${p.id} has no edge`);
  }
  // A consumer runs layers in dependency order, so a cycle is refused here (Kahn's algorithm).
  const pending = new Map(layers.map((l) => [l.id, l.inputs.length]));
  const ready = layers.filter((l) => l.inputs.length === 0).map((l) => l.id);
  let done = 0;
  while (ready.length > 0) {
    const id = ready.pop()!;
    done++;
    for (const e of edges) {
      if (e.fromLayer !== id) continue;
      const left = pending.get(e.toLayer)! - 1;
      pending.set(e.toLayer, left);
      if (left === 0) ready.push(e.toLayer);
    }
  }
  if (done !== layers.length) throw new IrReadError('edges', 'the graph has a cycle');
}

/** Reads an IR v11 model from its .xml text and .bin bytes; throws IrReadError naming the fault. */
export function readIr(xml: string, bin: Uint8Array): IrModel {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (err) {
    if (err instanceof XmlSyntaxError) throw new IrReadError(`line ${err.line}`, err.reason);
    throw err;
  }
  if (root.tag !== 'net') throw new IrReadError('root', `the root element is <${root.tag}>, not <net>`);
  if (root.attrs['version'] !== '11') throw new IrReadError('net', `version ${JSON.stringify(root.attrs['version'] ?? null)} is not "11"`);
  const layers = children(only(root, 'layers', 'net', true)!, 'layer').map((l) => readLayer(l, bin));
  const ids = new Set<number>();
  for (const l of layers) {
    if (ids.has(l.id)) throw new IrReadError(`layer ${l.id} (${l.name})`, `layer id ${l.id} is used twice`);
    ids.add(l.id);
  }
  const edges = children(only(root, 'edges', 'net', true)!, 'edge').map((e, k): IrEdge => {
    const at = `edge ${k}`;
    const n = (key: string) => natural(attr(e, key, at), at, key);
    return { fromLayer: n('from-layer'), fromPort: n('from-port'), toLayer: n('to-layer'), toPort: n('to-port') };
  });
  checkEdges(layers, edges);
  return { name: root.attrs['name'] ?? '', version: 11, layers, edges };
}
