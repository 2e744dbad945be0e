/** Qwen3 model helpers. Re-exports only. */
export {
  tinyQwen3Gguf, tinyQwen3Tensors, tinyQwen3Metadata, tinyQwen3Config,
  type TinyQwen3Options, type TinyQwen3Config, type TinyTensor,
} from './tiny.js';
