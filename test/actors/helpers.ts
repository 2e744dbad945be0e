/** Small helpers for the actor tests. */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    const v = await p;
    throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
  } catch (e) {
    return e;
  }
}

/** Resolves with the first payload of an event. */
export function next<T>(on: (fn: (payload: T) => void) => () => void): Promise<T> {
  return new Promise((resolve) => {
    const off = on((payload) => { off(); resolve(payload); });
  });
}

/**
 * Polls `check` until it is true or `ms` passed. The bound only ends a wait that failed (the test then
 * fails on `false`), so it is long: a loaded machine may take seconds over what an idle one does at once.
 */
export async function until(check: () => boolean, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await sleep(10);
  }
  return true;
}

/**
 * Waits for a child that prints one line when its work is done and must then exit on its own. A child
 * still running EXIT_FACTOR times as long after that line as its work took (and at least 5 s) is held
 * by something and is killed: the bound is tied to what this machine, loaded or not, took to do the work.
 * `code` is the exit code, or why there is none; `err` is what the child wrote to stderr, if piped.
 */
export function exitOnItsOwn(child: ChildProcess & { readonly stdout: Readable }): Promise<{ code: number | string; out: string; err: string }> {
  const EXIT_FACTOR = 4;
  const started = performance.now();
  let out = '';
  let err = '';
  let timer: NodeJS.Timeout | undefined;
  child.stderr?.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (timer !== undefined || !out.includes('\n')) return;
      const waitMs = Math.max(5000, EXIT_FACTOR * (performance.now() - started));
      timer = setTimeout(() => { child.kill('SIGKILL'); resolve({ code: `still running ${Math.round(waitMs)} ms after its work was done`, out, err }); }, waitMs);
    });
    child.on('exit', (c, signal) => { clearTimeout(timer); resolve({ code: c ?? `killed by ${signal}`, out, err }); });
  });
}
