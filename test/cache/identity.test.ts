import { expect } from 'chai';
import { CacheError } from '../../src/errors/index.js';
import { canonicalJson, identityKey, type BlobIdentity } from '../../src/cache/index.js';
import { identity } from './helpers/fixture.js';

function withRegion(region: unknown): BlobIdentity {
  return { ...identity(), region };
}

describe('cache identity', () => {
  it('is a stable sha256 hex key', () => {
    const k = identityKey(identity());
    expect(k).to.match(/^[0-9a-f]{64}$/);
    expect(identityKey(identity())).to.equal(k);
  });

  it('changes when any single part changes', () => {
    const base = identity();
    const variants: BlobIdentity[] = [
      { ...base, device: 'npu4:lnl' },
      { ...base, compiler: 'openvino' },
      { ...base, compilerVersion: '1.4.1' },
      { ...base, options: { ...base.options, opt: 3 } },
      { ...base, options: { ...base.options, extra: false } },
      { ...base, options: { ...base.options, tiles: [4, 5] } },
      identity(1),
    ];
    const keys = new Set([identityKey(base), ...variants.map(identityKey)]);
    expect(keys.size).to.equal(variants.length + 1);
  });

  it('tells apart every number, -0 from 0, NaN, infinities, and numbers from strings', () => {
    const values: unknown[] = [
      0, -0, NaN, Infinity, -Infinity, 1, -1, 0.1 + 0.2, 0.3, 2 ** 53, 2 ** 53 + 2, 5e-324, -5e-324,
      Number.MAX_VALUE, 1e21, '0', '-0', 'nan', 'inf', null, true, 1n, [0], [-0], [undefined], [null],
      { $f64: '-0' }, { $$f64: '-0' }, { a: 0 }, { a: -0 }, {},
    ];
    const keys = values.map((v) => identityKey(withRegion({ c: v })));
    expect(new Set(keys).size).to.equal(values.length);
    expect(identityKey(withRegion({ c: -0 }))).to.equal(identityKey(withRegion({ c: -0 })));
    expect(identityKey(withRegion({ c: NaN }))).to.equal(identityKey(withRegion({ c: 0 / 0 })));
  });

  it('serializes typed arrays by their bytes and kind', () => {
    const f = new Float32Array([1, 2, 3]);
    const regions: unknown[] = [
      f, new Float32Array([1, 2, 4]), new Int32Array(f.buffer), new Float32Array([0]), new Float32Array([-0]),
      new Float64Array([NaN]), new Float64Array(new BigUint64Array([0x7ff8000000000001n]).buffer),
      new Uint8Array([1, 2, 3]), [1, 2, 3], new Float32Array(new Float32Array([9, 1, 2, 3]).buffer, 4, 3).slice(0, 2),
    ];
    const keys = regions.map((r) => identityKey(withRegion(r)));
    expect(new Set(keys).size).to.equal(regions.length);
    // A view is its bytes, not the whole buffer behind it.
    const view = new Float32Array(new Float32Array([9, 1, 2, 3]).buffer, 4, 3);
    expect(identityKey(withRegion(view))).to.equal(identityKey(withRegion(f)));
    // Buffer is a Uint8Array.
    expect(identityKey(withRegion(Buffer.from([1, 2, 3])))).to.equal(identityKey(withRegion(new Uint8Array([1, 2, 3]))));
  });

  it('does not depend on key order in objects', () => {
    const a = { device: 'd', compiler: 'c', compilerVersion: '1', options: { x: 1, y: { p: 1, q: [1, { s: 2, r: 3 }] } }, region: { b: 2, a: 1 } };
    const b = { region: { a: 1, b: 2 }, options: { y: { q: [1, { r: 3, s: 2 }], p: 1 }, x: 1 }, compilerVersion: '1', compiler: 'c', device: 'd' };
    expect(identityKey(a)).to.equal(identityKey(b));
    expect(canonicalJson({ z: 1, a: [2, { y: 0, b: -0 }] })).to.equal('{"a":[2,{"b":{"$f64":"-0"},"y":0}],"z":1}');
  });

  it('writes valid JSON', () => {
    const text = canonicalJson({ v: [NaN, -0, Infinity, 1n, new Int8Array([-1]), undefined, 'x'], $k: 1 });
    expect(JSON.parse(text)).to.deep.equal({
      $$k: 1,
      v: [{ $f64: 'nan' }, { $f64: '-0' }, { $f64: 'inf' }, { $bigint: '1' }, { $bytes: { data: '/w==', kind: 'Int8Array' } }, { $undefined: true }, 'x'],
    });
  });

  it('refuses values that are not plain data with a typed error naming where', () => {
    // eslint-disable-next-line @typescript-eslint/no-extraneous-class -- an instance of an empty class is one of the bad inputs
    const bad: unknown[] = [new Map([[1, 2]]), new Set([1]), () => 1, Symbol('s'), new (class Foo {})()];
    for (const v of bad) {
      expect(() => identityKey(withRegion({ list: [0, v] }))).to.throw(CacheError).with.property('path', '/region/list/1');
    }
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => identityKey(withRegion(cyclic))).to.throw(CacheError, /cycle/);
    expect(() => identityKey({ ...identity(), device: '' })).to.throw(CacheError).with.property('path', '/device');
    expect(() => identityKey({ ...identity(), options: null as unknown as Record<string, unknown> })).to.throw(CacheError);
  });
});
