/** Tokenizers (Hugging Face tokenizer.json, a GGUF's own) and chat templates. Re-exports only. */
export { loadTokenizer, tokenizerFromGguf, tokenizerFromHf, MAX_TOKENIZER_JSON_BYTES } from './load.js';
export { ggufTokenizerMetadata, type GgufTokenizerOptions } from './toGguf.js';
export { checkMessages } from './chat.js';
export { TOKEN_TYPE } from './fromGguf.js';
export type { HfTokenizerFiles } from './fromJson.js';
export type { ChatMessage, ChatOptions, DecodeOptions, EncodeOptions, Tokenizer, TokenizerKind } from './types.js';
