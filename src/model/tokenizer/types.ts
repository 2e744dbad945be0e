/** The tokenizer's public shapes: what loadTokenizer returns and what its methods take. */

/** One chat message; fields beyond role and content (tool_calls, reasoning_content) reach the template. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
  readonly [field: string]: unknown;
}

/** Options of encode. */
export interface EncodeOptions {
  /** Add what the tokenizer adds around a text (a BOS, a post-processor's tokens); default true. */
  readonly addSpecial?: boolean;
  /** Read special tokens written in the text (`<|im_start|>`) as those tokens; default true. */
  readonly parseSpecial?: boolean;
}

/** Options of decode. */
export interface DecodeOptions {
  /** Leave special tokens out of the text; default false. */
  readonly skipSpecial?: boolean;
}

/** Options of applyChatTemplate. */
export interface ChatOptions {
  /** End with the assistant's turn opened, ready to generate; default true (transformers defaults to false). */
  readonly addGenerationPrompt?: boolean;
  /** Qwen3's switch: false asks for an empty think block; unset leaves it to the template. */
  readonly enableThinking?: boolean;
  /** Tool definitions, for templates that render them. */
  readonly tools?: readonly unknown[];
  /** A Jinja template used over the model's own (a server's --chat-template). */
  readonly template?: string;
  /** Further template variables. */
  readonly variables?: Readonly<Record<string, unknown>>;
}

/** Where a tokenizer came from. */
export type TokenizerKind = 'tokenizer.json' | 'gguf';

/** A loaded tokenizer with its chat template. */
export interface Tokenizer {
  /** The file or directory it was loaded from. */
  readonly source: string;
  readonly kind: TokenizerKind;
  /** Ids are 0 to vocabSize - 1; an id with no token (padding rows) decodes to nothing. */
  readonly vocabSize: number;
  readonly bosId: number | null;
  /** Ids that end a generation: the file's end-of-sequence ids and the end-of-turn tokens it has. */
  readonly eosIds: readonly number[];
  readonly padId: number | null;
  /** The model's own Jinja template, or null when it has none (then ChatML is used). */
  readonly chatTemplate: string | null;
  /** Text to ids. A string with a lone surrogate is refused (InvalidInput). */
  encode(text: string, options?: EncodeOptions): number[];
  /** Ids to text; bytes that are not UTF-8 become U+FFFD. An id outside the vocabulary is refused (InvalidInput). */
  decode(ids: readonly number[], options?: DecodeOptions): string;
  /** Ids to raw bytes, for a caller that streams text and must hold back a split character. */
  decodeBytes(ids: readonly number[], options?: DecodeOptions): Uint8Array;
  /** The token's text as the file stores it, or undefined for an id with none. */
  tokenText(id: number): string | undefined;
  /** True for a special (control) token. */
  isSpecial(id: number): boolean;
  /** The prompt text for messages, from the model's template or ChatML. */
  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatOptions): string;
  /** The prompt and its ids (encoded without added specials: the template writes them). */
  encodeChat(messages: readonly ChatMessage[], options?: ChatOptions): { prompt: string; ids: number[] };
}
