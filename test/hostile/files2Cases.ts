/**
 * Hostile conditions of output files and the cache's directory: a farm whose cache cannot be used must
 * fail typed and non-zero however many programs wait their turn (a dropped queue entry once left the
 * farm's promise unsettled, and it exited 0 printing nothing); `farm --queue --timeout` values it refuses.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { chainProgram } from '../jobs/helpers.js';
import type { HostileCase } from './case.js';

/** A farm folder of `n` programs and a plain file `dir/file` to name as a cache directory. */
function progs(n: number) {
  return (dir: string): void => {
    writeFileSync(join(dir, 'file'), 'not a directory');
    mkdirSync(join(dir, 'progs'));
    for (let i = 0; i < n; i++) writeFileSync(join(dir, 'progs', `p${i}.json`), JSON.stringify(chainProgram(2, i)));
  };
}

// --workers 1 runs two programs at a time: the rest wait in the farm's queue when the cache refuses.
const farmOn = (cache: string, ...more: string[]) => ['farm', '{dir}/progs', '--target', 'cpu', '--workers', '1', '--cache-dir', cache, ...more];

export const cases: readonly HostileCase[] = [
  {
    name: 'farm: more programs than run at once, --cache-dir a file: typed, exit 1',
    setup: progs(6), cli: farmOn('{dir}/file'), exit: 1, code: 'CacheUnavailable',
  },
  {
    name: 'farm --json: more programs than run at once, --cache-dir under a file: one JSON error, exit 1',
    setup: progs(6), cli: farmOn('{dir}/file/sub', '--json'), exit: 1, code: 'CacheUnavailable',
    check: (r) => {
      const doc = JSON.parse(r.stdout) as { error?: { code?: string; path?: string } };
      expect(doc.error?.code).to.equal('CacheUnavailable');
    },
  },
  // No server is needed to refuse these: the flags are checked before the queue is opened.
  { name: 'farm --timeout without --queue', setup: progs(1), cli: ['farm', '{dir}/progs', '--target', 'cpu', '--timeout', '1000', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm --queue --timeout 0', setup: progs(1), cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', 'redis://127.0.0.1:1/0', '--timeout', '0'], exit: 2, code: 'UsageError' },
  { name: 'farm --queue --timeout past a timer\'s reach', setup: progs(1), cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', 'redis://127.0.0.1:1/0', '--timeout', '2147483648', '--json'], exit: 2, code: 'UsageError' },
  { name: 'farm --queue --timeout that is not a number', setup: progs(1), cli: ['farm', '{dir}/progs', '--target', 'cpu', '--queue', 'redis://127.0.0.1:1/0', '--timeout', '5s'], exit: 2 },
];
