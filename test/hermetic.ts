/**
 * Loaded before any test file (.mocharc.json `require`): unless the caller chose one, the run gets a
 * cache folder of its own (NPU_OFFLOAD_CACHE_DIR, inherited by every child process), removed at exit.
 * Without it, tests that do not name a cache read and wrote the user's ~/.cache/npu-offload, shared with
 * every other checkout on the machine: a kernel list compiled by another build (another op numbering)
 * was found there and refused by this one's addon ("unknown kernel op"), failing the serve tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (process.env['NPU_OFFLOAD_CACHE_DIR'] === undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'npuo-test-cache-'));
  process.env['NPU_OFFLOAD_CACHE_DIR'] = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}
