/**
 * The SQLite index of the blob cache: one row per entry, keyed by the identity key. The row is what
 * makes a blob file an entry; a file without one is never read. One connection per thread, opened by
 * the cache that owns it; several processes share the file through WAL and a busy timeout, and every
 * write takes the write lock up front (BEGIN IMMEDIATE) so a writer never fails to upgrade a stale read.
 */
import Database from 'better-sqlite3';
import { closeSync, openSync, readSync } from 'node:fs';
import { CacheError, CacheUnavailable } from '../errors/index.js';
import type { Entry as IndexRow } from './types.js';

/** How long a connection waits for another process's write lock before failing. */
const BUSY_TIMEOUT_MS = 5000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  key TEXT PRIMARY KEY NOT NULL,
  device TEXT NOT NULL,
  compiler TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  size INTEGER NOT NULL,
  created INTEGER NOT NULL,
  last_used INTEGER NOT NULL,
  use_seq INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_by_use ON entries (use_seq);
`;

const COLUMNS = 'key, device, compiler, compiler_version AS compilerVersion, size, created, last_used AS lastUsed';
// use_seq orders uses strictly even when several fall in the same millisecond, which the LRU order needs.
const NEXT_SEQ = '(SELECT IFNULL(MAX(use_seq), 0) + 1 FROM entries)';

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function sqliteCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function isBusy(e: unknown): boolean {
  return sqliteCode(e).startsWith('SQLITE_BUSY');
}

/** The index file is not a sound index (garbage, truncated, malformed): no retry can read it. */
export interface DamagedIndex {
  readonly damaged: string;
}

/** Thrown inside open() to carry a damage verdict out of the retry loop. */
class Damage extends Error {}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * True if `file` exists, is not empty, and does not start as an SQLite database does. Judged before
 * SQLite opens it, because closing a connection to such a file deletes its -wal, which is kept aside.
 */
function notADatabase(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false; // missing (a new cache) or unreadable: SQLite says which
  }
  try {
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    const n = readSync(fd, head, 0, head.length, 0);
    return n > 0 && (n < head.length || !head.equals(SQLITE_MAGIC));
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** The index database of one cache directory. */
export class CacheIndex {
  private readonly stmts;

  private constructor(private readonly db: Database.Database) {
    this.stmts = {
      find: db.prepare<[string], IndexRow>(`SELECT ${COLUMNS} FROM entries WHERE key = ?`),
      all: db.prepare<[], IndexRow>(`SELECT ${COLUMNS} FROM entries ORDER BY use_seq`),
      upsert: db.prepare(`INSERT INTO entries (key, device, compiler, compiler_version, size, created, last_used, use_seq)
        VALUES (@key, @device, @compiler, @compilerVersion, @size, @created, @lastUsed, ${NEXT_SEQ})
        ON CONFLICT (key) DO UPDATE SET device = excluded.device, compiler = excluded.compiler,
          compiler_version = excluded.compiler_version, size = excluded.size, created = excluded.created,
          last_used = excluded.last_used, use_seq = excluded.use_seq`),
      touch: db.prepare(`UPDATE entries SET last_used = ?, size = ?, use_seq = ${NEXT_SEQ} WHERE key = ?`),
      remove: db.prepare<[string]>('DELETE FROM entries WHERE key = ?'),
    };
  }

  /**
   * Opens (creating if needed) the index at `file`, or says it is damaged. Throws CacheError when another
   * process held it too long (a retry may succeed), CacheUnavailable for any other cause (a directory
   * in its place, no permission, a full disk), which a retry cannot fix.
   */
  static open(file: string): CacheIndex | DamagedIndex {
    if (notADatabase(file)) return { damaged: 'file is not a database' };
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
      // Switching to WAL needs a moment of exclusive access: several processes opening a new cache at
      // once can see SQLITE_BUSY here even with a busy timeout, so retry within the same budget.
      const start = Date.now();
      for (;;) {
        try {
          db.pragma('journal_mode = WAL');
          // NORMAL in WAL never corrupts the index; a power cut may lose the last rows, which only
          // makes their blob files orphans that gc and verify re-index.
          db.pragma('synchronous = NORMAL');
          db.transaction(() => db!.exec(SCHEMA)).immediate();
          break;
        } catch (e) {
          if (!isBusy(e) || Date.now() - start > BUSY_TIMEOUT_MS) throw e;
          sleepSync(10 + Math.random() * 20);
        }
      }
      // A file cut short or overwritten past its first pages still opens; reading every page once
      // finds it now, not in the middle of a job.
      const check: unknown = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Damage(`quick_check: ${String(check)}`);
      let index: CacheIndex;
      try {
        index = new CacheIndex(db);
      } catch (e) {
        throw new Damage(`not this cache's index: ${(e as Error).message}`);
      }
      return index;
    } catch (e) {
      db?.close();
      const code = sqliteCode(e);
      if (e instanceof Damage) return { damaged: e.message };
      if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) return { damaged: (e as Error).message };
      const why = `cannot open the cache index: ${code === '' ? '' : `${code}: `}${(e as Error).message}`;
      if (isBusy(e) || code.startsWith('SQLITE_LOCKED')) throw new CacheError(file, why);
      throw new CacheUnavailable(file, why);
    }
  }

  /** Runs `fn` in a BEGIN IMMEDIATE transaction: the write lock is held from the first statement. */
  write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** The row of `key`, if any. */
  find(key: string): IndexRow | undefined {
    return this.stmts.find.get(key);
  }

  /** Every row, least recently used first. */
  all(): IndexRow[] {
    return this.stmts.all.all();
  }

  /** Inserts or replaces the row of `row.key`, as the most recently used. */
  upsert(row: IndexRow): void {
    this.stmts.upsert.run(row);
  }

  /** Marks `key` used now; false if the index could not be written (busy too long, disk full). */
  touch(key: string, now: number, size: number): boolean {
    try {
      this.write(() => this.stmts.touch.run(now, size, key));
      return true;
    } catch {
      // A hit must not fail over bookkeeping: the bytes are already checked and correct, and a lost
      // use only makes gc think the entry a little older than it is.
      return false;
    }
  }

  /** Deletes the row of `key`; true if there was one. */
  remove(key: string): boolean {
    return this.stmts.remove.run(key).changes > 0;
  }

  /** Closes the connection. */
  close(): void {
    this.db.close();
  }
}
