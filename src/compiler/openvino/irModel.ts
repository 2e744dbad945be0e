/**
 * The OpenVINO IR v11 model as plain data: what the writer builds and serializes (xml.ts, bin.ts) and
 * what readIr() returns. The simulated driver compiler reads graphs through this type, so it is a
 * stable API: add optional fields only.
 *
 * Port ids follow the IR's convention: a layer's input ports are 0..n-1 and its output ports n.. after
 * them; a Parameter or Const has one output port 0, a Result one input port 0.
 */
import type { DType } from '../../ir/types.js';

/** The element types this writer emits, spelled as the IR's `element_type` attributes spell them. */
export const IR_ELEMENT_TYPES = ['f32', 'f16', 'i32', 'i64', 'boolean'] as const;
export type IrElementType = (typeof IR_ELEMENT_TYPES)[number];

/** A port's `precision`, as the IR spells it. */
export const IR_PRECISIONS = ['FP32', 'FP16', 'I32', 'I64', 'BOOL'] as const;
export type IrPrecision = (typeof IR_PRECISIONS)[number];

export interface IrPort {
  readonly id: number;
  readonly precision: IrPrecision;
  readonly dims: readonly number[];
  /** The tensor names of an output port (the `names` attribute, unescaped), when it has any. */
  readonly names?: readonly string[];
}

/** A Const layer's value, decoded from the .bin at the offset and size its `<data>` names. */
export interface IrConstant {
  readonly elementType: IrElementType;
  readonly shape: readonly number[];
  readonly offset: number;
  readonly size: number;
  /** The elements in row-major order (f16 decoded to its value, booleans as 0 or 1, i64 as safe integers). */
  readonly values: readonly number[];
}

export interface IrLayer {
  readonly id: number;
  readonly name: string;
  /** The operation type, e.g. `Add`, `Parameter`, `Const`. */
  readonly type: string;
  /** The opset the type is taken from, e.g. `opset1`, `opset8`. */
  readonly version: string;
  /** The `<data>` attributes in document order; empty when the layer has none. */
  readonly data: Readonly<Record<string, string>>;
  readonly inputs: readonly IrPort[];
  readonly outputs: readonly IrPort[];
  /** Present on Const layers only. */
  readonly constant?: IrConstant;
}

export interface IrEdge {
  readonly fromLayer: number;
  readonly fromPort: number;
  readonly toLayer: number;
  readonly toPort: number;
}

export interface IrModel {
  readonly name: string;
  readonly version: 11;
  /** In document order, which the writer makes a topological order. */
  readonly layers: readonly IrLayer[];
  readonly edges: readonly IrEdge[];
}

const BY_ELEMENT = {
  f32: { precision: 'FP32', bytes: 4 },
  f16: { precision: 'FP16', bytes: 2 },
  i32: { precision: 'I32', bytes: 4 },
  i64: { precision: 'I64', bytes: 8 },
  boolean: { precision: 'BOOL', bytes: 1 },
} as const satisfies { readonly [E in IrElementType]: { readonly precision: IrPrecision; readonly bytes: number } };

/** The port precision of an element type (f32 -> FP32). */
export function precisionOf(e: IrElementType): IrPrecision {
  return BY_ELEMENT[e].precision;
}

/** Bytes per element of an element type in the .bin. */
export function elementBytes(e: IrElementType): number {
  return BY_ELEMENT[e].bytes;
}

/** The IR element type of a program dtype; bf16 has none here (the NPU4 target never admits it). */
export function elementTypeOf(d: DType): IrElementType {
  switch (d) {
    case 'f32': return 'f32';
    case 'f16': return 'f16';
    case 'i32': return 'i32';
    case 'bool': return 'boolean';
    case 'bf16': throw new Error('bf16 has no IR element type on the NPU4 path (the target refuses it)');
  }
}

/** The Parameter layers, in document (= program arg) order. */
export function irParameters(m: IrModel): IrLayer[] {
  return m.layers.filter((l) => l.type === 'Parameter');
}

/** The Result layers, in document order (program results, then state next values). */
export function irResults(m: IrModel): IrLayer[] {
  return m.layers.filter((l) => l.type === 'Result');
}

/** The edge feeding input port `port` of layer `layer`, if any. */
export function irEdgeInto(m: IrModel, layer: number, port: number): IrEdge | undefined {
  return m.edges.find((e) => e.toLayer === layer && e.toPort === port);
}
