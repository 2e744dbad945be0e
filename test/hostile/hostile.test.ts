/**
 * The hostile-input suite: every case of every table runs the built CLI (or an API script) in a fresh
 * temporary folder, as its own process group, under a memory bound (--max-old-space-size=512) and a
 * time bound (the case's, 20 s by default, stretched on a slow or loaded machine: see loadScale; the
 * group is killed when it passes). A case fails when the exit code is not the one it names, when the
 * process hung or died by a signal, when it exits 3 (an internal defect), when a stack trace reaches
 * stdout or stderr, or when its error code is not shown (`[Code]` on stderr, or `"code":"Code"` in JSON
 * on stdout). Two cases run at a time.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** Runs one case in a fresh folder; the folder is removed after its checks. */
async function run(c: HostileCase, scale: number): Promise<Outcome> {
  const boundMs = Math.ceil((c.timeoutMs ?? DEFAULT_TIMEOUT_MS) * scale);
  const dir = mkdtempSync(join(tmpdir(), 'npuo-hostile-'));
  await c.setup?.(dir);
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout kills whatever the case started too.
    const child = spawn(process.execPath, argvOf(c, dir), {
      cwd: dir, detached: true, stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NPU_OFFLOAD_CACHE_DIR: join(dir, '.cache'), NPU_OFFLOAD_DEBUG: '' },
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

/** Starts every case, AT_ONCE at a time; each promise settles with its case's outcome. */
function schedule(all: readonly HostileCase[], scale: number): Map<HostileCase, Promise<Outcome>> {
  const started = new Map<HostileCase, Promise<Outcome>>();
  const gates: (() => void)[] = [];
  let running = 0;
  const release = (): void => { running--; gates.shift()?.(); };
  for (const c of all) {
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
  expect(o.hung, `hung: still running after ${o.boundMs} ms, its process group was killed${shown}`).to.equal(false);
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
  before(async () => { outcomes = schedule(Object.values(TABLES).flat(), await loadScale()); });

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
