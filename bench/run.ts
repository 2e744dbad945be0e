/**
 * `npm run bench`: job latency on a warm cache hit of a 20-equation program (goal: median under 1 ms),
 * the ratio of a cache hit to a compile, and jobs per second with 2 workers. Prints the figures and the
 * machine they came from; never part of `npm test`.
 */
import { cpus, tmpdir, totalmem } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, type Engine } from '../src/jobs/engine.js';

function program20(salt: number) {
  const eqns = [];
  let prev = 'x';
  const ops = ['add', 'mul', 'max', 'sub', 'exp', 'tanh', 'mul', 'add', 'neg', 'abs'];
  for (let i = 0; i < 20; i++) {
    const op = ops[i % ops.length]!;
    const unary = op === 'exp' || op === 'tanh' || op === 'neg' || op === 'abs';
    eqns.push({ op, in: unary ? [prev] : [prev, { lit: op === 'mul' ? 0.5 : 0.25 + salt }], out: `v${i}` });
    prev = `v${i}`;
  }
  return {
    format: 'program@1', name: `bench20-${salt}`,
    args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4, 64] }],
    eqns, results: [prev], state: {},
  };
}
const inputs = { x: { dtype: 'f32', shape: [4, 64], data: Array.from({ length: 256 }, (_, i) => Math.sin(i)) } };

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]!; };

async function job(engine: Engine, salt: number): Promise<number> {
  const t0 = performance.now();
  await engine.submit({ program: program20(salt), target: 'cpu', inputs }).result;
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-'));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`);
  const engine = createEngine({ cacheDir: dir, workers: 2 });
  try {
    // Warm-up: start every actor and let V8 optimize the hot paths.
    for (let i = 0; i < 50; i++) await job(engine, 0);

    const hits: number[] = [];
    for (let i = 0; i < 500; i++) hits.push(await job(engine, 0));
    console.log(`warm cache hit, 20-equation program: median ${median(hits).toFixed(3)} ms, p90 ${pct(hits, 0.9).toFixed(3)} ms (goal: median < 1 ms)`);

    const compiles: number[] = [];
    for (let i = 1; i <= 100; i++) {
      const t0 = performance.now();
      await engine.compileOnly(program20(i), 'cpu');
      compiles.push(performance.now() - t0);
    }
    const hitsOnly: number[] = [];
    for (let i = 1; i <= 100; i++) {
      const t0 = performance.now();
      await engine.compileOnly(program20(i), 'cpu');
      hitsOnly.push(performance.now() - t0);
    }
    console.log(`plan + compile + cache write: median ${median(compiles).toFixed(3)} ms; plan (memoized) + cache hit: median ${median(hitsOnly).toFixed(3)} ms; hit/compile ratio ${(median(hitsOnly) / median(compiles)).toFixed(3)}`);

    const n = 2000;
    const t0 = performance.now();
    const all = [];
    for (let i = 0; i < n; i++) all.push(engine.submit({ program: program20(i % 10), target: 'cpu', inputs }).result);
    await Promise.all(all);
    const s = (performance.now() - t0) / 1000;
    console.log(`throughput, 2 workers, ${n} jobs in flight over 10 cached programs: ${(n / s).toFixed(0)} jobs/s`);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
