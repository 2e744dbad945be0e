/**
 * The files of a set on disk: walking a set directory into set-relative POSIX paths, and reading
 * them. Symlinks and other special entries are refused rather than followed: a link could point a
 * listed name at bytes outside the set after the manifest was checked.
 */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SealError } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';
import { comparePaths, MANIFEST_FILE, SIGNATURE_FILE } from './manifest.js';

/** The clear layout file at the root of a set. */
export const LAYOUT_FILE = 'layout.json';

/** The on-disk path of a set-relative POSIX path. */
export function onDisk(dir: string, rel: string): string {
  return join(dir, ...rel.split('/'));
}

/** Throws SealError 'not-a-directory' unless `dir` is a directory. */
export function requireDirectory(dir: string): void {
  let ok: boolean;
  try {
    ok = statSync(dir).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new SealError(dir, 'not-a-directory');
}

/** True when the set-relative file exists as a regular file. */
export function hasFile(dir: string, rel: string): boolean {
  try {
    return lstatSync(onDisk(dir, rel)).isFile();
  } catch {
    return false;
  }
}

/** Every regular file of the set but the manifest and its signature, sorted as the manifest sorts. */
export function listSetFiles(dir: string): string[] {
  requireDirectory(dir);
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(rel === '' ? dir : onDisk(dir, rel), { withFileTypes: true })) {
      const p = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        if (rel === '' && (e.name === MANIFEST_FILE || e.name === SIGNATURE_FILE)) continue;
        out.push(p);
      } else throw new SealError(p, 'not-a-file');
    }
  };
  walk('');
  return out.sort(comparePaths);
}

/** The bytes of one set-relative file; a file that vanished is SealError 'missing-file'. */
export function readSetFile(dir: string, rel: string): Buffer {
  return readRegularFile(onDisk(dir, rel), { fail: (_p, why) => new SealError(rel, 'missing-file', why) });
}

/** The bytes of a root file of the set, or null when it is absent. */
export function readOptional(dir: string, rel: string): Buffer | null {
  return hasFile(dir, rel) ? readSetFile(dir, rel) : null;
}
