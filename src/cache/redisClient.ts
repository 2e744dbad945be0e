/**
 * Opening a Redis connection within a bound. ioredis's own connectTimeout covers the TCP connect only:
 * a port that accepts and then never answers (a firewall, a server of another protocol) would leave
 * its ready check waiting forever, so the whole open is raced against one timer here.
 *
 * ioredis is loaded on the first connection only: it costs half a second to load, which every command
 * and every cache actor thread would pay without a Redis in sight.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { messageOf, RemoteUnavailable } from '../errors/index.js';
import type { RedisTarget } from './redisUrl.js';

/** The default bound on opening a connection, in ms. */
export const CONNECT_TIMEOUT_MS = 2000;

/** The ioredis options of a target (no connection is made). */
export function redisOptions(target: RedisTarget, extra: RedisOptions = {}): RedisOptions {
  return {
    host: target.host,
    port: target.port,
    db: target.db,
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    ...extra,
  };
}

/**
 * Connects to `target` and waits for it to answer, within `timeoutMs`; throws RemoteUnavailable on a
 * refusal, a timeout or a server that answers something other than Redis. `extra` options apply to the
 * client handed back (BullMQ's clients want `maxRetriesPerRequest: null` and a retry strategy).
 */
export async function openRedis(target: RedisTarget, timeoutMs = CONNECT_TIMEOUT_MS, extra: RedisOptions = {}): Promise<Redis> {
  let lastError = '';
  const { Redis: RedisClient } = await import('ioredis');
  const client = new RedisClient(redisOptions(target, {
    connectTimeout: timeoutMs,
    // The first connect fails fast; reconnecting later is the caller's choice, made in `extra`.
    retryStrategy: () => null,
    ...extra,
    lazyConnect: true,
  }));
  // An 'error' event with no listener is printed by ioredis; the cause is reported with the refusal instead.
  const onError = (e: Error) => { lastError = e.message; };
  client.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (e) {
    client.disconnect();
    // ioredis says only "Connection is closed." when the connect itself failed; its last error says why.
    const closed = e instanceof Error && e.message === 'Connection is closed.';
    const reason = lastError !== '' && closed ? lastError : messageOf(e);
    throw new RemoteUnavailable(target.shown, reason);
  } finally {
    clearTimeout(timer);
  }
  return client;
}
