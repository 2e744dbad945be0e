/**
 * `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS), as the remote cache tier and the
 * farm's queue take it. Parsed once, up front, so a typo is refused before anything connects.
 */
import { InvalidOptions } from '../errors/index.js';

/** A parsed Redis URL. */
export interface RedisTarget {
  /** The URL as given, with any password replaced by `***`: safe to print. */
  readonly shown: string;
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username?: string;
  readonly password?: string;
  readonly tls: boolean;
}

/** Parses a Redis URL; throws InvalidOptions naming `field` (`remoteCache`, `--queue`) when it is not one. */
export function parseRedisUrl(text: unknown, field: string): RedisTarget {
  if (typeof text !== 'string' || text.trim() === '') throw new InvalidOptions(field, 'a redis:// URL is needed, e.g. redis://127.0.0.1:6379/0');
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new InvalidOptions(field, `${JSON.stringify(text)} is not a URL; expected redis://host:port/db`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new InvalidOptions(field, `the scheme ${u.protocol} is not redis: or rediss:`);
  }
  // URL keeps IPv6 hosts in brackets; the socket API wants them bare.
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new InvalidOptions(field, `${JSON.stringify(text)} names no host`);
  const port = u.port === '' ? 6379 : Number(u.port);
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) throw new InvalidOptions(field, `the port ${u.port} is not 1 to 65535`);
  const path = u.pathname.replace(/^\//, '');
  if (!/^\d{0,6}$/.test(path)) throw new InvalidOptions(field, `the path /${path} is not a database number`);
  if (u.search !== '' || u.hash !== '') throw new InvalidOptions(field, 'query strings and fragments are not read; put the database number in the path');
  const shownUrl = new URL(text);
  if (shownUrl.password !== '') shownUrl.password = '***';
  return {
    shown: shownUrl.toString(),
    host,
    port,
    db: path === '' ? 0 : Number(path),
    ...(u.username !== '' ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password !== '' ? { password: decodeURIComponent(u.password) } : {}),
    tls: u.protocol === 'rediss:',
  };
}
