import { expect } from 'chai';
import { GgufError, fromWire } from '../../../src/errors/index.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { Raw, expectGguf } from './helpers.js';

const F32 = 0;
const Q4_0 = 2;
const Q4_K = 12;

/** A valid file: one u32 key, one F32 tensor of 4 elements. */
function valid(): Raw {
  return new Raw().header(1, 1).kvU32('a.b', 7).tensor('w', [4], F32, 0).pad().f32(1).f32(2).f32(3).f32(4);
}

/** A file with these tensor infos (after one key) and `dataBytes` zero bytes of data. */
function withTensors(infos: (r: Raw) => void, n: number, dataBytes: number, kv = (r: Raw) => { r.kvU32('k', 1); }, nKv = 1): Uint8Array {
  const r = new Raw().header(n, nKv);
  kv(r);
  infos(r);
  return r.pad().zeros(dataBytes).build();
}

describe('gguf reader: valid files', () => {
  it('reads a hand-made v3 file: header, metadata, tensor, data', () => {
    const f = readGguf(valid().build());
    expect(f.version).to.equal(3);
    expect(f.alignment).to.equal(32);
    expect(f.metadata.get('a.b')).to.deep.equal({ type: 'u32', value: 7 });
    expect(f.tensors.map((t) => [t.name, t.dims, t.typeName, t.offset, t.byteSize])).to.deep.equal([['w', [4], 'F32', 0, 16]]);
    expect(f.dataOffset % 32).to.equal(0);
    expect([...f.tensorFloats('w')]).to.deep.equal([1, 2, 3, 4]);
  });

  it('reads v2 the same way', () => {
    const r = new Raw().header(0, 1, 2).kvU32('x', 1);
    expect(readGguf(r.build()).version).to.equal(2);
  });

  it('honours general.alignment for the data section', () => {
    const b = new Raw().header(1, 1).kvU32('general.alignment', 64).tensor('w', [4], F32, 0).pad(64).f32(5).zeros(12).build();
    const f = readGguf(b);
    expect(f.alignment).to.equal(64);
    expect(f.dataOffset).to.equal(128); // 90 header bytes, padded to 64
    expect(f.tensorFloats('w')[0]).to.equal(5);
  });

  it('a file with no tensors needs no data section', () => {
    expect(readGguf(new Raw().header(0, 0).build()).tensors).to.deep.equal([]);
  });
});

