import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidInput, UsageError } from '../../../src/errors/index.js';
import { QUANT_TYPES } from '../../../src/model/gguf/ggmlTypes.js';
import { openGguf, readGguf } from '../../../src/model/gguf/reader.js';
import { gv } from '../../../src/model/gguf/types.js';
import { quantizedTensor, writeGguf } from '../../../src/model/gguf/writer.js';
import { tempDir } from '../../jobs/helpers.js';
import { EVERY_TYPE, expectGguf, sameFloats, seeded } from './helpers.js';

describe('gguf writer', () => {
  for (const version of [2, 3] as const) {
    it(`v${version}: every metadata type round-trips through the reader`, () => {
      const f = readGguf(writeGguf({ version, metadata: EVERY_TYPE }));
      expect(f.version).to.equal(version);
      expect([...f.metadata.keys()]).to.deep.equal([...EVERY_TYPE.keys()]);
      for (const [k, v] of EVERY_TYPE) expect(f.metadata.get(k), k).to.deep.equal(v);
      expect(Object.is((f.metadata.get('t.f32neg0') as { value: number }).value, -0)).to.equal(true);
    });
  }

  it('tensors of every type round-trip: dims, type, bytes, packed layout ggml accepts', () => {
    const rand = seeded(3);
    const tensors = QUANT_TYPES.map((t, i) => {
      const dims = [256, 1 + (i % 3)];
      return quantizedTensor(`w.${t}`, t, dims, Float32Array.from({ length: 256 * dims[1]! }, () => rand() - 0.5));
    });
    const bytes = writeGguf({ metadata: { 'general.alignment': gv.u32(64) }, tensors });
    const f = readGguf(bytes, { packed: true });
    expect(f.alignment).to.equal(64);
    for (const t of tensors) {
      const info = f.tensor(t.name)!;
      expect(info.dims).to.deep.equal(t.dims);
      expect(info.typeName).to.equal(t.type);
      expect(info.offset % 64).to.equal(0);
      expect(f.tensorBytes(t.name)).to.deep.equal(t.data);
    }
  });

  it('refuses what the reader would refuse', () => {
    const data = new Uint8Array(16);
    expect(() => writeGguf({ tensors: [{ name: 'a', dims: [4], type: 'F32', data }, { name: 'a', dims: [4], type: 'F32', data }] })).to.throw(InvalidInput, /duplicate/);
    expect(() => writeGguf({ tensors: [{ name: 'a', dims: [5], type: 'F32', data }] })).to.throw(InvalidInput, /16 bytes/);
    expect(() => writeGguf({ tensors: [{ name: 'a', dims: [16], type: 'Q4_0', data }] })).to.throw(InvalidInput, /block size 32/);
    expect(() => writeGguf({ tensors: [{ name: 'a', dims: [4], type: 4, data }] })).to.throw(InvalidInput, /unknown ggml type/);
    expect(() => writeGguf({ metadata: { 'general.alignment': gv.u32(3) } })).to.throw(InvalidInput, /power of two/);
    expect(() => writeGguf({ metadata: { k: gv.u8(256) } })).to.throw(InvalidInput, /256 is not a u8/);
    expect(() => writeGguf({ metadata: { k: gv.u64(-1n) } })).to.throw(InvalidInput, /not a u64/);
    expect(() => writeGguf({ metadata: { '': gv.u8(1) } })).to.throw(InvalidInput, /empty key/);
  });
});

describe('gguf openGguf (from disk)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => { tmp = tempDir('npuo-gguf-'); });
  afterEach(() => tmp.remove());

  it('reads a header larger than its first window, then tensors by offset, the same as in memory', () => {
    // 300k vocabulary strings: a ~3 MB header, past the first 1 MiB window.
    const tokens = Array.from({ length: 300_000 }, (_, i) => `tok${i}`);
    const rand = seeded(5);
    const w = quantizedTensor('w', 'Q4_K', [512, 4], Float32Array.from({ length: 2048 }, () => rand() - 0.5));
    const bytes = writeGguf({ metadata: { 'tokenizer.ggml.tokens': gv.strings(tokens), ...Object.fromEntries(EVERY_TYPE) }, tensors: [w] });
    const path = join(tmp.dir, 'big.gguf');
    writeFileSync(path, bytes);
    const f = openGguf(path);
    try {
      const mem = readGguf(bytes);
      expect(f.size).to.equal(bytes.length);
      expect(f.dataOffset).to.equal(mem.dataOffset).and.to.be.above(1 << 20);
      expect(f.metadata).to.deep.equal(mem.metadata);
      expect(f.tensorBytes('w')).to.deep.equal(w.data);
      expect(sameFloats(f.tensorFloats('w'), mem.tensorFloats('w'))).to.equal(true);
    } finally {
      f.close();
    }
    expectGguf(() => f.tensorBytes('w'), /closed/);
  });

  it('a truncated file on disk is a GgufError; a missing one a UsageError', () => {
    const bytes = writeGguf({ tensors: [quantizedTensor('w', 'F32', [8], new Float32Array(8))] });
    const path = join(tmp.dir, 'cut.gguf');
    writeFileSync(path, bytes.subarray(0, bytes.length - 4));
    expectGguf(() => openGguf(path), /shorter than declared/);
    expect(() => openGguf(join(tmp.dir, 'none.gguf'))).to.throw(UsageError, /no such file/);
    expect(() => openGguf(tmp.dir)).to.throw(UsageError);
  });
});
