/**
 * What one engine costs to start and stop: `node dist/bench/engineStart.js [rounds]`. Per round,
 * createEngine(), one tiny cpu job, close(), on a cold blob cache (a fresh directory: plan, compile,
 * store, run) and on a warm one (the artifact a hit); CPU time of the whole process (every thread) and
 * wall time, medians. Then each worker entry alone: started, until its first message (ready or
 * loaded), and terminated; CPU and wall, medians. Run it on a quiet machine: the CPU figures are the
 * process's, so anything else the process does is counted too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createEngine } from '../src/jobs/engine.js';

const rounds = Number(process.argv[2] ?? 15);

const PROGRAM = {
  format: 'program@1', name: 'tiny',
  args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [2, 3] }],
  eqns: [{ op: 'add', in: ['x', { lit: 1 }], out: 'y' }],
  results: ['y'], state: {},
};
const INPUTS = { x: { dtype: 'f32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] } };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

async function measure(f: () => Promise<void>): Promise<{ cpu: number; wall: number }> {
  const c0 = cpuMs();
  const t0 = performance.now();
  await f();
  return { cpu: cpuMs() - c0, wall: performance.now() - t0 };
}

function report(name: string, xs: { cpu: number; wall: number }[]): void {
  console.log(`${name.padEnd(28)} cpu ${median(xs.map((x) => x.cpu)).toFixed(0).padStart(5)} ms   wall ${median(xs.map((x) => x.wall)).toFixed(0).padStart(5)} ms   (${xs.length} rounds)`);
}

async function oneJob(cacheDir: string, verify = false): Promise<void> {
  const engine = createEngine({ cacheDir });
  try {
    await engine.submit({ program: PROGRAM, target: 'cpu', inputs: INPUTS, verify }).result;
  } finally {
    await engine.close();
  }
}

const warmDir = mkdtempSync(join(tmpdir(), 'npuo-bench-start-'));
try {
  await oneJob(warmDir); // the main thread's own modules, and the warm cache's artifact
  const cold: { cpu: number; wall: number }[] = [];
  const warm: { cpu: number; wall: number }[] = [];
  const verified: { cpu: number; wall: number }[] = [];
  const idle: { cpu: number; wall: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-start-'));
    try {
      cold.push(await measure(() => oneJob(dir)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    warm.push(await measure(() => oneJob(warmDir)));
    verified.push(await measure(() => oneJob(warmDir, true)));
    idle.push(await measure(async () => { await createEngine({ cacheDir: warmDir }).close(); }));
  }
  report('engine, cold cache', cold);
  report('engine, warm cache', warm);
  report('engine, warm, verify', verified);
  report('engine, no job', idle);

  const entries: [string, unknown][] = [
    ['planner', undefined], ['cache', { dir: warmDir }], ['device', { kind: 'cpu' }], ['compiler', undefined], ['oracle', undefined],
  ];
  for (const [name, workerData] of entries) {
    const xs: { cpu: number; wall: number }[] = [];
    for (let i = 0; i < rounds; i++) {
      xs.push(await measure(async () => {
        const w = new Worker(new URL(`../src/workers/${name}.worker.js`, import.meta.url), { workerData });
        const exited = new Promise((resolve) => w.once('exit', resolve));
        await new Promise<void>((resolve, reject) => { w.once('message', () => resolve()); w.once('error', reject); });
        await w.terminate();
        await exited;
      }));
    }
    report(`worker ${name}`, xs);
  }
  const empty: { cpu: number; wall: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    empty.push(await measure(async () => {
      const w = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true });
      await new Promise((resolve) => w.once('message', resolve));
      await w.terminate();
    }));
  }
  report('worker, empty (node itself)', empty);
} finally {
  rmSync(warmDir, { recursive: true, force: true });
}