describe('gguf reader: hostile headers', () => {
  it('bad magic', () => { const b = valid().build(); b[0] = 0x46; expectGguf(() => readGguf(b), /bad magic/); });
  it('empty file', () => expectGguf(() => readGguf(new Uint8Array(0)), /bad magic/));
  it('file shorter than the magic', () => expectGguf(() => readGguf(Uint8Array.of(0x47, 0x47, 0x55)), /bad magic/));
  it('magic but no version', () => expectGguf(() => readGguf(Uint8Array.of(0x47, 0x47, 0x55, 0x46)), /truncated: version/));
  it('GGUF v1 is refused', () => expectGguf(() => readGguf(new Raw().header(0, 0, 1).build()), /v1 is not supported/));
  it('version 0 is unknown', () => expectGguf(() => readGguf(new Raw().header(0, 0, 0).build()), /unknown GGUF version 0/));
  it('a future version is unknown', () => expectGguf(() => readGguf(new Raw().header(0, 0, 4).build()), /unknown GGUF version 4/));
  it('a big-endian file is named as such', () => expectGguf(() => readGguf(new Raw().header(0, 0, 0x03000000).build()), /big-endian/));

  it('huge tensor count', () => {
    const g = expectGguf(() => readGguf(new Raw().header(2n ** 40n, 0).build()), /tensor count .* cannot fit/);
    expect(g.offset).to.equal(8);
  });
  it('negative tensor count', () => expectGguf(() => readGguf(new Raw().header(-1n, 0).build()), /tensor count .* negative/));
  it('huge kv count', () => expectGguf(() => readGguf(new Raw().header(0, 2n ** 62n).build()), /key-value count .* cannot fit/));
  it('negative kv count', () => expectGguf(() => readGguf(new Raw().header(0, -5n).build()), /key-value count .* negative/));
  it('counts that each fit but not together', () => {
    const r = new Raw().header(3, 3).zeros(3 * 32 + 10);
    expectGguf(() => readGguf(r.build()), /3 tensors and 3 metadata pairs cannot fit/);
  });

  it('huge key length', () => expectGguf(() => readGguf(new Raw().header(0, 1).u64(2n ** 62n).zeros(20).build()), /key 0 length .* cannot fit/));
  it('negative key length', () => expectGguf(() => readGguf(new Raw().header(0, 1).u64(-1n).zeros(20).build()), /key 0 length .* negative/));
  it('empty key', () => expectGguf(() => readGguf(new Raw().header(0, 1).str('').u32(4).u32(1).build()), /key 0 is empty/));
  it('duplicate key', () => expectGguf(() => readGguf(new Raw().header(0, 2).kvU32('k', 1).kvU32('k', 2).build()), /duplicate key "k"/));
  it('key that is not UTF-8', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).u64(2).bytes([0xc3, 0x28]).u32(4).u32(1).build()), /not valid UTF-8/);
  });
  it('unknown value type', () => expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(13).u32(0).build()), /13 is not a GGUF value type/));
  it('value type 0xffffffff', () => expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(0xffffffff).u32(0).build()), /not a GGUF value type/));
  it('value cut off by the end of the file', () => expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(12).u32(0).u8(0).build()), /truncated/));
  it('huge string value length', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(8).u64(2n ** 60n).zeros(8).build()), /length .* cannot fit/);
  });
  it('bool that is neither 0 nor 1', () => expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(7).u8(2).build()), /not 0 or 1/));
  it('huge array length (u8 items)', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(9).u32(0).u64(2n ** 50n).zeros(64).build()), /length .* cannot fit/);
  });
  it('array length that overflows when multiplied by the item size', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(9).u32(10).u64(2n ** 61n + 1n).zeros(64).build()), /length .* cannot fit/);
  });
  it('negative array length', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(9).u32(8).u64(-3n).zeros(64).build()), /length .* negative/);
  });
  it('huge string-array length', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(9).u32(8).u64(1000).zeros(100).build()), /length 1000 cannot fit/);
  });
  it('unknown array item type', () => expectGguf(() => readGguf(new Raw().header(0, 1).str('k').u32(9).u32(99).u64(0).build()), /item type 99/));
  it('arrays nested past the depth limit', () => {
    const r = new Raw().header(0, 1).str('k').u32(9);
    for (let i = 0; i < 40; i++) r.u32(9).u64(1);
    r.u32(0).u64(0);
    expectGguf(() => readGguf(r.build()), /nests arrays more than/);
  });
  it('a deep but allowed nesting reads', () => {
    const r = new Raw().header(0, 1).str('k').u32(9).u32(9).u64(1).u32(4).u64(1).u32(42);
    expect(readGguf(r.build()).metadata.get('k')).to.deep.equal({ type: 'array', itemType: 'array', value: [{ type: 'array', itemType: 'u32', value: [42] }] });
  });
});

describe('gguf reader: hostile alignment', () => {
  it('alignment 0', () => expectGguf(() => readGguf(new Raw().header(0, 1).kvU32('general.alignment', 0).build()), /alignment 0 is not a non-zero power of two/));
  it('alignment not a power of two', () => expectGguf(() => readGguf(new Raw().header(0, 1).kvU32('general.alignment', 48).build()), /48 is not/));
  it('alignment of the wrong type', () => {
    expectGguf(() => readGguf(new Raw().header(0, 1).str('general.alignment').u32(10).u64(32).build()), /alignment has type u64/);
  });
});

