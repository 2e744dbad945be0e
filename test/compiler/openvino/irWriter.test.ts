import { expect } from 'chai';
import { lit, program } from '../../../src/ops/builder.js';
import type { ProgramBuilder, Value } from '../../../src/ops/builder.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import { checkProgram } from '../../../src/ops/validate.js';
import type { IrLayer, IrModel } from '../../../src/compiler/openvino/irModel.js';
import { irEdgeInto, irParameters, irResults } from '../../../src/compiler/openvino/irModel.js';
import { readIr } from '../../../src/compiler/openvino/irReader.js';
import { writeIr } from '../../../src/compiler/openvino/irWriter.js';
import { irOf } from '../../../src/compiler/openvino/backend.js';
import { f16Binary, representative } from './programs.js';

/** The IR of one program over an f16 [2, 3] activation `x`, read back through the reader. */
function ir(f: (p: ProgramBuilder, x: Value) => Value, shape: number[] = [2, 3]): IrModel {
  const p = program('one');
  const x = p.activation('x', 'f16', shape);
  p.results(f(p, x));
  const w = writeIr(checkProgram(p.build()));
  return readIr(w.xml, w.bin);
}

function layerNamed(m: IrModel, name: string): IrLayer {
  const l = m.layers.find((x) => x.name === name);
  if (!l) throw new Error(`no layer ${name} in ${m.layers.map((x) => x.name).join(', ')}`);
  return l;
}

/** The layer feeding input `port` of `l`. */
function input(m: IrModel, l: IrLayer, port: number): IrLayer {
  const e = irEdgeInto(m, l.id, port)!;
  return m.layers.find((x) => x.id === e.fromLayer)!;
}

function constValues(m: IrModel, l: IrLayer, port: number): readonly number[] {
  const c = input(m, l, port);
  expect(c.type, `input ${port} of ${l.name}`).to.equal('Const');
  return c.constant!.values;
}

