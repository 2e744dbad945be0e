/**
 * The hostile-input suite. Every case runs in a fresh temporary folder (its working directory, with
 * NPU_OFFLOAD_CACHE_DIR inside it) and fails when the exit code is not the one it names, when it hung,
 * when it exits 3 (an internal defect), when a stack trace reaches stdout or stderr, or when its error
 * code is not shown (`[Code]` on stderr, or `"code":"Code"` in JSON on stdout).
 *
 * Two ways to run a case:
 * - In this process (a `cli` case without `ownProcess`, or a `script` marked `here`): the CLI's
 *   `main(argv, io)` (or the script imported as a module) through test/cli/inProcess.ts, which checks
 *   what a separate process would have shown instead: the call must
 *   settle within its time bound, must not call process.exit, and must leave nothing behind that would
 *   keep a process alive (a server, a socket, a timer, a child). These run one at a time in the suite's
 *   `before` hook, before any child process starts, so nothing else changes the resources counted. A
 *   regression that spins synchronously would stall this process rather than fail one case, so a case
 *   about spinning or blocking is one of the others.
 * - As its own process (a `script` not marked `here`, or a case whose `ownProcess` names why: a memory bound, a signal, a
 *   hang, a process exit): the built CLI (or the API script) as its own process group under a memory bound
 *   (--max-old-space-size=512) and the case's time bound (the group is killed when it passes); it also
 *   fails when the process died by a signal. Two run at a time.
 *
 * Time bounds are the case's (20 s by default), stretched on a slow or loaded machine (see loadScale).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importHere, runHere } from '../cli/inProcess.js';
import type { HostileCase } from './case.js';
import { cases as cacheCases } from './cacheCases.js';
import { cases as embedCases } from './embedCases.js';
import { cases as engineCases } from './engineCases.js';
import { cases as farmCases } from './farmCases.js';
import { cases as filesCases } from './filesCases.js';
import { cases as hosttCases } from './hosttCases.js';
import { cases as host2Cases } from './host2Cases.js';
import { cases as limitsCases } from './limitsCases.js';
import { cases as partitionCases } from './partitionCases.js';
import { cases as quantCases } from './quantCases.js';
import { cases as qwenCases } from './qwenCases.js';
import { cases as reportCases } from './reportCases.js';
import { cases as serveCases } from './serveCases.js';
import { cases as sweepCases } from './sweepCases.js';
import { cases as hostcCases } from './hostcCases.js';
import { cases as tokCases } from './tokCases.js';
import { cases as ctxmergeCases } from './ctxmergeCases.js';
import { cases as files2Cases } from './files2Cases.js';
import { cases as serve2Cases } from './serve2Cases.js';
import { cases as lib2Cases } from './lib2Cases.js';
import { cases as tok2Cases } from './tok2Cases.js';

const TABLES: Readonly<Record<string, readonly HostileCase[]>> = {
  files: filesCases, cache: cacheCases, limits: limitsCases, engine: engineCases, embed: embedCases, tokenize: tokCases, farm: farmCases,
  quant: quantCases, qwen: qwenCases, host: hosttCases, sweep: sweepCases,
  report: reportCases,
  partition: partitionCases,
  serve: serveCases,
  hostContracts: hostcCases,
  ctxmerge: ctxmergeCases,
  host2: host2Cases,
  files2: files2Cases,
  serve2: serve2Cases,
  lib2: lib2Cases,
  tok2: tok2Cases,
};

const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));
const PKG = new URL('../../src/index.js', import.meta.url).href;
const DEFAULT_TIMEOUT_MS = 20_000;
/** How long the CLI takes to start (`--version`) on the machine the cases' bounds were written for. */
const REFERENCE_STARTUP_MS = 1000;
const AT_ONCE = 2;
/** Output kept per stream: enough to judge, bounded so a case that floods cannot exhaust the runner. */
const KEEP_BYTES = 1 << 20;
const STACK_LINE = /^\s+at .+[:(]\d+:\d+\)?$/m;

