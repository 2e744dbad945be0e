import { expect } from 'chai';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromWire, Q4nxError } from '../../../src/errors/index.js';
import { logicalShapeKey, quantLayout } from '../../../src/model/q4nx/chunks.js';
import { MAX_HEADER_BYTES, readQ4nx, readQ4nxHeader, tensorData } from '../../../src/model/q4nx/container.js';
import { writeQ4nx } from '../../../src/model/q4nx/writer.js';

/** A container from a raw header string and data, with the header length `n` overridable. */
function raw(header: string | Uint8Array, data: Uint8Array = new Uint8Array(0), n?: bigint): Uint8Array {
  const h = typeof header === 'string' ? new TextEncoder().encode(header) : header;
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, n ?? BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

function refused(bytes: Uint8Array, reason: RegExp, tensor: string | null = null): Q4nxError {
  let caught: unknown;
  try { readQ4nx(bytes); } catch (e) { caught = e; }
  expect(caught, 'the reader must refuse').to.be.instanceOf(Q4nxError);
  const e = caught as Q4nxError;
  expect(e.code).to.equal('Q4nxError');
  expect(e.reason).to.match(reason);
  expect(e.tensor).to.equal(tensor);
  return e;
}

const entry = (dtype: string, shape: unknown, offs: unknown): string => JSON.stringify({ dtype, shape, data_offsets: offs });

describe('q4nx container: reading what the writer writes', () => {
  it('round-trips tensors, metadata and bytes', () => {
    const a = Uint8Array.from({ length: 5120 * 2 }, (_, i) => i & 0xff);
    const b = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const bytes = writeQ4nx([
      { name: 'w', dtype: 'I8', shape: [2, 5120], data: a },
      { name: 'norm', dtype: 'BF16', shape: [3], data: b },
    ], { format: 'q4nx' });
    const f = readQ4nx(bytes);
    expect(f.header.tensors.map((t) => t.name)).to.deep.equal(['w', 'norm']);
    expect(f.header.metadata).to.deep.equal({ format: 'q4nx' });
    expect(f.header.dataStart % 8).to.equal(0);
    expect(Array.from(tensorData(f, 'norm'))).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(tensorData(f, 'w').length).to.equal(10240);
    expect(() => tensorData(f, 'nope')).to.throw(Q4nxError, /no such tensor/);
  });

  it('accepts entries listed out of data order, as safetensors sorts them', () => {
    const h = `{"b":${entry('U8', [2], [2, 4])},"a":${entry('U8', [2], [0, 2])}}`;
    const f = readQ4nx(raw(h, new Uint8Array(4)));
    expect(f.header.tensors.map((t) => t.name)).to.deep.equal(['a', 'b']);
  });

  it('reads the header alone from a file, without reading its data', () => {
    const dir = mkdtempSync(join(tmpdir(), 'q4nx-'));
    try {
      const size = 1024 * 1024 * 5120;
      const h = new TextEncoder().encode(`{"w":${entry('I8', [1024 * 1024, 5120], [0, size])}}`);
      const path = join(dir, 'model.q4nx');
      writeFileSync(path, raw(h));
      // A sparse 5 GiB file: reading its data would take seconds and more memory than a test may use.
      truncateSync(path, 8 + h.length + size);
      // Reading the header of the same file with no data, timed here, tells what reading a header takes
      // on this machine now; reading the 5 GiB as well would take many times that.
      const bare = join(dir, 'bare.q4nx');
      writeFileSync(bare, raw(h));
      const s0 = performance.now();
      expect(() => readQ4nxHeader(bare)).to.throw(Q4nxError, /need 5368709120 data bytes/);
      const headerMs = performance.now() - s0;
      const t0 = performance.now();
      const header = readQ4nxHeader(path);
      expect(performance.now() - t0).to.be.below(Math.max(1000, 20 * headerMs));
      expect(header.tensors[0]!.shape).to.deep.equal([1024 * 1024, 5120]);
      expect(header.dataBytes).to.equal(size);
      truncateSync(path, 8 + h.length + size - 1);
      expect(() => readQ4nxHeader(path)).to.throw(Q4nxError, /need 5368709120 data bytes/);
      expect(() => readQ4nxHeader(join(dir, 'missing.q4nx'))).to.throw(Q4nxError, /no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('carries Q4nxError across the wire with its fields', () => {
    const e = new Q4nxError('w', 'bad');
    const back = fromWire(e.toWire());
    expect(back).to.be.instanceOf(Q4nxError);
    expect((back as Q4nxError).tensor).to.equal('w');
    expect((fromWire(new Q4nxError(null, 'x').toWire()) as Q4nxError).tensor).to.equal(null);
  });
});

describe('q4nx container: hostile files, each refused with Q4nxError', () => {
  it('a file shorter than the 8-byte header length', () => { refused(new Uint8Array(5), /too short/); });
  it('a header length past the end of the file', () => { refused(raw('{}', new Uint8Array(0), 100n), /past the end/); });
  it('a header length over the 100 MB cap', () => { refused(raw('{}', new Uint8Array(0), BigInt(MAX_HEADER_BYTES + 1)), /over the 100000000-byte cap/); });
  it('a header length near 2^64', () => { refused(raw('{}', new Uint8Array(0), 2n ** 64n - 1n), /cap/); });
  it('a header that is not UTF-8', () => { refused(raw(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), /UTF-8/); });
  it('a header that is not JSON', () => { refused(raw('{"w": '), /not JSON/); });
  it('a header that is not an object', () => { refused(raw('[1, 2]'), /start with/); });
  it('a tensor entry that is not an object', () => { refused(raw('{"w": 5}'), /entry is not an object/, 'w'); });
  it('metadata that is not strings', () => { refused(raw('{"__metadata__": {"a": 1}}'), /__metadata__\.a/); });
  it('an unknown dtype', () => { refused(raw(`{"w":${entry('Q4', [1], [0, 1])}}`, new Uint8Array(1)), /unknown dtype "Q4"/, 'w'); });
  it('a sub-byte dtype', () => { refused(raw(`{"w":${entry('F4', [2], [0, 1])}}`, new Uint8Array(1)), /unknown dtype/, 'w'); });
  it('a negative dimension', () => { refused(raw(`{"w":${entry('U8', [-1], [0, 0])}}`), /shape/, 'w'); });
  it('a fractional dimension', () => { refused(raw(`{"w":${entry('U8', [1.5], [0, 0])}}`), /shape/, 'w'); });
  it('a dimension beyond 2^53', () => { refused(raw(`{"w":${entry('U8', [2 ** 60], [0, 0])}}`), /shape/, 'w'); });
  it('a shape that is not a list', () => { refused(raw(`{"w":${entry('U8', '4', [0, 4])}}`, new Uint8Array(4)), /shape/, 'w'); });
  it('a shape whose size overflows 64 bits', () => {
    refused(raw(`{"w":${entry('F64', [2 ** 52, 2 ** 52, 16], [0, 0])}}`), /needs 2596148429267413814265248164610048 bytes/, 'w');
  });
  it('offsets that are not two integers', () => { refused(raw(`{"w":${entry('U8', [1], [0])}}`, new Uint8Array(1)), /data_offsets/, 'w'); });
  it('offsets out of order (end before begin)', () => { refused(raw(`{"w":${entry('U8', [0], [4, 0])}}`, new Uint8Array(4)), /end before they begin/, 'w'); });
  it('overlapping offsets', () => {
    const h = `{"a":${entry('U8', [4], [0, 4])},"b":${entry('U8', [4], [2, 6])}}`;
    refused(raw(h, new Uint8Array(6)), /overlapping/, 'b');
  });
  it('a gap between tensors', () => {
    const h = `{"a":${entry('U8', [2], [0, 2])},"b":${entry('U8', [2], [3, 5])}}`;
    refused(raw(h, new Uint8Array(5)), /gap/, 'b');
  });
  it('a first tensor that does not start at 0', () => { refused(raw(`{"a":${entry('U8', [2], [1, 3])}}`, new Uint8Array(3)), /gap/, 'a'); });
  it('offsets past the end of the data', () => { refused(raw(`{"a":${entry('U8', [8], [0, 8])}}`, new Uint8Array(4)), /need 8 data bytes, the file holds 4/); });
  it('a size that does not match the shape', () => { refused(raw(`{"a":${entry('BF16', [3], [0, 4])}}`, new Uint8Array(4)), /needs 6 bytes, data_offsets give 4/, 'a'); });
  it('truncated data', () => {
    const good = writeQ4nx([{ name: 'w', dtype: 'I8', shape: [1, 5120], data: new Uint8Array(5120) }]);
    refused(good.subarray(0, good.length - 100), /need 5120 data bytes, the file holds 5020/);
  });
  it('bytes after the last tensor', () => {
    const good = writeQ4nx([{ name: 'w', dtype: 'U8', shape: [2], data: new Uint8Array(2) }]);
    const more = new Uint8Array(good.length + 3);
    more.set(good);
    refused(more, /3 data bytes follow/);
  });
});

describe('q4nx tensor layouts: refusals', () => {
  const info = (shape: number[]) => ({ name: 'w', dtype: 'I8' as const, shape, begin: 0, end: shape.reduce((p, d) => p * d, 1) });
  const code = (f: () => unknown): Q4nxError => {
    try { f(); } catch (e) { expect(e).to.be.instanceOf(Q4nxError); return e as Q4nxError; }
    return expect.fail('not refused');
  };

  it('names each chunk kind by the last dimension', () => {
    expect(quantLayout(info([3, 5120])).kind).to.equal('q4_1');
    expect(quantLayout(info([2, 3, 4736])).kind).to.equal('q4k');
    expect(quantLayout(info([1, 8704])).kind).to.equal('q8');
  });
  it('an unknown chunk size', () => {
    const e = code(() => quantLayout(info([4, 5000])));
    expect(e.reason).to.match(/unknown chunk size 5000/);
    expect(e.tensor).to.equal('w');
  });
  it('a tensor with no tiles', () => { expect(code(() => quantLayout(info([0, 5120]))).reason).to.match(/shorter than its layout needs/); });
  it('a 2-D tensor shorter than its recorded logical shape', () => {
    expect(code(() => quantLayout(info([2, 5120]), [64, 512])).reason).to.match(/needs a 2 x 2 tile grid.*holds 1 x 2.*shorter/);
  });
  it('a 3-D tensor shorter than its logical shape', () => {
    expect(code(() => quantLayout(info([1, 2, 8704]), [32, 600])).reason).to.match(/shorter than its layout needs/);
  });
  it('tiles that are not whole tile rows', () => { expect(code(() => quantLayout(info([3, 5120]), [64, 512])).reason).to.match(/3 tiles are not whole tile rows of 2/); });
  it('a rank-4 chunked tensor', () => { expect(code(() => quantLayout(info([1, 1, 1, 5120]))).reason).to.match(/rank 2 or 3/); });
  it('reads the logical shape key our writer records', () => { expect(logicalShapeKey('w')).to.equal('q4nx.logical_shape.w'); });
});
