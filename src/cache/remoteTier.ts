/**
 * The remote cache tier: blob files in Redis, shared by every engine pointed at the same server, the way
 * sccache shares its cache. An entry is the very bytes of a local blob file (blobFile.ts) under
 * `npu-offload:blob:v<schema>:<key>`, so a fetched entry is checked exactly as a local read is: magic,
 * version, lengths, checksum, key and canonical identity. One that fails is a miss, and the compile
 * that follows publishes over it.
 *
 * The tier is an accelerator, never a dependency: when the server cannot be reached, a fetch is a miss
 * and a publish is dropped, with one warning per outage; it is tried again after `retryMs`.
 */
import type { Redis } from 'ioredis';
import { messageOf, RemoteUnavailable } from '../errors/index.js';
import { decodeBlob, encodeBlob, type BlobDefect } from './blobFile.js';
import type { ResolvedIdentity } from './identity.js';
import { CACHE_SCHEMA_VERSION } from './identity.js';
import { CONNECT_TIMEOUT_MS, openRedis } from './redisClient.js';
import { parseRedisUrl, type RedisTarget } from './redisUrl.js';

/** The Redis key prefix of every entry of this schema. */
const REMOTE_PREFIX = `npu-offload:blob:v${CACHE_SCHEMA_VERSION}:`;

export interface RemoteTierOptions {
  /** Bound on opening the connection, in ms (default 2000). */
  readonly connectTimeoutMs?: number;
  /** Bound on one command, in ms (default 10 000). */
  readonly commandTimeoutMs?: number;
  /** After an outage, how long to compile locally before trying the server again, in ms (default 10 000). */
  readonly retryMs?: number;
  /** Told once per outage that the tier cannot be used (default: nothing). */
  readonly onWarning?: (message: string) => void;
}

/** Counters of one tier since it was opened. */
export interface RemoteStats {
  readonly hits: number;
  readonly misses: number;
  /** Entries fetched that failed a check (foreign, truncated, damaged): counted as misses too. */
  readonly damaged: number;
  readonly published: number;
  /** Fetches and publishes skipped or failed because the server could not be used. */
  readonly unavailable: number;
}

/** What verify() found in the tier. */
export interface RemoteVerifyResult {
  readonly ok: string[];
  readonly bad: { readonly key: string; readonly reason: BlobDefect }[];
}

/**
 * True for an error the server answered with (ioredis's ReplyError: WRONGTYPE and the like), as against
 * one of the connection (refused, reset, timed out): the first is about one key, the second the tier's.
 */
function isReplyError(e: unknown): boolean {
  return e instanceof Error && e.name === 'ReplyError';
}

/** One Redis server used as a blob cache tier; opens its connection on first use. */
export class RemoteTier {
  readonly target: RedisTarget;
  #opts: RemoteTierOptions;
  #client: Redis | null = null;
  #connecting: Promise<Redis | null> | null = null;
  #downUntil = 0;
  #warned = false;
  #closed = false;
  #counts = { hits: 0, misses: 0, damaged: 0, published: 0, unavailable: 0 };

  /** A tier over `url` (throws InvalidOptions for a URL that is not redis://host:port/db). */
  constructor(url: string, opts: RemoteTierOptions = {}) {
    this.target = parseRedisUrl(url, 'remoteCache');
    this.#opts = opts;
  }

