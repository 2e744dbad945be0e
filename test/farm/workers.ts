/** Helpers of the farm tests: farm-worker processes run from the built CLI, read through their --json lines. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chainProgram } from '../jobs/helpers.js';

export const bin = new URL('../../src/cli/bin.js', import.meta.url).pathname;

/** One event line of `farm-worker --json`. */
export interface WorkerLine {
  readonly event: string;
  readonly job?: string;
  readonly file?: string;
  readonly hit?: boolean;
  readonly [k: string]: unknown;
}

/** A farm-worker process, its events as they come, and its exit. */
export interface WorkerProc {
  readonly proc: ChildProcess;
  readonly lines: WorkerLine[];
  readonly stderr: () => string;
  /** Resolves when a line matching `pred` has arrived (or rejects when the process exits first). */
  waitFor(pred: (l: WorkerLine) => boolean, what: string): Promise<WorkerLine>;
  /** The exit: code, or the signal that ended it. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Jobs it reported done, by file. */
  done(): WorkerLine[];
}

/** Starts `farm-worker --json` with `args`; resolves once it said it is ready. */
export async function startWorker(args: readonly string[]): Promise<WorkerProc> {
  const proc = spawn(process.execPath, [bin, 'farm-worker', '--json', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: WorkerLine[] = [];
  let err = '';
  let buf = '';
  const waiters = new Set<{ pred: (l: WorkerLine) => boolean; resolve: (l: WorkerLine) => void }>();
  proc.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (text.trim() === '') continue;
      const line = JSON.parse(text) as WorkerLine;
      lines.push(line);
      for (const w of [...waiters]) if (w.pred(line)) { waiters.delete(w); w.resolve(line); }
    }
  });
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once('exit', (code, signal) => r({ code, signal })));
  const waitFor = (pred: (l: WorkerLine) => boolean, what: string) => {
    const seen = lines.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise<WorkerLine>((resolve, reject) => {
      waiters.add({ pred, resolve });
      void exit.then((x) => reject(new Error(`the worker exited (${String(x.code ?? x.signal)}) before ${what}: ${err}`)));
    });
  };
  const w: WorkerProc = { proc, lines, stderr: () => err, waitFor, exit, done: () => lines.filter((l) => l.event === 'done') };
  await waitFor((l) => l.event === 'ready', 'it was ready');
  return w;
}

/** Ends a worker process if it still runs (SIGKILL) and waits for its exit. */
export async function reap(w: WorkerProc | undefined): Promise<void> {
  if (w === undefined) return;
  if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGKILL');
  await w.exit;
}

/** Writes `n` small distinct programs under `dir` (p<salt>.json); returns their file names. */
export function writePrograms(dir: string, n: number, firstSalt: number): string[] {
  mkdirSync(dir, { recursive: true });
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = `p${firstSalt + i}.json`;
    writeFileSync(join(dir, name), JSON.stringify(chainProgram(2, firstSalt + i)));
    names.push(name);
  }
  return names.sort();
}
