/**
 * Output files and the farm on a real full disk: a tmpfs of a few KB mounted for the test (root only;
 * skipped with a line saying why where mount is refused). `contracts --report` fails typed and keeps the
 * previous report byte for byte; a farm whose cache fills up fails typed and non-zero, never exit 0.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chainProgram } from '../jobs/helpers.js';
import { cliHere } from './inProcess.js';

/** The CLI in this process (see inProcess.ts): a full disk is no reason for a process of its own. */
async function cli(args: readonly string[], cwd: string) {
  const r = await cliHere(args, { cwd, env: { NPU_OFFLOAD_CACHE_DIR: join(cwd, '.cache') } });
  return { exit: r.status, stdout: r.out, stderr: r.err };
}

/** Mounts a tmpfs of `size` at `at`; false when this machine will not (not root, no mount). */
function mountTmpfs(at: string, size: string): boolean {
  mkdirSync(at, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at]).status === 0;
}

/** Fills the file system at `at` to its last byte. */
function fill(at: string): void {
  spawnSync('sh', ['-c', `cat /dev/zero > ${join(at, 'filler')}`]);
}

describe('a full disk (tmpfs)', function () {
  let dir: string;
  let disk: string;
  let mounted = false;
  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'npuo-full-'));
    disk = join(dir, 'disk');
    mounted = mountTmpfs(disk, '256k');
    if (!mounted) this.skip(); // mount needs root: this machine cannot make a small full disk
  });
  afterEach(() => {
    if (mounted) execFileSync('umount', [disk]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('contracts --report: typed, exit 1, the previous report byte for byte, no temporary file', async () => {
    const file = join(disk, 'r.html');
    const previous = Buffer.from('<html>the previous report</html>\n');
    writeFileSync(file, previous);
    fill(disk);
    const r = await cli(['contracts', '--target', 'xdna2', '--op', 'exp', '--bulk', '256', '--report', file], dir);
    expect(r.exit, r.stderr).to.equal(1);
    expect(r.stderr).to.match(/\[WriteFailed\].*r\.html.*ENOSPC/);
    expect(readFileSync(file).equals(previous)).to.equal(true);
    expect(readdirSync(disk).sort()).to.deep.equal(['filler', 'r.html']);
  });

  it('contracts --report --json to a new path: the error as JSON, exit 1, nothing created', async () => {
    const file = join(disk, 'new.html');
    fill(disk);
    const r = await cli(['contracts', '--target', 'xdna2', '--op', 'exp', '--bulk', '256', '--report', file, '--json'], dir);
    expect(r.exit, r.stderr).to.equal(1);
    // One document on stdout, the error: the report is written before the sweep's results are printed.
    const doc = JSON.parse(r.stdout) as { error: { code: string; path: string } };
    expect(doc.error.code).to.equal('WriteFailed');
    expect(doc.error.path).to.equal(file);
    expect(existsSync(file)).to.equal(false);
    expect(readdirSync(disk)).to.deep.equal(['filler']);
  });

  it('farm with its cache on a full disk: typed and non-zero, with and without --json', async () => {
    const progs = join(dir, 'progs');
    mkdirSync(progs);
    for (let i = 0; i < 6; i++) writeFileSync(join(progs, `p${i}.json`), JSON.stringify(chainProgram(2, i)));
    const cache = join(disk, 'c');
    // A cache made while there was room, then the disk fills: the case that once exited 0 silently.
    expect((await cli(['farm', progs, '--target', 'cpu', '--workers', '1', '--cache-dir', cache], dir)).exit).to.equal(0);
    for (let i = 6; i < 12; i++) writeFileSync(join(progs, `p${i}.json`), JSON.stringify(chainProgram(2, i)));
    fill(disk);
    const plain = await cli(['farm', progs, '--target', 'cpu', '--workers', '1', '--cache-dir', cache], dir);
    expect(plain.exit, plain.stderr).to.equal(1);
    expect(plain.stderr).to.match(/\[(CacheUnavailable|CacheError)\]|refused/);
    const json = await cli(['farm', progs, '--target', 'cpu', '--workers', '1', '--cache-dir', cache, '--json'], dir);
    expect(json.exit, json.stderr).to.equal(1);
    const doc = JSON.parse(json.stdout) as { error?: { code: string }; refused?: unknown[] };
    expect(doc.error?.code === 'CacheUnavailable' || (doc.refused?.length ?? 0) > 0, json.stdout).to.equal(true);
  });
});