interface Outcome {
  readonly dir: string;
  /** The time bound the case ran under, in ms. */
  readonly boundMs: number;
  readonly exit: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly hung: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** Run in this process: what it left keeping the event loop alive (empty when nothing). */
  readonly leftBehind?: readonly string[];
  /** Run in this process: `process.exit(code)` as it was called, which would have ended the test run. */
  readonly exitCalled?: string;
}

const fill = (s: string, dir: string): string => s.replaceAll('{dir}', dir).replaceAll('{pkg}', PKG);

function argvOf(c: HostileCase, dir: string): string[] {
  const bound = ['--max-old-space-size=512'];
  if (c.script !== undefined) return [...bound, '--input-type=module', '-e', fill(c.script, dir)];
  if (c.cli !== undefined) return [...bound, BIN, ...c.cli.map((a) => fill(a, dir))];
  throw new Error(`case ${c.name} has neither cli nor script`);
}

function collect(stream: NodeJS.ReadableStream, into: Buffer[]): void {
  let kept = 0;
  stream.on('data', (b: Buffer) => {
    if (kept < KEEP_BYTES) { into.push(b.subarray(0, KEEP_BYTES - kept)); kept += b.length; }
  });
}

/**
 * How much slower than the reference machine this one runs now: the CLI's start (`--version`, which
 * loads every command), timed here, over REFERENCE_STARTUP_MS, and never under 1. A case's time bound
 * only catches a hang, so it is stretched by this: a loaded machine slows a case's normal run as much as
 * its start, and a hang still ends, later.
 */
async function loadScale(): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--max-old-space-size=512', BIN, '--version'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (exit) => { if (exit === 0) resolve(); else reject(new Error(`bin.js --version exited ${String(exit)}`)); });
  });
  return Math.max(1, (performance.now() - t0) / REFERENCE_STARTUP_MS);
}

/**
 * Runs a `cli` case (or a `script` marked `here`) in this process (see test/cli/inProcess.ts) in a
 * fresh folder, its working directory meanwhile; the folder is removed after its checks.
 */
async function runInProcess(c: HostileCase, scale: number): Promise<Outcome> {
  const boundMs = Math.ceil((c.timeoutMs ?? DEFAULT_TIMEOUT_MS) * scale);
  const dir = mkdtempSync(join(tmpdir(), 'npuo-hostile-'));
  await c.setup?.(dir);
  const o = { cwd: dir, env: { NPU_OFFLOAD_CACHE_DIR: join(dir, '.cache'), NPU_OFFLOAD_DEBUG: '', ...c.env }, boundMs, keepBytes: KEEP_BYTES };
  const r = c.script !== undefined ? await importHere(fill(c.script, dir), o) : await runHere(c.cli!.map((a) => fill(a, dir)), { ...o, stdin: c.stdin ?? '' });
  return {
    dir, boundMs, exit: r.status, signal: null, hung: r.hung, stdout: r.stdout, stderr: r.stderr, leftBehind: r.leftBehind,
    ...(r.exitCalled !== undefined ? { exitCalled: r.exitCalled } : {}),
  };
}

