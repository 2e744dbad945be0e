/**
 * The messages between a TextWorker (textWorker.ts) and its thread (text.worker.ts): one interface per
 * message, joined in a union on a literal `type`; replies are matched to calls by `id`.
 * @internal
 */
import type { WireError } from '../../errors/index.js';
import type { ChatMessage, ChatOptions, EncodeOptions } from './types.js';

/** Where a rendered prompt's refusals point: the template of the tokenizer's source. */
export const templatePlace = (source: string): string => `${source} (chat template)`;

/** What the thread is started with (workerData). */
export interface TextWorkerData {
  /** The path loadTokenizer reads: a tokenizer.json, a model directory or a GGUF. */
  readonly source: string;
  /** The largest rendered chat prompt, in UTF-8 bytes. */
  readonly templateBytes: number;
}

/** Encode a text (one past a context's bytes was refused before it was sent: TextWorker.encode). */
interface EncodeCall {
  readonly type: 'encode';
  readonly id: number;
  readonly text: string;
  readonly options: EncodeOptions;
}

/** Render messages with the chat template and encode the prompt (without added specials). */
interface ChatCall {
  readonly type: 'chat';
  readonly id: number;
  readonly messages: readonly ChatMessage[];
  readonly options: ChatOptions;
  /** A rendered prompt of more UTF-8 bytes cannot fit the caller's context: refused before encoding. */
  readonly maxPromptBytes?: number;
}

export type TextCall = EncodeCall | ChatCall;

/** The tokenizer loaded: what the caller needs to refuse a text before sending it. */
interface Ready {
  readonly type: 'ready';
  /** The most UTF-8 bytes one token stands for (every id's bytes, special tokens included). */
  readonly maxTokenBytes: number;
}

/** The tokenizer could not be loaded in the thread. */
interface LoadFailed {
  readonly type: 'loadFailed';
  readonly error: WireError;
}

/** A chat call's rendering is done and its encoding begins (the time bound starts again). */
interface Encoding {
  readonly type: 'encoding';
  readonly id: number;
}

interface Done {
  readonly type: 'done';
  readonly id: number;
  readonly ids: number[];
  /** The rendered prompt (chat calls). */
  readonly prompt?: string;
}

interface Failed {
  readonly type: 'failed';
  readonly id: number;
  readonly error: WireError;
}

export type TextReply = Ready | LoadFailed | Encoding | Done | Failed;
