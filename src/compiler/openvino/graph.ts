/**
 * Builds an IrModel layer by layer: ids in creation order, input ports numbered before output ports,
 * one edge per input port, constants appended to the .bin as they are made. The lowering creates each
 * equation's constants right before the layer that reads them, so document order is topological.
 */
import { BinWriter, representable } from './bin.js';
import type { CheckedEqn } from '../../ir/checked.js';
import type { IrEdge, IrElementType, IrLayer, IrModel, IrPort } from './irModel.js';
import { precisionOf } from './irModel.js';

/** The static type of a tensor on an edge. */
export interface IrType {
  readonly element: IrElementType;
  readonly shape: readonly number[];
}

/** An output port of a layer already in the graph: what a later layer's input reads. */
export interface PortRef {
  readonly layer: number;
  readonly port: number;
  readonly type: IrType;
}

/** What add() needs for one layer. */
export interface LayerSpec {
  readonly name: string;
  readonly type: string;
  readonly version: string;
  readonly data?: Readonly<Record<string, string>>;
  readonly inputs: readonly PortRef[];
  readonly outputs: readonly IrType[];
  /** Tensor names of each output port. */
  readonly names?: readonly (readonly string[] | undefined)[];
}

function irPort(id: number, t: IrType, names?: readonly string[]): IrPort {
  const p = { id, precision: precisionOf(t.element), dims: [...t.shape] };
  return names && names.length > 0 ? { ...p, names: [...names] } : p;
}

/** The `shape` attribute of a Parameter or Const: dims joined by commas, empty for a scalar. */
function shapeAttr(shape: readonly number[]): string {
  return shape.join(',');
}

export class IrGraph {
  private readonly layers: IrLayer[] = [];
  private readonly edges: IrEdge[] = [];
  private readonly bin = new BinWriter();

  /** Adds a layer reading `inputs`; returns its output ports. */
  add(spec: LayerSpec): PortRef[] {
    const id = this.layers.length;
    const n = spec.inputs.length;
    const inputs = spec.inputs.map((r, k) => {
      this.edges.push({ fromLayer: r.layer, fromPort: r.port, toLayer: id, toPort: k });
      return irPort(k, r.type);
    });
    const outputs = spec.outputs.map((t, k) => irPort(n + k, t, spec.names?.[k]));
    this.layers.push({ id, name: spec.name, type: spec.type, version: spec.version, data: { ...spec.data }, inputs, outputs });
    return spec.outputs.map((type, k) => ({ layer: id, port: n + k, type }));
  }

  /** Adds a Parameter (a graph input) named `name`. */
  parameter(name: string, type: IrType): PortRef {
    return this.add({
      name, type: 'Parameter', version: 'opset1',
      data: { shape: shapeAttr(type.shape), element_type: type.element },
      inputs: [], outputs: [type], names: [[name]],
    })[0]!;
  }

  /** Adds a Const holding `values` (row-major) and its bytes in the .bin. */
  constant(name: string, type: IrType, raw: readonly number[]): PortRef {
    // Recorded as the .bin holds them, so what readIr decodes equals what was written.
    const values = raw.map((v) => representable(type.element, v));
    const { offset, size } = this.bin.append(type.element, values);
    const id = this.layers.length;
    this.layers.push({
      id, name, type: 'Const', version: 'opset1',
      data: { element_type: type.element, shape: shapeAttr(type.shape), offset: String(offset), size: String(size) },
      inputs: [], outputs: [irPort(0, type)],
      constant: { elementType: type.element, shape: [...type.shape], offset, size, values },
    });
    return { layer: id, port: 0, type };
  }

  /** A 1-D i64 Const: the index plumbing (axes, shapes, orders) the opset takes as inputs. */
  i64(name: string, values: readonly number[]): PortRef {
    return this.constant(name, { element: 'i64', shape: [values.length] }, values);
  }

  /** Adds a Result (a graph output) named `name`, reading `from`. */
  result(name: string, from: PortRef): void {
    this.add({ name, type: 'Result', version: 'opset1', inputs: [from], outputs: [] });
  }

  /** The finished model and its .bin. */
  finish(name: string): { model: IrModel; bin: Uint8Array } {
    return { model: { name, version: 11, layers: [...this.layers], edges: [...this.edges] }, bin: this.bin.bytes() };
  }
}

/** What a lowering sees: the graph, and each operand as a port (a literal becomes a scalar Const). */
export interface LowerCtx {
  readonly graph: IrGraph;
  operand(e: CheckedEqn, k: number): PortRef;
}
