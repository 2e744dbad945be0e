/**
 * Hostile inputs of the distributed farm and the remote cache tier: URLs that are not Redis URLs (a
 * usage error, exit 2), and servers that refuse or never answer (bounded: RemoteUnavailable, exit 1,
 * for the queue; a warning and a local compile for the cache tier, which is never a failed job).
 * No case needs a Redis server: port 1 on loopback has no listener, and a silent one is made in-script.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STEP_PROGRAM, chainProgram, stepInputs } from '../jobs/helpers.js';
import type { HostileCase } from './case.js';

/** Nothing listens on port 1 of the loopback. */
const REFUSED = 'redis://127.0.0.1:1/0';

function fail(what: string): never {
  throw new Error(what);
}

/** A program, its inputs, and a farm folder of three programs. */
function base(dir: string): void {
  writeFileSync(join(dir, 'p.json'), JSON.stringify(STEP_PROGRAM));
  writeFileSync(join(dir, 'in.json'), JSON.stringify(stepInputs(1)));
  mkdirSync(join(dir, 'progs'));
  for (let i = 0; i < 3; i++) writeFileSync(join(dir, 'progs', `p${i}.json`), JSON.stringify(chainProgram(2, i)));
}

/** The remote tier's outage is said once, as a warning, and the job still ran. */
function warnedOnce(r: { stdout: string; stderr: string }): void {
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('warning: the remote cache'));
  if (lines.length !== 1) fail(`the outage was warned ${lines.length} times:\n${r.stderr}`);
  if (!lines[0]!.includes('redis://127.0.0.1:1/0')) fail(`the warning does not name the server: ${lines[0]!}`);
}

/** A script: a TCP server that accepts and never answers, and `call` (an expression using `url`) against it. */
function silentServer(call: string): string {
  return `
    import { createServer } from 'node:net';
    const pkg = await import('{pkg}');
    const accepted = new Set();
    const s = createServer((c) => { accepted.add(c); });
    await new Promise((r) => s.listen(0, '127.0.0.1', r));
    const url = 'redis://127.0.0.1:' + s.address().port + '/0';
    try {
      await (${call});
      console.log('no error');
      process.exitCode = 0;
    } catch (e) {
      console.log(JSON.stringify({ error: { code: e.code, message: e.message } }));
      process.exitCode = e instanceof pkg.EngineError ? 1 : 3;
    } finally {
      // The server's side only: what the call itself opened must be closed by the call.
      for (const c of accepted) c.destroy();
      await new Promise((r) => s.close(r));
    }`;
}

export const cases: readonly HostileCase[] = [
  { name: 'farm --queue http://...: not a Redis URL', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', 'http://127.0.0.1:6379', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm --queue with a port past 65535', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', 'redis://127.0.0.1:70000', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm --queue with a database that is not a number', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', 'redis://127.0.0.1:6379/cache', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm --queue on a port nothing listens on', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', REFUSED], exit: 1, code: 'RemoteUnavailable', timeoutMs: 10_000 },
  { name: 'farm --queue --json on a port nothing listens on', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', REFUSED, '--json'], exit: 1, code: 'RemoteUnavailable', timeoutMs: 10_000 },
  { name: 'farm --queue with --cache-dir: the workers cache, not the farm', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', REFUSED, '--cache-dir', '{dir}/c'], exit: 2, code: 'UsageError' },
  { name: 'farm --attempts without --queue', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--attempts', '2'], exit: 2, code: 'UsageError' },
  { name: 'farm-worker without --queue', setup: base, cli: ['farm-worker', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm-worker --queue that is not a URL', setup: base, cli: ['farm-worker', '--queue', 'localhost:6379', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm-worker --remote-cache that is not a Redis URL', setup: base, cli: ['farm-worker', '--queue', REFUSED, '--remote-cache', 'file:///tmp/x', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm-worker on a port nothing listens on: refused at start, not a worker that waits', setup: base, cli: ['farm-worker', '--queue', REFUSED, '--cache-dir', '{dir}/c'], exit: 1, code: 'RemoteUnavailable', timeoutMs: 10_000 },
  { name: 'farm-worker --concurrency 0', setup: base, cli: ['farm-worker', '--queue', REFUSED, '--concurrency', '0', '--json'], exit: 1, code: 'InvalidOptions' },
  { name: 'run --remote-cache that is not a Redis URL', setup: base, cli: ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', '--remote-cache', 'redis//127.0.0.1', '--json'], exit: 2, code: 'UsageError' },
  { name: 'run --remote-cache on a port nothing listens on: one warning, the job runs', setup: base, cli: ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', '--remote-cache', REFUSED], exit: 0, check: warnedOnce, timeoutMs: 15_000 },
  { name: 'farm --remote-cache on a port nothing listens on: one warning, every program compiled', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--remote-cache', REFUSED, '--cache-dir', '{dir}/c'], exit: 0, timeoutMs: 15_000,
    check: (r) => { warnedOnce(r); if (!r.stdout.includes('3 compiled')) fail(`not every program compiled: ${r.stdout}`); } },
  { name: 'API: runQueueFarm on a port that accepts and never answers is bounded', here: true, script: silentServer(`pkg.runQueueFarm([{ file: 'p', program: {} }], { queue: url, target: 'cpu', connectTimeoutMs: 500 })`), exit: 1, code: 'RemoteUnavailable', timeoutMs: 10_000 },
  { name: 'API: CompileWorker.start on a port that accepts and never answers is bounded', here: true, script: silentServer(`pkg.CompileWorker.start({ queue: url, connectTimeoutMs: 500 })`), exit: 1, code: 'RemoteUnavailable', timeoutMs: 10_000 },
  { name: 'API: createEngine with a remoteCache that is not a Redis URL', here: true, script: silentServer(`Promise.resolve().then(() => pkg.createEngine({ remoteCache: 'redis:/x' }))`), exit: 1, code: 'InvalidOptions' },
  { name: 'API: runQueueFarm with attempts 0', here: true, script: silentServer(`pkg.runQueueFarm([], { queue: 'redis://127.0.0.1:1/0', target: 'cpu', attempts: 0 })`), exit: 1, code: 'InvalidOptions' },
];
