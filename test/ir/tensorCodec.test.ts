import { expect } from 'chai';
import { decodeTensor, encodeTensor } from '../../src/ir/tensorCodec.js';
import { tensor } from '../../src/ir/tensor.js';
import { tensorFromBytes, tensorToBytes } from '../../src/ir/bytes.js';
import { refusal } from './helpers.js';

function b64Of16(bits: readonly number[]): string {
  return Buffer.from(Uint16Array.from(bits).buffer).toString('base64');
}

function same(actual: ArrayLike<number>, expected: readonly number[]): void {
  expect(actual.length).to.equal(expected.length);
  expected.forEach((v, k) => expect(Object.is(actual[k], v), `element ${k}: ${actual[k]} is not ${v}`).to.equal(true));
}

describe('ir/tensorCodec', () => {
  it('decodes the spec\'s b64 example to [1.5, -0, NaN, Infinity] and encodes it back', () => {
    const json = { dtype: 'f32', shape: [2, 2], b64: 'AADAPwAAAIAAAMB/AACAfw==' };
    const t = decodeTensor(json, '');
    expect(t.dtype).to.equal('f32');
    expect(t.shape).to.deep.equal([2, 2]);
    same(t.data, [1.5, -0, NaN, Infinity]);
    expect(encodeTensor(t, 'b64')).to.deep.equal(json);
  });

  it('decodes the spec\'s data example and writes non-finite and -0 back as strings', () => {
    const json = { dtype: 'f32', shape: [2, 2], data: [1.5, '-0', 'nan', 'inf'] };
    const t = decodeTensor(json, '');
    same(t.data, [1.5, -0, NaN, Infinity]);
    expect(encodeTensor(t, 'data')).to.deep.equal(json);
    expect(encodeTensor(decodeTensor({ dtype: 'f32', shape: [1], data: ['-inf'] }, ''), 'data').data).to.deep.equal(['-inf']);
  });

  it('reads f32 bytes at any byte offset (a device read need not be 4-aligned), -0, NaN and subnormals included', () => {
    const values = [1.5, -0, NaN, Infinity, -3.4028234663852886e38, 1.401298464324817e-45, -2.5];
    const bytes = tensorToBytes(tensor('f32', [7], values));
    for (const offset of [0, 1, 2, 3, 4]) {
      const buf = new Uint8Array(offset + bytes.length + 3).fill(0xff);
      buf.set(bytes, offset);
      const t = tensorFromBytes('f32', [7], buf.subarray(offset, offset + bytes.length));
      same(t.data, values);
    }
    // Negative control: the same bytes one off are other values.
    const off = new Uint8Array(bytes.length + 1);
    off.set(bytes, 1);
    expect(() => same(tensorFromBytes('f32', [7], off.subarray(0, bytes.length)).data, values)).to.throw();
  });

  it('carries f16 as 16-bit patterns, subnormals, -0 and NaN included', () => {
    const b64 = b64Of16([0x3c00, 0xc000, 0x7bff, 0x8000, 0x7e00, 0x7c00, 0x0001]);
    const t = decodeTensor({ dtype: 'f16', shape: [7], b64 }, '');
    same(t.data, [1, -2, 65504, -0, NaN, Infinity, 2 ** -24]);
    expect(encodeTensor(t, 'b64')).to.deep.equal({ dtype: 'f16', shape: [7], b64 });
  });

  it('carries bf16 as the top half of the f32 pattern', () => {
    const b64 = b64Of16([0x3f80, 0xc000, 0x7fc0, 0xff80, 0x3eab]);
    const t = decodeTensor({ dtype: 'bf16', shape: [5], b64 }, '');
    same(t.data, [1, -2, NaN, -Infinity, 0x2b * 2 ** -7 * 2 ** -2 + 2 ** -2]);
    expect(encodeTensor(t, 'b64').dtype).to.equal('bf16');
    expect(encodeTensor(t, 'b64')).to.have.property('b64', b64);
  });

  it('carries i32 little-endian and bool one byte each', () => {
    const ints = [-1, 2147483647, -2147483648, 0];
    const ib64 = Buffer.from(Int32Array.from(ints).buffer).toString('base64');
    const it32 = decodeTensor({ dtype: 'i32', shape: [2, 2], b64: ib64 }, '');
    same(it32.data, ints);
    expect(encodeTensor(it32, 'b64')).to.have.property('b64', ib64);
    const b = decodeTensor({ dtype: 'bool', shape: [3], b64: 'AQAB' }, '');
    same(b.data, [1, 0, 1]);
    expect(encodeTensor(b, 'b64')).to.have.property('b64', 'AQAB');
    expect(encodeTensor(b, 'data')).to.have.deep.property('data', [1, 0, 1]);
  });

  it('rounds float data once to the dtype, and accepts true/false for bool', () => {
    same(decodeTensor({ dtype: 'f16', shape: [2], data: [0.1, 70000] }, '').data, [0.0999755859375, Infinity]);
    same(decodeTensor({ dtype: 'f32', shape: [1], data: [0.1] }, '').data, [Math.fround(0.1)]);
    same(decodeTensor({ dtype: 'bool', shape: [4], data: [true, false, 1, 0] }, '').data, [1, 0, 1, 0]);
    same(decodeTensor({ dtype: 'i32', shape: [1], data: ['-0'] }, '').data, [0]);
    same(decodeTensor({ dtype: 'f32', shape: [0], data: [] }, '').data, []);
  });

  it('rounds an fp64-mode tensor once when writing b64', () => {
    const t = tensor('f16', [1], [0.1]);
    const back = decodeTensor(encodeTensor(t, 'b64'), '');
    same(back.data, [0.0999755859375]);
  });

  it('refuses malformed tensors with pointers under the given path', () => {
    const at = '/x/2';
    refusal(() => decodeTensor({ dtype: 'i32', shape: [2], data: [1, 1.5] }, at), 'InvalidInput', '/x/2/data/1');
    refusal(() => decodeTensor({ dtype: 'i32', shape: [1], data: [2 ** 31] }, at), 'InvalidInput', '/x/2/data/0');
    refusal(() => decodeTensor({ dtype: 'i32', shape: [1], data: ['nan'] }, at), 'InvalidInput', '/x/2/data/0');
    refusal(() => decodeTensor({ dtype: 'bool', shape: [1], data: [2] }, at), 'InvalidInput', '/x/2/data/0');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [1], data: ['NaN'] }, at), 'InvalidInput', '/x/2/data/0');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [3], data: [1, 2] }, at), 'InvalidInput', '/x/2/data');
    refusal(() => decodeTensor({ dtype: 'f64', shape: [1], data: [1] }, at), 'InvalidInput', '/x/2/dtype');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [2, 0.5], data: [] }, at), 'InvalidInput', '/x/2/shape/1');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [1], data: [1], b64: 'AAAAAA==' }, at), 'InvalidInput', '/x/2');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [1] }, at), 'InvalidInput', '/x/2');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [1], values: [1] }, at), 'InvalidInput', '/x/2/values');
    refusal(() => decodeTensor([1, 2], at), 'InvalidInput', '/x/2');
    expect(refusal(() => decodeTensor({ dtype: 'f32', shape: [2], b64: 'AADAPw==' }, at), 'InvalidInput', '/x/2/b64')).to.contain('8 bytes');
    refusal(() => decodeTensor({ dtype: 'f32', shape: [1], b64: 'AA*AAA==' }, at), 'InvalidInput', '/x/2/b64');
    expect(refusal(() => decodeTensor({ dtype: 'bool', shape: [2], b64: 'AQI=' }, at), 'InvalidInput', '/x/2/b64')).to.contain('element 1');
  });
});
