/** Shared pieces of the cache tests: temp dirs, identities and self-checking artifact bodies. */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobIdentity } from '../../../src/cache/index.js';

/** A fresh empty directory under the OS temp dir. */
export function makeTempDir(): string {
  return mkdtempSync(join(tmpdir(), 'npu-cache-test-'));
}

/** Removes a temp dir made by makeTempDir. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** An identity like the compiler's: a region with constants, varied by `n`. */
export function identity(n = 0, device = 'xdna2:aie2p'): BlobIdentity {
  return {
    device,
    compiler: 'iron',
    compilerVersion: '1.4.0',
    options: { opt: 2, tiles: [4, 4], fuse: true },
    region: {
      eqns: [{ op: 'add', args: ['x', 'c'] }, { op: 'exp', args: ['t0'] }],
      consts: { c: new Float32Array([1.5, -0, n, 3]), scale: n * 0.25 },
    },
  };
}

/**
 * A body that proves itself whole: a u32 seed, a u32 length, then bytes derived from both. A body
 * cut, spliced or mixed from two puts fails checkBody.
 */
export function patternBody(seed: number, length: number): Buffer {
  const b = Buffer.alloc(Math.max(8, length));
  b.writeUInt32LE(seed >>> 0, 0);
  b.writeUInt32LE(b.length, 4);
  // A block of prime length repeated by fill(): cheap for megabyte bodies, and a splice of two bodies
  // still shows, since their seeds, and so their blocks, differ.
  const block = Buffer.concat(Array.from({ length: 8 }, (_, i) => createHash('sha256').update(`${seed}/${i}`).digest())).subarray(0, 251);
  if (b.length > 8) b.fill(block, 8);
  return b;
}

/** True if `b` is exactly some patternBody. */
export function checkBody(b: Uint8Array): boolean {
  if (b.length < 8) return false;
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return buf.equals(patternBody(buf.readUInt32LE(0), buf.readUInt32LE(4)));
}

/** Names of the files in a folder that end with `suffix`. */
export function filesEndingWith(dir: string, suffix: string): string[] {
  return readdirSync(dir).filter((n) => n.endsWith(suffix));
}
