/** Small helpers for the actor tests. */
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

/** Polls `check` until it is true or `ms` passed. */
export async function until(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await sleep(10);
  }
  return true;
}
