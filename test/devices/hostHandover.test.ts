/**
 * The host device hands a state carried in place over to another session with no copy: the sessions
 * share one arena, and a moved KV cache stays in its slot (HostDevice.move). Measured as the growth of
 * a child process's resident memory around the handover and the taker's first step, with a 64 MB cache.
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';

const script = (move: boolean, dir: string): string => `
  import { readFileSync } from 'node:fs';
  import { createEngine } from ${JSON.stringify(new URL('../../src/jobs/engine.js', import.meta.url).href)};
  import { program } from ${JSON.stringify(new URL('../../src/ops/builder.js', import.meta.url).href)};
  import { tensor } from ${JSON.stringify(new URL('../../src/ir/tensor.js', import.meta.url).href)};
  const rows = 2 ** 21;
  const build = (name) => {
    const p = program(name);
    const cache = p.state('cache', 'f32', [rows, 8]);
    const next = p.dynamicUpdateSlice(cache, p.activation('row', 'f32', [1, 8]), [p.activation('pos', 'i32', []), 0]);
    p.carry(cache, next);
    p.results(p.named('y').reduceSum(p.slice(next, [0, 0], [2, 8]), [1]));
    return p.build();
  };
  const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
  const at = (pos, v) => ({ row: tensor('f32', [1, 8], Array(8).fill(v)), pos: tensor('i32', [], [pos]) });
  const engine = createEngine({ cacheDir: ${JSON.stringify(dir)} });
  const a = await engine.openSession({ program: build('a'), target: 'host', zeroState: true });
  await a.step(at(0, 1));
  const b = await engine.openSession({ program: build('b'), target: 'host', zeroState: true });
  await a.step(at(0, 2));
  const before = rss();
  await b.takeStateFrom(a, ${move ? '{ move: true }' : '{}'});
  const y = (await b.step(at(1, 3))).results['y'].data;
  const grown = rss() - before;
  await engine.close();
  console.log(JSON.stringify({ grown, y: Array.from(y) }));`;

describe('devices/host: a KV cache handed over between sessions', function () {
  this.timeout(120_000);
  const run = (move: boolean): { grown: number; y: number[] } => {
    const dir = spawnSync('mktemp', ['-d'], { encoding: 'utf8' }).stdout.trim();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script(move, dir)], { encoding: 'utf8' });
    spawnSync('rm', ['-rf', dir]);
    expect(r.status, r.stderr).to.equal(0);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as { grown: number; y: number[] };
  };

  it('moved: the taker goes on from the cache, and the 64 MB cache is not copied', () => {
    const moved = run(true);
    expect(moved.y).to.deep.equal([16, 24]);
    expect(moved.grown).to.be.below(32);
    // Negative control: copied (the giver keeps its own), the cache is read out of the arena (its giver's
    // buffer written only where it is not zeros: copyBytes) and written into the taker's buffer, 64 MB.
    const copied = run(false);
    expect(copied.y).to.deep.equal([16, 24]);
    expect(copied.grown).to.be.above(48);
  });
});
