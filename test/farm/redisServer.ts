/**
 * A real redis-server (Debian's package) for the farm's tests and bench: on 127.0.0.1 and a free port,
 * in a temporary directory, with no persistence, stopped (and its directory removed) by stop(). Where
 * the binary is missing, startRedis() says why, so a suite can skip with that reason.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipWith } from '../skip.js';

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>/<db>`. */
  url(db?: number): string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Why there is no Redis here, or null when `redis-server` can be run. */
export function redisMissing(): string | null {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.error) return `redis-server cannot be run (${r.error.message}); install Debian's redis-server package (.ci/run does)`;
  return r.status === 0 ? null : `redis-server --version exited ${String(r.status)}`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** True once something answers PING with +PONG on the port. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ host: '127.0.0.1', port });
    let got = '';
    c.setTimeout(500, () => { c.destroy(); resolve(false); });
    c.on('error', () => resolve(false));
    c.on('connect', () => c.write('PING\r\n'));
    c.on('data', (d) => { got += d.toString('latin1'); if (got.includes('\r\n')) { c.end(); resolve(got.startsWith('+PONG')); } });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** Starts a redis-server; throws when it does not answer within a few seconds. */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'npu-redis-'));
  const port = await freePort();
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
    '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) break;
    if (await pong(port)) return { port, url: (db = 0) => `redis://127.0.0.1:${port}/${db}`, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`redis-server on port ${port} did not answer: ${stderr.trim()}`);
}

/** For a mocha suite's before(): a started server, or a skip that prints why there is none. */
export async function redisOrSkip(ctx: Mocha.Context): Promise<RedisServer> {
  const missing = redisMissing();
  if (missing !== null) {
    skipWith(ctx, missing);
  }
  return startRedis();
}