describe('gguf reader: hostile tensor infos', () => {
  it('duplicate tensor names', () => {
    const b = withTensors((r) => r.tensor('w', [4], F32, 0).tensor('w', [4], F32, 32), 2, 64);
    expectGguf(() => readGguf(b), /duplicate tensor name "w"/);
  });
  it('empty tensor name', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('', [4], F32, 0), 1, 32)), /empty name/));
  it('a tensor name past ggml\'s 63 bytes', () => {
    expectGguf(() => readGguf(withTensors((r) => r.tensor('n'.repeat(64), [4], F32, 0), 1, 32)), /name is 64 bytes; ggml holds at most 63/);
    expect(() => readGguf(withTensors((r) => r.tensor('n'.repeat(63), [4], F32, 0).zeros(16), 1, 32))).to.not.throw();
  });
  it('zero dimensions', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [], F32, 0).zeros(8), 1, 32)), /has 0 dimensions/));
  it('five dimensions', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [1, 1, 1, 1, 1], F32, 0), 1, 32)), /has 5 dimensions/));
  it('huge n_dims', () => expectGguf(() => readGguf(withTensors((r) => r.str('w').u32(0xffffffff).zeros(40), 1, 0)), /4294967295 dimensions/));
  it('a zero-sized dimension', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [4, 0], F32, 0), 1, 32)), /dim 1 is zero/));
  it('a negative dimension', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [4, -2n], F32, 0), 1, 32)), /dim 1 is negative \(-2\)/));
  it('element count overflow', () => {
    expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [2n ** 32n, 2n ** 32n, 4], F32, 0), 1, 32)), /more than 2\^53 elements/);
  });
  it('element count overflow in the last dim', () => {
    expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [2, 2, 2, 2n ** 62n], F32, 0), 1, 32)), /more than 2\^53 elements/);
  });
  it('byte size overflow', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [2n ** 26n, 2n ** 26n], F32, 0), 1, 32)), /more than 2\^53 bytes/));
  it('unknown ggml type', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [4], 1000, 0), 1, 32)), /unknown ggml type 1000/));
  it('a removed ggml type (Q4_2)', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [32], 4, 0), 1, 32)), /unknown ggml type 4/));
  it('rows not a multiple of the block size (Q4_0)', () => {
    expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [48, 2], Q4_0, 0), 1, 64)), /48 elements, not a multiple of its block size 32/);
  });
  it('rows not a multiple of the K-quant super-block', () => {
    expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [128, 2], Q4_K, 0), 1, 512)), /not a multiple of its block size 256/);
  });
  it('offset not aligned', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [4], F32, 4), 1, 64)), /offset 4 is not a multiple of the alignment 32/));
  it('offset aligned to 32 but not to the declared alignment 64', () => {
    const b = new Raw().header(2, 1).kvU32('general.alignment', 64).tensor('a', [4], F32, 0).tensor('b', [4], F32, 32).pad(64).zeros(128).build();
    expectGguf(() => readGguf(b), /"b" offset 32 is not a multiple of the alignment 64/);
  });
  it('offset past the end of the file', () => {
    expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [4], F32, 2n ** 40n), 1, 32)), /runs past the end/);
  });
  it('offset beyond any file', () => expectGguf(() => readGguf(withTensors((r) => r.tensor('w', [4], F32, 2n ** 62n), 1, 32)), /beyond any file/));
  it('overlapping tensors', () => {
    const b = withTensors((r) => r.tensor('a', [16], F32, 0).tensor('b', [4], F32, 32), 2, 128);
    expectGguf(() => readGguf(b), /"b" data at 32 overlaps tensor "a" \[0, 64\)/);
  });
  it('data shorter than declared', () => {
    const b = valid().build();
    expectGguf(() => readGguf(b.subarray(0, b.length - 1)), /shorter than declared/);
  });
  it('no data section at all', () => {
    const b = new Raw().header(1, 0).tensor('w', [4], F32, 0).build();
    expectGguf(() => readGguf(b), /shorter than declared/);
  });
  it('a tensor info cut short', () => {
    const b = new Raw().header(1, 0).str('wwwwwwwwww').u32(2).u64(4).u64(3).build();
    expectGguf(() => readGguf(b), /truncated: tensor "wwwwwwwwww" type/);
  });
  it('packed: refuses a gap ggml would refuse', () => {
    const b = withTensors((r) => r.tensor('a', [4], F32, 0).tensor('b', [4], F32, 64), 2, 96);
    expect(readGguf(b).tensors.length).to.equal(2);
    expectGguf(() => readGguf(b, { packed: true }), /"b" has offset 64, the packed layout puts it at 32/);
  });
  it('every prefix of a valid file is refused, none crashes', () => {
    const b = valid().build();
    for (let n = 0; n < b.length; n++) expect(() => readGguf(b.subarray(0, n)), `prefix ${n}`).to.throw(GgufError);
  });
});

describe('gguf reader: errors', () => {
  it('GgufError crosses the wire with its code and fields', () => {
    const g = expectGguf(() => readGguf(new Raw().header(0, 0, 1).build()), /v1/);
    const back = fromWire(g.toWire())!;
    expect(back).to.be.instanceOf(GgufError);
    expect(back.toWire()).to.deep.equal({ code: 'GgufError', message: g.message, offset: 4, reason: g.reason });
  });
  it('dequantizing a type this package cannot decode is a GgufError', () => {
    const b = withTensors((r) => r.tensor('w', [256], 10 /* Q2_K */, 0), 1, 96);
    const f = readGguf(b);
    expect(f.tensorBytes('w').length).to.equal(84);
    expectGguf(() => f.tensorFloats('w'), /cannot dequantize ggml type Q2_K/);
  });
  it('asking for a missing tensor is a GgufError', () => expectGguf(() => readGguf(valid().build()).tensorBytes('nope'), /no tensor named "nope"/));
});
