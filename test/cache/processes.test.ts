/**
 * Several processes on one cache directory, and writers that die mid-put. Child processes run the
 * compiled helpers/cacheChild.js next to this file, so the test works from any build folder.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BlobCache, CACHE_SCHEMA_VERSION, identityKey } from '../../src/cache/index.js';
import { writeBlobFile } from '../../src/cache/blobFile.js';
import { resolveIdentity } from '../../src/cache/identity.js';
import { checkBody, filesEndingWith, identity, makeTempDir, patternBody, removeTempDir } from './helpers/fixture.js';

const CHILD = fileURLToPath(new URL('./helpers/cacheChild.js', import.meta.url));

function child(args: string[]): { proc: ChildProcess; exited: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const proc = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>((res) => {
    proc.on('exit', (code, signal) => res({ code, signal, stderr }));
  });
  return { proc, exited };
}

function firstLine(proc: ChildProcess): Promise<string> {
  return new Promise((res, rej) => {
    let text = '';
    proc.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) res(text.split('\n')[0]!);
    });
    proc.on('exit', () => rej(new Error(`child exited before a line: ${text}`)));
  });
}

/** Reads a child's stdout line by line: each call resolves with the next line. */
function lines(proc: ChildProcess): () => Promise<string> {
  const ready: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let text = '';
  proc.stdout!.on('data', (d: Buffer) => {
    text += d.toString();
    let nl: number;
    while ((nl = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line); else ready.push(line);
    }
  });
  proc.on('exit', () => { for (const w of waiting.splice(0)) w(`(exited; left: ${text})`); });
  return () => new Promise((res) => {
    const l = ready.shift();
    if (l !== undefined) res(l); else waiting.push(res);
  });
}

/** A pid no process has: one of a child that has exited. */
async function deadPid(): Promise<number> {
  const proc = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => proc.on('exit', r));
  return proc.pid!;
}

/** Every committed entry of `dir` loads intact or not at all, and no blob file lacks a row. */
function expectConsistent(dir: string): void {
  const cache = BlobCache.open(dir);
  try {
    expect(filesEndingWith(cache.blobDir, '.tmp'), 'temp files of dead writers swept at open').to.deep.equal([]);
    for (const n of [0, 1]) {
      const got = cache.get(identity(n));
      if (got !== null) expect(checkBody(got), 'a hit is an intact body').to.equal(true);
    }
    const v = cache.verify();
    expect(v.bad).to.deep.equal([]);
    const keys = new Set(cache.list().map((e) => e.key));
    for (const name of filesEndingWith(cache.blobDir, '.blob')) expect(keys.has(name.slice(0, 64)), name).to.equal(true);
  } finally {
    cache.close();
  }
}

