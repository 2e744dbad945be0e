/**
 * Through the engine and the CLI: a cache that cannot open fails its jobs with CacheUnavailable naming
 * the path and the cause (not ActorDown after a restart loop), `farm` says so once, and a damaged index
 * is moved aside and rebuilt rather than failing every job.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BlobCache, CACHE_SCHEMA_VERSION } from '../../src/cache/index.js';
import { CacheUnavailable } from '../../src/errors/index.js';
import { main } from '../../src/cli/main.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { STEP_PROGRAM, chainProgram, rejectsWith, stepInputs, tempDir } from '../jobs/helpers.js';

function capture() {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l: string) => { outs.push(l); }, err: (l: string) => { errs.push(l); } };
}

describe('cache unavailable or damaged, through the engine and the CLI', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine | undefined;
  let blocked: string;
  beforeEach(() => {
    tmp = tempDir('npuo-cache-');
    writeFileSync(join(tmp.dir, 'file'), 'not a directory');
    blocked = join(tmp.dir, 'file', 'cache');
  });
  afterEach(async () => { await engine?.close(); engine = undefined; tmp.remove(); });

  it('fails every job with CacheUnavailable naming the path and ENOTDIR, with no restart loop', async () => {
    engine = createEngine({ cacheDir: blocked, restart: { max: 5, windowMs: 60_000 } });
    const run = () => engine!.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result;
    const failures = await Promise.all([run(), run(), engine.compileOnly(chainProgram(2), 'cpu')].map((p) => rejectsWith(p, 'CacheUnavailable')));
    for (const e of failures) {
      expect(e).to.be.instanceOf(CacheUnavailable);
      expect((e as CacheUnavailable).path).to.equal(blocked);
      expect((e as CacheUnavailable).reason).to.contain('ENOTDIR');
    }
  });

  it('rebuilds a damaged index when the engine opens it, and runs the job', async () => {
    const dir = join(tmp.dir, 'cache');
    // One program compiled into the cache, then the index overwritten.
    const first = createEngine({ cacheDir: dir });
    await first.compileOnly(chainProgram(2, 5), 'cpu');
    await first.close();
    const before = BlobCache.open(dir);
    const keys = before.list().map((e) => e.key);
    before.close();
    expect(keys.length).to.be.greaterThan(0);
    const root = join(dir, `v${CACHE_SCHEMA_VERSION}`);
    writeFileSync(join(root, 'index.sqlite'), 'this is not an index');
    engine = createEngine({ cacheDir: dir });
    const r = await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result;
    expect([...r.results['y']!.data]).to.have.length(6);
    await engine.close();
    engine = undefined;
    expect(readdirSync(root).filter((n) => n.startsWith('index.sqlite.damaged-'))).to.have.length(1);
    // The first program's entries were never touched by this engine's job: they came back from their files.
    const after = BlobCache.open(dir, { repairIndex: false });
    try {
      expect(after.list().map((e) => e.key)).to.include.members(keys);
    } finally {
      after.close();
    }
  });

  it('farm reports a cache that cannot open once, not once per program', async () => {
    const progs = join(tmp.dir, 'progs');
    mkdirSync(progs);
    for (let i = 0; i < 4; i++) writeFileSync(join(progs, `p${i}.json`), JSON.stringify(chainProgram(2, i)));
    const io = capture();
    expect(await main(['farm', progs, '--target', 'cpu', '--cache-dir', blocked], io)).to.equal(1);
    expect(io.errs).to.have.length(1);
    expect(io.errs[0]).to.match(/^error \[CacheUnavailable\]: the blob cache at .*file\/cache cannot be used: .*ENOTDIR/);
    expect(io.outs).to.deep.equal([]);
    const j = capture();
    expect(await main(['farm', progs, '--target', 'cpu', '--cache-dir', blocked, '--json'], j)).to.equal(1);
    expect(j.outs).to.have.length(1);
    const doc = JSON.parse(j.outs[0]!) as { error: { code: string; path: string; reason: string } };
    expect(doc.error).to.include({ code: 'CacheUnavailable', path: blocked });
    expect(existsSync(blocked)).to.equal(false);
  });

  it('run reports CacheUnavailable with its code on stderr, exit 1', async () => {
    const prog = join(tmp.dir, 'p.json');
    const inputs = join(tmp.dir, 'in.json');
    writeFileSync(prog, JSON.stringify(STEP_PROGRAM));
    writeFileSync(inputs, JSON.stringify(stepInputs(1)));
    const io = capture();
    expect(await main(['run', prog, '--target', 'cpu', '--inputs', inputs, '--cache-dir', blocked], io)).to.equal(1);
    expect(io.errs).to.have.length(1);
    expect(io.errs[0]).to.match(/^error \[CacheUnavailable\]: .*ENOTDIR/);
  });
});
