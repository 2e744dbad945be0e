/**
 * writeOutputFile is atomic: a write that fails part way (a full disk) leaves the previous file byte for
 * byte, creates nothing at a new path, leaves no temporary file, and is WriteFailed naming the path.
 * The disk is made full by injected file-system calls whose write answers ENOSPC after some bytes.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError, WriteFailed } from '../../src/errors/index.js';
import { writeOutputFile, type WriterFs } from '../../src/io/write.js';

/** The real calls, except that the disk holds `room` bytes of writes in all, then says ENOSPC. */
function fullDisk(room: number): WriterFs {
  let left = room;
  return {
    openSync: (p, f, m) => fs.openSync(p, f, m),
    writeSync: (fd, d, o, l) => {
      if (left <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
      const n = fs.writeSync(fd, d, o, Math.min(l, left));
      left -= n;
      return n;
    },
    fsyncSync: (fd) => { fs.fsyncSync(fd); }, closeSync: (fd) => { fs.closeSync(fd); },
    renameSync: (a, b) => { fs.renameSync(a, b); }, linkSync: (a, b) => { fs.linkSync(a, b); }, unlinkSync: (p) => { fs.unlinkSync(p); },
  };
}

describe('io: writeOutputFile is atomic', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'npuo-atomic-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const big = 'x'.repeat(64 * 1024);

  it('a full disk keeps the previous file byte for byte, and says WriteFailed naming the path', () => {
    const p = join(dir, 'report.html');
    writeFileSync(p, 'the previous report');
    expect(() => writeOutputFile(p, big, { fs: fullDisk(4096) })).to.throw(WriteFailed, new RegExp(`cannot write ${p}: no space left on the device \\(ENOSPC\\)`));
    expect(readFileSync(p, 'utf8')).to.equal('the previous report');
    expect(readdirSync(dir)).to.deep.equal(['report.html']);
  });

  it('a full disk creates nothing at a new path and leaves no temporary file', () => {
    const p = join(dir, 'new.html');
    let err: unknown;
    try { writeOutputFile(p, big, { fs: fullDisk(4096) }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(WriteFailed);
    expect((err as WriteFailed).path).to.equal(p);
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it('an exclusive write on a full disk leaves nothing, and a key keeps its mode when it succeeds', () => {
    const p = join(dir, 'key');
    expect(() => writeOutputFile(p, big, { exclusive: true, mode: 0o600, fs: fullDisk(10) })).to.throw(WriteFailed);
    expect(readdirSync(dir)).to.deep.equal([]);
    writeOutputFile(p, 'secret', { exclusive: true, mode: 0o600 });
    expect(statSync(p).mode & 0o777).to.equal(0o600);
    expect(() => writeOutputFile(p, 'other', { exclusive: true })).to.throw(UsageError, /EEXIST/);
    expect(readFileSync(p, 'utf8')).to.equal('secret');
    expect(readdirSync(dir)).to.deep.equal(['key']);
  });

  it('an exclusive write where the file system has no hard links still writes once and never replaces', () => {
    const noLinks: WriterFs = { ...fullDisk(Infinity), linkSync: () => { throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' }); } };
    const p = join(dir, 'key');
    writeOutputFile(p, 'secret', { exclusive: true, mode: 0o600, fs: noLinks });
    expect(readFileSync(p, 'utf8')).to.equal('secret');
    expect(statSync(p).mode & 0o777).to.equal(0o600);
    expect(() => writeOutputFile(p, 'other', { exclusive: true, fs: noLinks })).to.throw(UsageError, /EEXIST/);
    expect(readFileSync(p, 'utf8')).to.equal('secret');
    expect(readdirSync(dir)).to.deep.equal(['key']);
  });

  it('replaces a previous file whole when the write succeeds', () => {
    const p = join(dir, 'out');
    writeFileSync(p, 'old');
    writeOutputFile(p, big);
    expect(readFileSync(p, 'utf8')).to.equal(big);
    expect(readdirSync(dir)).to.deep.equal(['out']);
  });
});
