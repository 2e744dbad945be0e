/** The repack cache slot lock: one process fills a slot while another waits, then finds the hit. */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheKey, packCached } from '../../../src/model/pack/cache.js';
import { withSlotLock } from '../../../src/model/pack/slotLock.js';
import { Workspace } from './helpers.js';

const child = fileURLToPath(new URL('./fixtures/packCachedChild.js', import.meta.url));

function runChild(gguf: string, root: string): Promise<{ hit: boolean; dir: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [child, gguf, root], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`)); else resolve(JSON.parse(stdout) as { hit: boolean; dir: string });
    });
  });
}

describe('gguf pack --cache: one writer per slot', function () {
  this.timeout(120_000);
  let ws: Workspace;
  beforeEach(() => { ws = new Workspace(); });
  afterEach(() => ws.remove());

  it('two processes packing the same GGUF at once: one packs, the other waits and finds the hit', async () => {
    const g = ws.tiny('m.gguf', { type: 'Q8_0' });
    const root = ws.path('cache');
    const [a, b] = await Promise.all([runChild(g, root), runChild(g, root)]);
    expect([a.hit, b.hit].sort()).to.deep.equal([false, true]);
    expect(a.dir).to.equal(b.dir);
    expect(existsSync(join(a.dir, 'model.q4nx'))).to.equal(true);
    expect(existsSync(`${a.dir}.lock`)).to.equal(false);
  });

  it('takes over a lock whose owner is gone', () => {
    const g = ws.tiny('m.gguf', { type: 'Q4_0' });
    const root = ws.path('cache');
    mkdirSync(root, { recursive: true });
    const dir = join(root, cacheKey(g));
    // No process has pid 2^22 + 1 on Linux (pid_max is at most 2^22).
    writeFileSync(`${dir}.lock`, `${2 ** 22 + 1}\n`);
    const r = packCached(g, { cacheRoot: root });
    expect(r.hit).to.equal(false);
    expect(existsSync(`${dir}.lock`)).to.equal(false);
  });

  it('refuses, after its wait, a slot a live process keeps locked', () => {
    const dir = ws.path('slot');
    writeFileSync(`${dir}.lock`, `${process.pid}\n`);
    expect(() => withSlotLock(dir, () => 1, 300)).to.throw(/locked by process \d+ for over 0 s/);
  });
});
