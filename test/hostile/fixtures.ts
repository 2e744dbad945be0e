/** Files the hostile cases set up in their temporary folder: programs, tiny models, FIFOs, keys. */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packGguf } from '../../src/model/pack/pack.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import { formatKernelKey, generateKernelKey } from '../../src/seal/kernelKey.js';
import { generateSigningKeyPair, keyPairPem } from '../../src/seal/sign.js';

/** A program one activation in, one result out, valid for every target. */
export const ADD_PROGRAM = {
  format: 'program@1', name: 'add',
  args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [2] }],
  eqns: [{ op: 'add', in: ['x', 'x'], out: 'y' }],
  results: ['y'],
} as const;

/** Writes `data` (text, bytes, or JSON for anything else) at `rel` under `dir`, making its folder. */
export function put(dir: string, rel: string, data: unknown): string {
  const p = join(dir, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, typeof data === 'string' || data instanceof Uint8Array ? data : JSON.stringify(data));
  return p;
}

/** A named pipe at `rel`: reading it without a writer blocks forever. */
export function fifo(dir: string, rel: string): string {
  const p = join(dir, rel);
  mkdirSync(dirname(p), { recursive: true });
  execFileSync('mkfifo', [p]);
  return p;
}

/** A one-layer qwen3 GGUF at `rel`. */
export function tinyGguf(dir: string, rel: string): string {
  return put(dir, rel, tinyQwen3Gguf({ layers: 1 }));
}

/** A folder `rel` holding a tokenizer.json. */
export function tokenizer(dir: string, rel: string): string {
  put(dir, join(rel, 'tokenizer.json'), '{"version":"1.0","model":{"type":"BPE"}}\n');
  return join(dir, rel);
}

/** A previous pack of a tiny GGUF in `out` (with t.gguf and tok/ beside it). */
export function previousPack(dir: string, out: string): void {
  packGguf(tinyGguf(dir, 't.gguf'), join(dir, out), { tokenizer: tokenizer(dir, 'tok') });
}

/** A release key pair and a kernel key: release.key, release.pub, kernel.key. */
export function keys(dir: string): void {
  const { privatePem, publicPem } = keyPairPem(generateSigningKeyPair());
  put(dir, 'release.key', privatePem);
  put(dir, 'release.pub', publicPem);
  put(dir, 'kernel.key', formatKernelKey(generateKernelKey()));
}

/** A clear kernel set `rel`: layout.json and one kernel file. */
export function clearSet(dir: string, rel: string): void {
  put(dir, join(rel, 'layout.json'), { kernels: ['k.bin'] });
  put(dir, join(rel, 'k.bin'), new Uint8Array([1, 2, 3, 4]));
}

/** Asserts the output holds no control character but line breaks: nothing a terminal would act on. */
export function noControl(r: { stdout: string; stderr: string }): void {
  for (const [name, text] of [['stdout', r.stdout], ['stderr', r.stderr]] as const) {
    const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.exec(text);
    expect(raw, `${name} holds a raw control character U+${raw?.[0].charCodeAt(0).toString(16).padStart(4, '0')}: ${text}`).to.equal(null);
  }
}