/** Runs one case as its own process in a fresh folder; the folder is removed after its checks. */
async function run(c: HostileCase, scale: number): Promise<Outcome> {
  const boundMs = Math.ceil((c.timeoutMs ?? DEFAULT_TIMEOUT_MS) * scale);
  const dir = mkdtempSync(join(tmpdir(), 'npuo-hostile-'));
  await c.setup?.(dir);
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout kills whatever the case started too.
    const child = spawn(process.execPath, argvOf(c, dir), {
      cwd: dir, detached: true, stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NPU_OFFLOAD_CACHE_DIR: join(dir, '.cache'), NPU_OFFLOAD_DEBUG: '', ...c.env },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    collect(child.stdout, out);
    collect(child.stderr, err);
    child.stdin.on('error', () => { /* a case that exits without reading its stdin */ });
    child.stdin.end(c.stdin ?? '');
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
    }, boundMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (exit, signal) => {
      clearTimeout(timer);
      resolve({ dir, boundMs, exit, signal, hung, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/** Whether a case runs as its own process (see the top of this file). */
const ownProcess = (c: HostileCase): boolean => (c.script !== undefined && c.here !== true) || c.ownProcess !== undefined;

/**
 * Runs the cases that run in this process, one at a time, then starts the others as processes, AT_ONCE
 * at a time; each promise settles with its case's outcome. Awaited from a hook, so that the in-process
 * runs end before any test (whose own timer mocha starts and stops) or child process changes the
 * resources they count.
 */
async function schedule(all: readonly HostileCase[], scale: number): Promise<Map<HostileCase, Promise<Outcome>>> {
  const started = new Map<HostileCase, Promise<Outcome>>();
  for (const c of all.filter((x) => !ownProcess(x))) {
    const p = runInProcess(c, scale);
    started.set(c, p);
    await p.then(() => undefined, () => undefined);
  }
  const gates: (() => void)[] = [];
  let running = 0;
  const release = (): void => { running--; gates.shift()?.(); };
  // The longest bounds first, so that a slow case (a looping chat template, a 10 s add-on bound) is not the tail.
  const bound = (c: HostileCase): number => c.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  for (const c of all.filter(ownProcess).sort((a, b) => bound(b) - bound(a))) {
    const p = (async () => {
      if (running >= AT_ONCE) await new Promise<void>((go) => gates.push(go));
      running++;
      try { return await run(c, scale); } finally { release(); }
    })();
    p.catch(() => { /* reported by the case's test */ });
    started.set(c, p);
  }
  return started;
}

function judge(c: HostileCase, o: Outcome): void {
  const shown = `\n--- stdout ---\n${o.stdout.slice(0, 2000)}\n--- stderr ---\n${o.stderr.slice(0, 2000)}`;
  expect(o.hung, `hung: still running after ${o.boundMs} ms${o.leftBehind === undefined ? ', its process group was killed' : ''}${shown}`).to.equal(false);
  expect(o.exitCalled, `called ${String(o.exitCalled)}: a case that ends its process must set ownProcess: 'exit'${shown}`).to.equal(undefined);
  expect(o.leftBehind ?? [], `left open after the command was done, which would keep its process from exiting${shown}`).to.deep.equal([]);
  expect(o.signal, `killed by ${String(o.signal)} (an abort or an out-of-memory kill)${shown}`).to.equal(null);
  expect(o.exit, `exit 3 is an internal defect${shown}`).to.not.equal(3);
  expect(o.exit, `exit code${shown}`).to.equal(c.exit);
  for (const [name, text] of [['stdout', o.stdout], ['stderr', o.stderr]] as const) {
    expect(STACK_LINE.test(text) || text.includes('node:internal'), `a stack trace on ${name}${shown}`).to.equal(false);
  }
  if (c.code !== undefined) {
    const shownCode = o.stderr.includes(`[${c.code}]`) || o.stdout.includes(`"code":"${c.code}"`);
    expect(shownCode, `error code ${c.code} is not shown as [${c.code}] on stderr or "code":"${c.code}" on stdout${shown}`).to.equal(true);
  }
  c.check?.({ dir: o.dir, stdout: o.stdout, stderr: o.stderr });
}

describe('hostile input', function () {
  // Each case is bounded by its own timeout, enforced above by killing its process group.
  this.timeout(0);
  let outcomes: Map<HostileCase, Promise<Outcome>>;
  before(async () => { outcomes = await schedule(Object.values(TABLES).flat(), await loadScale()); });

  for (const [table, cases] of Object.entries(TABLES)) {
    describe(`${table} cases`, () => {
      for (const c of cases) {
        it(c.name, async () => {
          const o = await outcomes.get(c)!;
          try { judge(c, o); } finally { rmSync(o.dir, { recursive: true, force: true }); }
        });
      }
    });
  }
});