describe('compiler/openvino/irWriter', () => {
  it('has the program args as Parameters, in order, at their own precision', () => {
    const m = readIr(irOf(representative()).xml, irOf(representative()).bin);
    expect(irParameters(m).map((l) => [l.name, l.outputs[0]!.precision, l.outputs[0]!.dims, l.data['element_type']])).to.deep.equal([
      ['x', 'FP32', [2, 4], 'f32'], ['w', 'FP32', [4, 3], 'f32'], ['idx', 'I32', [2], 'i32'], ['pos', 'I32', [], 'i32'], ['acc', 'FP32', [4, 3], 'f32'],
    ]);
  });

  it('has the results then the state next values as Results, by their whole-program binding names', () => {
    const m = readIr(irOf(representative()).xml, irOf(representative()).bin);
    expect(irResults(m).map((l) => [l.name, l.inputs[0]!.precision, l.inputs[0]!.dims])).to.deep.equal([
      ['result:t', 'FP32', [2]], ['result:g', 'FP32', [2, 3]], ['state:acc', 'FP32', [4, 3]],
    ]);
    // Each Result reads the exit Convert of its value: the F32 boundary is inside the graph.
    for (const r of irResults(m)) expect(input(m, r, 0)).to.deep.include({ type: 'Convert', data: { destination_type: 'f32' } });
  });

  it('lowers each binary op to its opset-1 op with numpy broadcasting', () => {
    const want = { add: 'Add', sub: 'Subtract', mul: 'Multiply', div: 'Divide', max: 'Maximum', ge: 'GreaterEqual' } as const;
    for (const [op, type] of Object.entries(want) as [keyof typeof want, string][]) {
      const w = writeIr(f16Binary(op));
      const z = layerNamed(readIr(w.xml, w.bin), 'z');
      expect(z).to.deep.include({ type, version: 'opset1' });
      expect(z.data['auto_broadcast']).to.equal('numpy');
      expect(z.outputs[0]!.precision).to.equal(op === 'ge' ? 'BOOL' : 'FP16');
    }
    const div = layerNamed(readIr(writeIr(f16Binary('div')).xml, writeIr(f16Binary('div')).bin), 'z');
    expect(div.data).to.deep.equal({ auto_broadcast: 'numpy', m_pythondiv: 'false' });
  });

  it('makes an inline literal a scalar Const of its dtype', () => {
    const m = ir((p, x) => p.named('y').mul(x, 0.1));
    const y = layerNamed(m, 'y');
    const c = input(m, y, 1);
    expect(c.constant).to.deep.include({ elementType: 'f16', shape: [], size: 2 });
    expect(c.constant!.values).to.deep.equal([0.0999755859375]);
    expect(y.inputs[1]).to.deep.equal({ id: 1, precision: 'FP16', dims: [] });
  });

  it('lowers neg, exp and sqrt to attribute-free opset-1 ops', () => {
    for (const [op, type] of [['neg', 'Negative'], ['exp', 'Exp'], ['sqrt', 'Sqrt']] as const) {
      const y = layerNamed(ir((p, x) => p.named('y')[op](x)), 'y');
      expect(y).to.deep.include({ type, version: 'opset1', data: {} });
    }
  });

  it('lowers reductions with keep_dims false and an i64 axes input', () => {
    for (const [op, type] of [['reduceSum', 'ReduceSum'], ['reduceMax', 'ReduceMax']] as const) {
      const m = ir((p, x) => p.named('y')[op](x, [0, 1]));
      const y = layerNamed(m, 'y');
      expect(y).to.deep.include({ type, version: 'opset1', data: { keep_dims: 'false' } });
      expect(constValues(m, y, 1)).to.deep.equal([0, 1]);
      expect(y.inputs[1]).to.deep.include({ precision: 'I64', dims: [2] });
      expect(y.outputs[0]!.dims).to.deep.equal([]);
    }
  });

  it('lowers matmul to MatMul-1 with no transposes', () => {
    const m = ir((p, x) => p.named('y').matmul(x, p.transpose(x, [1, 0])));
    expect(layerNamed(m, 'y')).to.deep.include({ type: 'MatMul', version: 'opset1', data: { transpose_a: 'false', transpose_b: 'false' } });
    expect(layerNamed(m, 'y').outputs[0]!.dims).to.deep.equal([2, 2]);
  });

  it('lowers gather to Gather-8 with batch_dims 0 and a scalar axis', () => {
    // The builder's gather takes a value index; a literal one is written as the format allows.
    const w = writeIr(checkProgram({
      format: 'program@1', name: 'g', state: {}, results: ['y', 'z'],
      args: [{ name: 'src', role: 'weight', dtype: 'f16', shape: [5, 3] }, { name: 'i', role: 'activation', dtype: 'i32', shape: [2, 2] }],
      eqns: [
        { op: 'gather', in: ['src', 'i'], out: 'y', attrs: { axis: 0 } },
        { op: 'gather', in: ['src', { lit: 4 }], out: 'z', attrs: { axis: 0 } },
      ],
    }));
    const m = readIr(w.xml, w.bin);
    const y = layerNamed(m, 'y');
    expect(y).to.deep.include({ type: 'Gather', version: 'opset8', data: { batch_dims: '0' } });
    expect(input(m, y, 2).constant).to.deep.include({ elementType: 'i64', shape: [], values: [0] });
    expect(y.outputs[0]!.dims).to.deep.equal([2, 2, 3]);
    expect(input(m, layerNamed(m, 'z'), 1).constant).to.deep.include({ elementType: 'i32', shape: [], values: [4] });
  });

  it('lowers reshape, transpose, broadcast, slice and concat with their opset inputs', () => {
    const m = ir((p, x) => {
      const r = p.named('r').reshape(x, [3, 2]);
      const t = p.named('t').transpose(r, [1, 0]);
      const b = p.named('b').broadcast(p.named('row').slice(t, [0, 0], [1, 3]), [4, 1, 3], [1, 2]);
      const s = p.named('s').broadcast(p.reduceMax(x, [0, 1]), [2, 2], []);
      return p.named('c').concat([p.named('sl').slice(p.reshape(b, [4, 3]), [0, 0], [4, 3], [2, 2]), s], 0);
    });
    expect(layerNamed(m, 'r')).to.deep.include({ type: 'Reshape', version: 'opset1', data: { special_zero: 'false' } });
    expect(constValues(m, layerNamed(m, 'r'), 1)).to.deep.equal([3, 2]);
    expect(layerNamed(m, 't')).to.deep.include({ type: 'Transpose', version: 'opset1' });
    expect(constValues(m, layerNamed(m, 't'), 1)).to.deep.equal([1, 0]);
    const b = layerNamed(m, 'b');
    expect(b).to.deep.include({ type: 'Broadcast', version: 'opset3', data: { mode: 'explicit' } });
    expect([constValues(m, b, 1), constValues(m, b, 2)]).to.deep.equal([[4, 1, 3], [1, 2]]);
    const s = layerNamed(m, 's');
    expect(s).to.deep.include({ data: { mode: 'numpy' } });
    expect(s.inputs).to.have.length(2);
    const sl = layerNamed(m, 'sl');
    expect(sl).to.deep.include({ type: 'Slice', version: 'opset8', data: {} });
    expect([1, 2, 3, 4].map((k) => constValues(m, sl, k))).to.deep.equal([[0, 0], [4, 3], [2, 2], [0, 1]]);
    expect(sl.outputs[0]!.dims).to.deep.equal([2, 2]);
    expect(layerNamed(m, 'c')).to.deep.include({ type: 'Concat', version: 'opset1', data: { axis: '0' } });
  });

  it('lowers convert to Convert-1 with the IR\'s destination_type spelling', () => {
    const m = ir((p, x) => p.named('y').convert(p.named('b').convert(x, 'bool'), 'f32'));
    expect(layerNamed(m, 'b')).to.deep.include({ type: 'Convert', data: { destination_type: 'boolean' } });
    expect(layerNamed(m, 'b').outputs[0]!.precision).to.equal('BOOL');
    expect(layerNamed(m, 'y')).to.deep.include({ data: { destination_type: 'f32' } });
  });

  it('lowers iota to a constant Range-4, broadcast over its other dims', () => {
    const m = ir((p) => p.named('io').iota([2, 3], 1, 'i32'));
    const io = layerNamed(m, 'io');
    expect(io).to.deep.include({ type: 'Broadcast', version: 'opset3', data: { mode: 'explicit' } });
    const range = input(m, io, 0);
    expect(range).to.deep.include({ type: 'Range', version: 'opset4', data: { output_type: 'i32' } });
    expect([0, 1, 2].map((k) => constValues(m, range, k))).to.deep.equal([[0], [3], [1]]);
    expect(constValues(m, io, 2)).to.deep.equal([1]);
    const flat = layerNamed(ir((p) => p.named('io').iota([5], 0, 'f16')), 'io');
    expect(flat).to.deep.include({ type: 'Range', data: { output_type: 'f16' } });
  });

  it('lowers dynamic_update_slice to one ScatterNDUpdate-3 at literal and runtime starts', () => {
    const p = program('kv');
    const kv = p.state('kv', 'f16', [8, 4]);
    const pos = p.activation('pos', 'i32', []);
    const u = p.activation('u', 'f16', [2, 4]);
    const a = p.named('a').dynamicUpdateSlice(kv, u, [lit(3, 'i32'), lit(0, 'i32')]);
    const b = p.named('b').dynamicUpdateSlice(a, u, [pos, lit(0, 'i32')]);
    p.carry(kv, b);
    const w = writeIr(checkProgram(p.build()));
    const m = readIr(w.xml, w.bin);
    const la = layerNamed(m, 'a');
    expect(la).to.deep.include({ type: 'ScatterNDUpdate', version: 'opset3', data: {} });
    expect(la.inputs.map((x) => x.dims)).to.deep.equal([[8, 4], [2, 4, 2], [2, 4]]);
    expect(constValues(m, la, 1).slice(0, 6)).to.deep.equal([3, 0, 3, 1, 3, 2]);
    expect(constValues(m, la, 1).slice(-2)).to.deep.equal([4, 3]);
    const indices = input(m, layerNamed(m, 'b'), 1);
    expect(indices).to.deep.include({ type: 'Add', data: { auto_broadcast: 'numpy' } });
    expect(constValues(m, indices, 0).slice(0, 4)).to.deep.equal([0, 0, 0, 1]);
    const starts = input(m, indices, 1);
    expect(starts).to.deep.include({ type: 'Concat', data: { axis: '0' } });
    expect(input(m, input(m, starts, 0), 0).name).to.equal('pos');
    expect(constValues(m, starts, 1)).to.deep.equal([0]);
  });

  it('lowers a window partial in two dims to ScatterNDUpdate-3 with every coordinate', () => {
    const p = program('nd');
    const a = p.activation('a', 'f16', [3, 4]);
    const u = p.activation('u', 'f16', [2, 2]);
    const i = p.activation('i', 'i32', []);
    p.results(p.named('lit').dynamicUpdateSlice(a, u, [1, 2]), p.named('rt').dynamicUpdateSlice(a, u, [i, 1]));
    const w = writeIr(checkProgram(p.build()));
    const m = readIr(w.xml, w.bin);
    const l = layerNamed(m, 'lit');
    expect(l).to.deep.include({ type: 'ScatterNDUpdate', version: 'opset3', data: {} });
    expect(l.inputs[1]!.dims).to.deep.equal([2, 2, 2]);
    expect(constValues(m, l, 1)).to.deep.equal([1, 2, 1, 3, 2, 2, 2, 3]);
    const rt = input(m, layerNamed(m, 'rt'), 1);
    expect(rt.type).to.equal('Add');
    expect(input(m, rt, 1)).to.deep.include({ type: 'Concat', data: { axis: '0' } });
  });

  it('is deterministic: the same program gives the same bytes, a different one different bytes', () => {
    const a = irOf(representative());
    const b = irOf(representative());
    expect(a.xml).to.equal(b.xml);
    expect(Buffer.from(a.bin).equals(Buffer.from(b.bin))).to.equal(true);
    const other: CheckedProgram = f16Binary('add');
    expect(writeIr(other).xml).to.not.equal(a.xml);
  });
});
