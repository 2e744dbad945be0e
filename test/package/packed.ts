/**
 * The package packed once and installed into a throwaway consumer project, shared by the tests of
 * test/package/consumer.test.ts (packing and installing take most of their time: done once per process,
 * removed at exit; one file, so that a parallel run's two workers do not each pack it).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This project's root (the one packed). */
export const root = fileURLToPath(new URL('../../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Where the package went: the scratch folder, and the consumer project it is installed in. */
export interface Packed {
  readonly work: string;
  readonly consumer: string;
}

let packed: Packed | undefined;

/** Packs this project and installs it into a consumer project (once per process). */
export function packedConsumer(): Packed {
  if (packed !== undefined) return packed;
  const work = mkdtempSync(join(tmpdir(), 'npuo-embed-'));
  process.once('exit', () => rmSync(work, { recursive: true, force: true }));
  // `npm test` has just built dist/; packing must not rebuild it under the running tests.
  execFileSync(npm, ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: root, stdio: 'pipe' });
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error('npm pack wrote no tarball');
  const consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }));
  // Install scripts are skipped and better-sqlite3's native build is copied from ours: compiling it
  // again would add a minute and test better-sqlite3, not this package.
  execFileSync(npm, ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', join(work, tgz)], { cwd: consumer, stdio: 'pipe' });
  cpSync(join(root, 'node_modules/better-sqlite3/build'), join(consumer, 'node_modules/better-sqlite3/build'), { recursive: true });
  return (packed = { work, consumer });
}
