/** Small clear sets and keys for the seal tests, in temp dirs. */
import { randomBytes, type KeyObject } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { SealError, type SealReason } from '../../src/errors/index.js';
import { generateKernelKey } from '../../src/seal/kernelKey.js';
import { generateSigningKeyPair } from '../../src/seal/sign.js';

/** A temp dir removed by `remove()`. */
export function tempDir(prefix = 'npuo-seal-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Release keys and a kernel key. */
export interface Keys { kernelKey: Uint8Array; signingKey: KeyObject; publicKey: KeyObject }

/** Fresh keys. */
export function keys(): Keys {
  const { privateKey, publicKey } = generateSigningKeyPair();
  return { kernelKey: generateKernelKey(), signingKey: privateKey, publicKey };
}

/** Writes a clear set of layout.json and `n` kernels of `size` random bytes; returns the clear bytes. */
export function writeClearSet(dir: string, n = 2, size = 40, tag = 'a'): { layout: unknown; kernels: Map<string, Buffer> } {
  const layout = { format: 'layout@1', set: tag, layers: Array.from({ length: n }, (_, i) => `layer1_${i}`) };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'layout.json'), JSON.stringify(layout));
  const kernels = new Map<string, Buffer>();
  for (let i = 0; i < n; i++) {
    const rel = `layer1_${i}/layer1.elf`;
    const bytes = randomBytes(size);
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), bytes);
    kernels.set(rel, bytes);
  }
  return { layout, kernels };
}

/** Runs `fn`, expects a SealError with `reason` (and `file`, when given); returns it. */
export function expectSeal(fn: () => unknown, reason: SealReason, file?: string | null, context = ''): SealError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `${context}: expected SealError ${reason}, nothing was thrown`).to.be.instanceOf(SealError);
  const e = caught as SealError;
  expect(e.reason, `${context}: ${e.message}`).to.equal(reason);
  if (file !== undefined) expect(e.file, `${context}: ${e.message}`).to.equal(file);
  return e;
}
