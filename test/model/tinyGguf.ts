/** Tiny GGUFs' bytes for the model tests, generated once per process (shared by test/model/qwen3/helpers.ts and test/model/pack/helpers.ts). */
import { tinyQwen3Config, tinyQwen3Gguf, type TinyQwen3Options } from '../../src/model/qwen3/tiny.js';

/**
 * The bytes of tinyQwen3Gguf(o), generated once per process for the same options (the files of the
 * model tests share a few shapes; generating and quantizing is the cost, writing a copy is not). The
 * most recent 24 are kept.
 */
const ggufBytes = new Map<string, Uint8Array>();
export function tinyGgufBytes(o: TinyQwen3Options): Uint8Array {
  // Keyed by the options with their defaults filled in, so that the same model asked for in two ways is one entry.
  const key = JSON.stringify(tinyQwen3Config(o));
  let b = ggufBytes.get(key);
  if (b === undefined) b = tinyQwen3Gguf(o);
  ggufBytes.delete(key);
  ggufBytes.set(key, b);
  if (ggufBytes.size > 24) ggufBytes.delete(ggufBytes.keys().next().value!);
  return b;
}
