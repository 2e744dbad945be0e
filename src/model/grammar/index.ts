/** Structured output: JSON Schema to a grammar, and constrained decoding over a tokenizer's vocabulary. */
export { accepts, acceptsPrefix, type Grammar, type GrammarNode } from './grammar.js';
export { compileJsonSchema, jsonObjectGrammar, toolCallGrammar, anyJsonValue, type ToolSpec } from './schema.js';
export { ConstrainedDecoder, VocabularyTrie, vocabularyTrie, hasVocabularyTrie, allowedIds } from './decoder.js';
