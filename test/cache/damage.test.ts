/**
 * Every way a blob file can go bad on disk: each is a miss that removes the entry, then a put
 * compiles exactly once and replaces it, then the entry is a hit with the right bytes.
 */
import { expect } from 'chai';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { BlobCache, identityKey } from '../../src/cache/index.js';
import { HEADER_BYTES, writerFs } from '../../src/cache/blobFile.js';
import { resolveIdentity } from '../../src/cache/identity.js';
import { identity, makeTempDir, patternBody, removeTempDir } from './helpers/fixture.js';

describe('BlobCache with damaged files', () => {
  let dir: string;
  let cache: BlobCache;
  const id = identity(7);
  const body = patternBody(77, 4096);
  let path: string;
  let good: Buffer;

  // Durability is test/cache/durability.test.ts's: here, hundreds of puts would each wait for two fsyncs
  // (the file's and its directory's), most of this file's time on a busy disk, for nothing it checks.
  const fsync = writerFs.fsyncSync;
  before(() => { writerFs.fsyncSync = () => undefined; });
  after(() => { writerFs.fsyncSync = fsync; });

  beforeEach(() => {
    dir = makeTempDir();
    cache = BlobCache.open(dir);
    cache.put(id, body);
    path = cache.blobPath(identityKey(id));
    good = readFileSync(path);
  });
  afterEach(() => {
    cache.close();
    removeTempDir(dir);
  });

  /** Writes `damaged` over the entry's file and checks the miss, the one recompile and the hit after. */
  function expectRecovers(label: string, damaged: Buffer): void {
    writeFileSync(path, damaged);
    expect(cache.get(id), label).to.equal(null);
    expect(existsSync(path), `${label}: bad file removed`).to.equal(false);
    expect(cache.list().map((e) => e.key), `${label}: bad row removed`).to.not.include(identityKey(id));
    // The engine's next step on a miss: compile and put; the entry then hits with the same bytes.
    cache.put(id, body);
    const again = cache.get(id);
    expect(again?.equals(body), label).to.equal(true);
    expect(readFileSync(path).equals(good), `${label}: file replaced`).to.equal(true);
  }

  const identityBytes = () => resolveIdentity(id).canonical.length;

  it('misses on a file truncated at every header offset and across the body', async () => {
    const headerEnd = HEADER_BYTES + identityBytes();
    const offsets = new Set<number>();
    for (let i = 0; i <= headerEnd; i++) offsets.add(i);
    for (let i = headerEnd; i < good.length; i += 97) offsets.add(i);
    offsets.add(good.length - 1);
    for (const n of offsets) expectRecovers(`truncated to ${n}`, good.subarray(0, n));
    expect(offsets.size).to.be.greaterThan(headerEnd);
  });

  it('misses on a bit flipped anywhere in the header and at many places in the body', async () => {
    const headerEnd = HEADER_BYTES + identityBytes();
    const positions: number[] = [];
    for (let i = 0; i < headerEnd; i++) positions.push(i);
    for (let i = headerEnd; i < good.length; i += 61) positions.push(i);
    positions.push(good.length - 1);
    for (const p of positions) {
      const bad = Buffer.from(good);
      bad[p] = bad[p]! ^ (1 << (p % 8));
      expectRecovers(`bit ${p % 8} of byte ${p} flipped`, bad);
    }
  });

  it('misses on an appended byte, an empty file and garbage', async () => {
    expectRecovers('appended', Buffer.concat([good, Buffer.from([0])]));
    expectRecovers('empty', Buffer.alloc(0));
    let x = 12345;
    const garbage = (n: number) => Buffer.from(Array.from({ length: n }, () => (x = (x * 1103515245 + 12345) >>> 0) >>> 24));
    expectRecovers('garbage of the same length', garbage(good.length));
    expectRecovers('short garbage', garbage(40));
    // Garbage behind a good magic and version, as a half-written file of another format might look.
    expectRecovers('garbage behind a good magic', Buffer.concat([good.subarray(0, 12), garbage(good.length - 12)]));
  });

  it("misses on another identity's valid blob copied over this one's", async () => {
    const other = identity(8);
    cache.put(other, patternBody(88, 4096));
    copyFileSync(cache.blobPath(identityKey(other)), path);
    expectRecovers('foreign (after copy)', readFileSync(path));
    // The other entry is untouched.
    expect(cache.get(other)).to.deep.equal(patternBody(88, 4096));
    // Same for an identity differing only in a -0 constant.
    const negZero = { ...id, region: { c: new Float64Array([-0]) } };
    const posZero = { ...id, region: { c: new Float64Array([0]) } };
    cache.put(negZero, patternBody(1, 64));
    cache.put(posZero, patternBody(2, 64));
    copyFileSync(cache.blobPath(identityKey(negZero)), cache.blobPath(identityKey(posZero)));
    expect(cache.get(posZero)).to.equal(null);
    expect(cache.get(negZero)).to.deep.equal(patternBody(1, 64));
  });
});
