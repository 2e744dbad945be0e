import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidOptions, ResourceLimit, UsageError } from '../../src/errors/index.js';
import { DEFAULT_MAX_FILE_BYTES, maxFileBytes, openRegularFile, readRegularFile } from '../../src/io/files.js';
import { ensureDir, writeOutputFile } from '../../src/io/write.js';

describe('io: reading user files and creating outputs', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'npuo-io-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('readRegularFile reads a regular file whole', () => {
    writeFileSync(join(dir, 'a'), 'hello');
    expect(readRegularFile(join(dir, 'a')).toString()).to.equal('hello');
  });

  it('refuses a FIFO without blocking, a device, a directory and a missing file, naming each', () => {
    const f = join(dir, 'fifo');
    execFileSync('mkfifo', [f]);
    expect(() => readRegularFile(f, { what: 'program' })).to.throw(UsageError, /cannot read program .*fifo: it is a FIFO \(named pipe\), not a regular file/);
    expect(() => openRegularFile('/dev/zero')).to.throw(UsageError, /\/dev\/zero: it is a character device/);
    expect(() => readRegularFile(dir)).to.throw(UsageError, /it is a directory, not a regular file/);
    expect(() => readRegularFile(join(dir, 'none'))).to.throw(UsageError, /none: no such file or directory \(ENOENT\)/);
  });

  it('refuses a file past maxBytes with ResourceLimit file-bytes, at exactly the limit it reads', () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(101));
    let err: unknown;
    try { readRegularFile(join(dir, 'big'), { maxBytes: 100 }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(ResourceLimit);
    expect((err as ResourceLimit).toWire()).to.deep.include({ code: 'ResourceLimit', what: 'file-bytes', needed: 101, max: 100 });
    expect(readRegularFile(join(dir, 'big'), { maxBytes: 101 }).length).to.equal(101);
  });

  it('a custom failure types the refusal', () => {
    expect(() => readRegularFile('/dev/null', { fail: (p, why) => new InvalidOptions(p, why) })).to.throw(InvalidOptions, /character device/);
  });

  it('maxFileBytes: 256 MiB by default, the environment raises it, garbage is InvalidOptions', () => {
    expect(maxFileBytes({})).to.equal(DEFAULT_MAX_FILE_BYTES).and.to.equal(256 * 2 ** 20);
    expect(maxFileBytes({ NPU_OFFLOAD_MAX_FILE_BYTES: '1073741824' })).to.equal(2 ** 30);
    for (const bad of ['0', '-1', '1.5', 'lots', '1e400']) {
      expect(() => maxFileBytes({ NPU_OFFLOAD_MAX_FILE_BYTES: bad }), bad).to.throw(InvalidOptions, /NPU_OFFLOAD_MAX_FILE_BYTES/);
    }
  });

  it('ensureDir creates every missing component and accepts an existing directory', () => {
    const deep = join(dir, 'a', 'b', 'c');
    ensureDir(deep);
    expect(statSync(deep).isDirectory()).to.equal(true);
    ensureDir(deep);
  });

  it('ensureDir fails typed under /proc (where recursive mkdirSync spins) and through a file', () => {
    expect(() => ensureDir('/proc/1/npuo/x')).to.throw(UsageError, /cannot create directory \/proc\/1\/npuo\/x: cannot create \/proc\/1\/npuo: the file system does not allow creating it \(ENOENT\)/);
    writeFileSync(join(dir, 'FILE'), 'x');
    expect(() => ensureDir(join(dir, 'FILE', 'sub'))).to.throw(UsageError, /FILE exists and is not a directory/);
    expect(() => ensureDir('/sys/kernel/npuo')).to.throw(UsageError, /cannot create \/sys\/kernel\/npuo: /);
  });

  it('writeOutputFile writes, refuses to replace when exclusive, and names a path it cannot write', () => {
    const p = join(dir, 'k');
    writeOutputFile(p, 'one', { exclusive: true, mode: 0o600 });
    expect(readFileSync(p, 'utf8')).to.equal('one');
    expect(statSync(p).mode & 0o777).to.equal(0o600);
    expect(() => writeOutputFile(p, 'two', { exclusive: true })).to.throw(UsageError, /cannot write .*k: it already exists \(EEXIST\)/);
    expect(readFileSync(p, 'utf8')).to.equal('one');
    expect(() => writeOutputFile('/sys/kernel/npuo', 'x')).to.throw(UsageError, /cannot write \/sys\/kernel\/npuo: /);
  });
});
