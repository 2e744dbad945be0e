/** Tiny Qwen3 GGUFs on disk for the model tests, and one engine per test file. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { tensor, type Tensor } from '../../../src/ir/tensor.js';
import { configFromJson, type Qwen3Config } from '../../../src/model/qwen3/config.js';
import { tinyQwen3Config, tinyQwen3Tensors, type TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import type { BoundWeight } from '../../../src/model/qwen3/weights.js';
import { tinyGgufBytes } from '../tinyGguf.js';

export { tinyGgufBytes };

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
      writeFileSync(p, tinyGgufBytes(o));
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

/**
 * A tiny Qwen3 in f32 without a file: its config, its weights as a program binds them ([N, K], the
 * file's dims reversed) and their values, for tests that build and run the programs themselves.
 */
export function tinyF32Model(o: TinyQwen3Options): { cfg: Qwen3Config; weights: Map<string, BoundWeight>; values: Record<string, Tensor> } {
  const t = tinyQwen3Config(o);
  const cfg = configFromJson({
    model_type: 'qwen3', num_hidden_layers: t.layers, hidden_size: t.hidden, intermediate_size: t.intermediate,
    num_attention_heads: t.heads, num_key_value_heads: t.kvHeads, head_dim: t.headDim, vocab_size: t.vocab,
    tie_word_embeddings: true, max_position_embeddings: 4096, rms_norm_eps: t.rmsEps, rope_theta: t.ropeTheta,
  }, 'config.json');
  const weights = new Map<string, BoundWeight>();
  const values: Record<string, Tensor> = {};
  for (const x of tinyQwen3Tensors(o)) {
    const name = x.name.replace(/\.weight$/, '');
    const shape = [...x.dims].reverse();
    weights.set(name, { dtype: 'f32', shape, file: '/m.gguf', offset: 0, length: 0 });
    values[name] = tensor('f32', shape, Float64Array.from(x.values));
  }
  return { cfg, weights, values };
}