describe('BlobCache across processes and crashes', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => { dir = makeTempDir(); });
  afterEach(() => removeTempDir(dir));

  /** The single entry of identity(), checked against its file, the body it holds, and a clean folder. */
  function expectOnlyEntry(seed: number, length: number): void {
    const cache = BlobCache.open(dir);
    try {
      const entries = cache.list();
      expect(entries.map((e) => e.key)).to.deep.equal([identityKey(identity())]);
      expect(cache.get(identity())).to.deep.equal(patternBody(seed, length));
      // The row describes the file the last rename left, because rename and row share the write lock.
      expect(entries[0]!.size).to.equal(statSync(cache.blobPath(entries[0]!.key)).size);
      expect(cache.verify()).to.deep.include({ bad: [], reindexed: [], swept: [] });
      expect(filesEndingWith(cache.blobDir, '.blob')).to.deep.equal([`${identityKey(identity())}.blob`]);
      expect(filesEndingWith(cache.blobDir, '.tmp')).to.deep.equal([]);
    } finally {
      cache.close();
    }
  }

  it('keeps the committed entry when a second process\'s put of the same key fails mid-write', async () => {
    const first = BlobCache.open(dir);
    first.put(identity(), patternBody(1, 20_000));
    first.close();
    const second = child(['paused', dir, '2', '30000']);
    const out = lines(second.proc);
    expect(await out()).to.equal('paused');
    // Half its temp file is on disk; readers see the committed entry only.
    const reader = BlobCache.open(dir);
    try {
      expect(filesEndingWith(reader.blobDir, '.tmp')).to.have.length(1);
      expect(reader.get(identity())).to.deep.equal(patternBody(1, 20_000));
    } finally {
      reader.close();
    }
    second.proc.stdin!.end('fail\n');
    expect([await out(), await out()]).to.deep.equal(['put failed CacheError', 'got 1']);
    expect((await second.exited).code).to.equal(0);
    // The failed writer removed its own temp file: no open has swept the folder since.
    expect(filesEndingWith(join(dir, `v${CACHE_SCHEMA_VERSION}`, 'blobs'), '.tmp')).to.deep.equal([]);
    expectOnlyEntry(1, 20_000);
  });

  it('the last rename wins when two processes put one key at once, and its row describes its file', async () => {
    const slow = child(['paused', dir, '3', '30000']);
    const out = lines(slow.proc);
    expect(await out()).to.equal('paused');
    // A second writer puts the same key from start to end while the first is halfway through.
    const fast = child(['put', dir, '4', '1', String(Date.now())]);
    expect(await fast.exited).to.include({ code: 0 });
    const between = BlobCache.open(dir);
    try {
      expect(between.get(identity())).to.deep.equal(patternBody(4000, 1000 + ((4000 * 7919) % 60_000)));
    } finally {
      between.close();
    }
    slow.proc.stdin!.end('go\n');
    expect([await out(), await out()]).to.deep.equal(['put ok', 'got 3']);
    expect((await slow.exited).code).to.equal(0);
    expectOnlyEntry(3, 30_000);
  });

  it('leaves nothing that loads wrongly when a writer is killed at random points', async () => {
    for (let round = 0; round < 10; round++) {
      const k = child(['loop', dir, String(round + 1)]);
      await firstLine(k.proc);
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      k.proc.kill('SIGKILL');
      expect((await k.exited).signal).to.equal('SIGKILL');
      expectConsistent(dir);
    }
  });

  it('never uses a blob file that has no index row; verify and gc re-index it, or sweep it when damaged', async () => {
    const cache = BlobCache.open(dir);
    try {
      // A crash between the blob's rename and its row leaves exactly this.
      const r = resolveIdentity(identity());
      writeBlobFile(cache.blobDir, r.key, r.canonical, patternBody(9, 500));
      expect(cache.get(identity())).to.equal(null);
      cache.put(identity(), patternBody(10, 600));
      expect(cache.get(identity())).to.deep.equal(patternBody(10, 600));
      // A whole orphan of another key carries its identity: verify gives it its row back.
      const o = resolveIdentity(identity(1));
      writeBlobFile(cache.blobDir, o.key, o.canonical, patternBody(11, 500));
      const v = cache.verify();
      expect(v.swept).to.deep.equal([]);
      expect(v.reindexed.map((e) => [e.key, e.device, e.compiler, e.compilerVersion])).to.deep.equal([[o.key, 'xdna2:aie2p', 'iron', '1.4.0']]);
      expect(v.reindexed[0]!.size).to.equal(statSync(cache.blobPath(o.key)).size);
      expect(cache.get(identity(1))).to.deep.equal(patternBody(11, 500));
      // A damaged orphan is swept, by verify and by gc alike.
      const p = resolveIdentity(identity(2));
      writeBlobFile(cache.blobDir, p.key, p.canonical, patternBody(12, 500));
      const damaged = readFileSync(cache.blobPath(p.key));
      damaged[damaged.length - 1]! ^= 1;
      writeFileSync(cache.blobPath(p.key), damaged);
      expect(cache.verify()).to.deep.include({ swept: [cache.blobPath(p.key)], reindexed: [] });
      writeFileSync(cache.blobPath(p.key), damaged);
      cache.gc({ maxBytes: 1e9 });
      expect(existsSync(cache.blobPath(p.key))).to.equal(false);
      expect(cache.get(identity(2))).to.equal(null);
      expect(cache.get(identity())).to.deep.equal(patternBody(10, 600));
    } finally {
      cache.close();
    }
  });

  it('sweeps temp files of dead writers and old ones at open and on gc, keeps live fresh ones', async () => {
    const key = identityKey(identity());
    const cache = BlobCache.open(dir);
    const blobs = cache.blobDir;
    cache.close();
    const dead = join(blobs, `${key}.${await deadPid()}.aaaa.tmp`);
    const old = join(blobs, `${key}.${process.pid}.bbbb.tmp`);
    const fresh = join(blobs, `${key}.${process.pid}.cccc.tmp`);
    for (const p of [dead, old, fresh]) writeFileSync(p, 'partial');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    utimesSync(old, twoMinutesAgo, twoMinutesAgo);
    BlobCache.open(dir).close();
    expect(readdirSync(blobs).sort()).to.deep.equal([fresh.slice(blobs.length + 1)]);
    const again = BlobCache.open(dir);
    try {
      writeFileSync(dead, 'partial');
      again.gc({ maxBytes: 1e9 });
      expect(existsSync(dead)).to.equal(false);
      expect(existsSync(fresh)).to.equal(true);
      expect(again.get(identity())).to.equal(null);
    } finally {
      again.close();
    }
  });
});
