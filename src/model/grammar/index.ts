/** Structured output: JSON Schema to a grammar, and constrained decoding over a tokenizer's vocabulary. */
export { accepts, acceptsPrefix, type Grammar,  } from './grammar.js';
export { compileJsonSchema, jsonObjectGrammar, toolCallGrammar,  type ToolSpec } from './schema.js';
export { ConstrainedDecoder,  vocabularyTrie, hasVocabularyTrie,  } from './decoder.js';
