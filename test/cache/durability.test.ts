/**
 * The order of the calls that make a put durable: the temp file's bytes reach the disk (fsync) before a
 * rename gives them the blob's name, and the directory is synced after the rename. Observed through
 * the writer's internal fs seam; the calls themselves are the real ones.
 */
import { expect } from 'chai';
import { basename } from 'node:path';
import { BlobCache, identityKey } from '../../src/cache/index.js';
import { writerFs } from '../../src/cache/blobFile.js';
import { identity, makeTempDir, patternBody, removeTempDir } from './helpers/fixture.js';

type Seam = typeof writerFs;

describe('BlobCache durability: fsync before rename', () => {
  let dir: string;
  let cache: BlobCache;
  const saved: Seam = { ...writerFs };
  beforeEach(() => { dir = makeTempDir(); cache = BlobCache.open(dir); });
  afterEach(() => {
    Object.assign(writerFs, saved);
    cache.close();
    removeTempDir(dir);
  });

  /** Records each seam call as `call name`, naming files by their base name (a directory as `dir`). */
  function record(): string[] {
    const log: string[] = [];
    const names = new Map<number, string>();
    const name = (p: unknown) => (String(p) === cache.blobDir ? 'dir' : basename(String(p)).replace(/\.\d+\.[0-9a-f]+\.tmp$/, '.tmp'));
    writerFs.openSync = ((path: string, flags: string, mode?: number) => {
      const fd = saved.openSync(path, flags, mode);
      names.set(fd, name(path));
      log.push(`open ${name(path)}`);
      return fd;
    }) as Seam['openSync'];
    writerFs.writeSync = ((fd: number, bytes: Uint8Array, offset: number, length: number) => {
      log.push(`write ${names.get(fd)!}`);
      return saved.writeSync(fd, bytes, offset, length);
    }) as Seam['writeSync'];
    writerFs.fsyncSync = (fd: number) => { log.push(`fsync ${names.get(fd)!}`); saved.fsyncSync(fd); };
    writerFs.closeSync = (fd: number) => { log.push(`close ${names.get(fd)!}`); saved.closeSync(fd); };
    writerFs.renameSync = (from, to) => { log.push(`rename ${name(from)} ${name(to)}`); saved.renameSync(from, to); };
    return log;
  }

  it('syncs the temp file, then renames it, then syncs the directory', () => {
    const key = identityKey(identity());
    const log = record();
    cache.put(identity(), patternBody(1, 100_000));
    const tmp = `${key}.tmp`;
    const blob = `${key}.blob`;
    expect(log.filter((l) => !l.startsWith('write'))).to.deep.equal([
      `open ${tmp}`, `fsync ${tmp}`, `close ${tmp}`, `rename ${tmp} ${blob}`, 'open dir', 'fsync dir', 'close dir',
    ]);
    // Every byte was written before the sync that makes them durable.
    const lastWrite = log.lastIndexOf(`write ${tmp}`);
    expect(lastWrite).to.be.greaterThan(0);
    expect(lastWrite).to.be.lessThan(log.indexOf(`fsync ${tmp}`));
    expect(cache.get(identity())).to.deep.equal(patternBody(1, 100_000));
  });

  it('leaves the old entry and no temp file when the sync before the rename fails', () => {
    cache.put(identity(), patternBody(1, 1000));
    writerFs.fsyncSync = () => { throw Object.assign(new Error('EIO: i/o error, fsync (injected)'), { code: 'EIO' }); };
    expect(() => cache.put(identity(), patternBody(2, 2000))).to.throw(/EIO/);
    Object.assign(writerFs, saved);
    expect(cache.get(identity())).to.deep.equal(patternBody(1, 1000));
    expect(cache.verify()).to.deep.include({ bad: [], reindexed: [], swept: [] });
  });
});
