/** Tiny Qwen3 GGUFs on disk for the model tests, and one engine per test file. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { tinyQwen3Gguf, type TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';

/** A temporary folder removed after the test file, and an engine on a cache inside it. */
export function modelFixture(): { dir: () => string; engine: () => Engine; gguf: (name: string, o: TinyQwen3Options) => string } {
  let dir = '';
  let engine: Engine | undefined;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'qwen3-')); });
  after(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    engine: () => (engine ??= createEngine({ cacheDir: join(dir, 'cache') })),
    gguf: (name, o) => {
      const p = join(dir, name);
      writeFileSync(p, tinyQwen3Gguf(o));
      return p;
    },
  };
}

/** Cosine similarity of two vectors. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0; let aa = 0; let bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i]! * b[i]!; aa += a[i]! ** 2; bb += b[i]! ** 2; }
  return ab / Math.sqrt(aa * bb);
}

/** A small model for the tests: 2 layers, hidden 256, GQA 4/2 heads of 64, spread enough for decisive logits. */
export const SMALL: TinyQwen3Options = { layers: 2, std: 0.05, seed: 3 };

/** A smaller model still (1 layer, hidden 64): where a test runs the whole gate, whose fp64 reference phases dominate. */
export const TINY: TinyQwen3Options = { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, contextLength: 256, std: 0.3 };