  get stats(): RemoteStats {
    return { ...this.#counts };
  }

  /** The Redis key of an entry. */
  static keyOf(key: string): string {
    return REMOTE_PREFIX + key;
  }

  /** The artifact of `r` when the tier holds a sound entry for it; null on a miss, a bad entry or an outage. */
  async fetch(r: ResolvedIdentity): Promise<Buffer | null> {
    const client = await this.#ready();
    if (client === null) { this.#counts.unavailable++; return null; }
    let file: Buffer | null;
    try {
      file = await client.getBuffer(RemoteTier.keyOf(r.key));
    } catch (e) {
      // The server answered: this one key is bad (WRONGTYPE: a list or hash where a blob belongs), not
      // the tier. It is this entry's miss, and the publish after the compile replaces it (SET takes any type).
      if (isReplyError(e)) { this.#counts.damaged++; this.#counts.misses++; return null; }
      this.#failed(e);
      this.#counts.unavailable++;
      return null;
    }
    if (file === null) { this.#counts.misses++; return null; }
    const read = decodeBlob(file, r.key, r.canonical);
    if (!read.ok) { this.#counts.damaged++; this.#counts.misses++; return null; }
    this.#counts.hits++;
    return read.body;
  }

  /** Stores `body` as the entry of `r`, over whatever was there; false when the server could not be used. */
  async publish(r: ResolvedIdentity, body: Uint8Array): Promise<boolean> {
    const client = await this.#ready();
    if (client === null) { this.#counts.unavailable++; return false; }
    try {
      await client.set(RemoteTier.keyOf(r.key), encodeBlob(r.key, r.canonical, body));
    } catch (e) {
      this.#failed(e);
      this.#counts.unavailable++;
      return false;
    }
    this.#counts.published++;
    return true;
  }

  /** The keys of every entry of this schema in the tier. */
  async keys(): Promise<string[]> {
    const client = await this.#required();
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', `${REMOTE_PREFIX}*`, 'COUNT', 500);
      cursor = next;
      for (const k of batch) out.push(k.slice(REMOTE_PREFIX.length));
    } while (cursor !== '0');
    return out.sort();
  }

  /** Checks every entry in full (it must hash to its key); reports, and removes nothing. */
  async verify(): Promise<RemoteVerifyResult> {
    const client = await this.#required();
    const ok: string[] = [];
    const bad: { key: string; reason: BlobDefect }[] = [];
    for (const key of await this.keys()) {
      let file: Buffer | null;
      try {
        file = await client.getBuffer(RemoteTier.keyOf(key));
      } catch (e) {
        if (!isReplyError(e)) throw e;
        bad.push({ key, reason: 'unreadable' }); // a key of another Redis type
        continue;
      }
      if (file === null) continue; // removed meanwhile
      const read = /^[0-9a-f]{64}$/.test(key) ? decodeBlob(file, key) : { ok: false as const, reason: 'foreign' as const };
      if (read.ok) ok.push(key);
      else bad.push({ key, reason: read.reason });
    }
    return { ok, bad };
  }

  /** Closes the connection; later calls open none. */
  async close(): Promise<void> {
    this.#closed = true;
    const c = this.#client ?? await this.#connecting?.catch(() => null) ?? null;
    this.#client = null;
    if (c !== null) await c.quit().catch(() => c.disconnect());
  }

  /** The open connection, or null while the server cannot be used (warned once per outage). */
  async #ready(): Promise<Redis | null> {
    if (this.#closed) return null;
    if (this.#client?.status === 'ready') return this.#client;
    if (this.#connecting) return this.#connecting;
    if (Date.now() < this.#downUntil) return null;
    this.#connecting = this.#connect().finally(() => { this.#connecting = null; });
    return this.#connecting;
  }

  async #connect(): Promise<Redis | null> {
    try {
      return await this.#open();
    } catch (e) {
      this.#failed(e);
      return null;
    }
  }

  /** Opens a new connection in place of the old one; throws RemoteUnavailable. */
  async #open(): Promise<Redis> {
    this.#client?.disconnect();
    this.#client = null;
    const client = await openRedis(this.target, this.#opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, {
      commandTimeout: this.#opts.commandTimeoutMs ?? 10_000,
      // Commands fail at once while the connection is down, rather than queue behind a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    if (this.#closed) { client.disconnect(); throw new RemoteUnavailable(this.target.shown, 'the tier was closed'); }
    this.#client = client;
    this.#warned = false;
    return client;
  }

  /** The connection for the maintenance calls, which have nothing to fall back on: throws RemoteUnavailable. */
  async #required(): Promise<Redis> {
    if (this.#client?.status === 'ready') return this.#client;
    return this.#open();
  }

  #failed(e: unknown): void {
    this.#downUntil = Date.now() + (this.#opts.retryMs ?? 10_000);
    if (this.#warned) return;
    this.#warned = true;
    const why = e instanceof RemoteUnavailable ? e.reason : messageOf(e);
    this.#opts.onWarning?.(`the remote cache ${this.target.shown} cannot be used (${why}); compiling locally`);
  }
}
