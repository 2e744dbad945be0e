/**
 * Hostile inputs of the blob cache, reachable from the CLI: a cache directory that is a file, an index
 * that is garbage, truncated, emptied or a directory. A cache that cannot open is CacheUnavailable,
 * said once; a damaged index is moved aside and rebuilt from the blob files, which are never lost.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BlobCache, CACHE_SCHEMA_VERSION, identityKey, type BlobIdentity } from '../../src/cache/index.js';
import { STEP_PROGRAM, chainProgram, stepInputs } from '../jobs/helpers.js';
import type { HostileCase } from './case.js';

const ID: BlobIdentity = { device: 'cpu', compiler: 'hostile', compilerVersion: '1', options: {}, region: { n: 1 } };

const root = (dir: string) => join(dir, 'c', `v${CACHE_SCHEMA_VERSION}`);
const indexOf = (dir: string) => join(root(dir), 'index.sqlite');
const blobOf = (dir: string) => join(root(dir), 'blobs', `${identityKey(ID)}.blob`);

function fail(what: string): never {
  throw new Error(what);
}

/** A cache at `dir/c` with one entry, a program, its inputs, a farm folder, and a plain file `dir/file`. */
function base(dir: string): void {
  const cache = BlobCache.open(join(dir, 'c'));
  cache.put(ID, Buffer.from('an artifact'));
  cache.close();
  writeFileSync(join(dir, 'file'), 'not a directory');
  writeFileSync(join(dir, 'p.json'), JSON.stringify(STEP_PROGRAM));
  writeFileSync(join(dir, 'in.json'), JSON.stringify(stepInputs(1)));
  mkdirSync(join(dir, 'progs'));
  for (let i = 0; i < 3; i++) writeFileSync(join(dir, 'progs', `p${i}.json`), JSON.stringify(chainProgram(2, i)));
}

function garbageIndex(dir: string): void {
  base(dir);
  writeFileSync(indexOf(dir), Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 131 + 7) & 0xff)));
}

function truncatedIndex(dir: string): void {
  base(dir);
  writeFileSync(indexOf(dir), readFileSync(indexOf(dir)).subarray(0, 100));
}

function emptiedIndex(dir: string): void {
  base(dir);
  const db = new Database(indexOf(dir));
  db.exec('DELETE FROM entries');
  db.close();
}

function directoryIndex(dir: string): void {
  base(dir);
  for (const s of ['', '-wal', '-shm']) rmSync(indexOf(dir) + s, { force: true });
  mkdirSync(indexOf(dir));
}

/** The blob is still there, and a damaged index was kept aside. */
function keptAside(r: { dir: string }): void {
  if (!existsSync(blobOf(r.dir))) fail('the blob file was deleted');
  if (!readdirSync(root(r.dir)).some((n) => n.startsWith('index.sqlite.damaged-'))) fail('the damaged index was not kept aside');
}

/** The blob has its row again (verify --json listed it as re-indexed). */
function reindexed(r: { dir: string; stdout: string }): void {
  const doc = JSON.parse(r.stdout) as { reindexed?: { key: string }[] };
  if (doc.reindexed?.[0]?.key !== identityKey(ID)) fail(`the blob was not re-indexed: ${r.stdout}`);
  if (!existsSync(blobOf(r.dir))) fail('the blob file was deleted');
}

/** The cause reaches the user once, never as ActorDown. */
function saidOnce(r: { stderr: string }): void {
  const lines = r.stderr.split('\n').filter((l) => l.includes('CacheUnavailable'));
  if (lines.length !== 1) fail(`CacheUnavailable said ${lines.length} times`);
  if (r.stderr.includes('ActorDown') || r.stderr.includes('refused ')) fail('the cause is hidden behind ActorDown or per-program lines');
}

export const cases: readonly HostileCase[] = [
  { name: 'cache ls: --cache-dir is a file', setup: base, cli: ['cache', 'ls', '--cache-dir', '{dir}/file'], exit: 1, code: 'CacheUnavailable' },
  { name: 'cache verify --json: --cache-dir is under a file', setup: base, cli: ['cache', 'verify', '--cache-dir', '{dir}/file/sub', '--json'], exit: 1, code: 'CacheUnavailable' },
  { name: 'run: --cache-dir is a file', setup: base, cli: ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', '--cache-dir', '{dir}/file'], exit: 1, code: 'CacheUnavailable', check: saidOnce },
  { name: 'farm: --cache-dir is a file, said once', setup: base, cli: ['farm', '{dir}/progs', '--target', 'cpu', '--cache-dir', '{dir}/file'], exit: 1, code: 'CacheUnavailable', check: saidOnce },
  { name: 'cache verify: a garbage index is moved aside and rebuilt', setup: garbageIndex, cli: ['cache', 'verify', '--cache-dir', '{dir}/c', '--json'], exit: 1, check: (r) => { keptAside(r); reindexed(r); } },
  { name: 'cache verify: a truncated index is moved aside and rebuilt', setup: truncatedIndex, cli: ['cache', 'verify', '--cache-dir', '{dir}/c', '--json'], exit: 1, check: (r) => { keptAside(r); reindexed(r); } },
  { name: 'cache verify: an emptied index is re-indexed, no blob deleted', setup: emptiedIndex, cli: ['cache', 'verify', '--cache-dir', '{dir}/c', '--json'], exit: 0, check: reindexed },
  { name: 'cache ls: file is not a database', setup: garbageIndex, cli: ['cache', 'ls', '--cache-dir', '{dir}/c'], exit: 1, code: 'CacheUnavailable' },
  { name: 'cache clear: a garbage index is rebuilt, then every entry removed', setup: garbageIndex, cli: ['cache', 'clear', '--cache-dir', '{dir}/c'], exit: 0, check: (r) => { if (existsSync(blobOf(r.dir))) fail('clear left the blob'); } },
  { name: 'run: file is not a database, repaired on open', setup: garbageIndex, cli: ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', '--cache-dir', '{dir}/c'], exit: 0, check: keptAside },
  { name: 'run: the index is a directory', setup: directoryIndex, cli: ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', '--cache-dir', '{dir}/c'], exit: 1, code: 'CacheUnavailable', check: saidOnce },
  { name: 'cache verify: the index is a directory', setup: directoryIndex, cli: ['cache', 'verify', '--cache-dir', '{dir}/c'], exit: 1, code: 'CacheUnavailable' },
  { name: 'cache gc without --max-bytes: typed usage error on stderr', setup: base, cli: ['cache', 'gc', '--cache-dir', '{dir}/c'], exit: 2, code: 'UsageError' },
  { name: 'cache gc --json without --max-bytes: typed usage error on stdout', setup: base, cli: ['cache', 'gc', '--cache-dir', '{dir}/c', '--json'], exit: 2, code: 'UsageError' },
];
