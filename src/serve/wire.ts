/**
 * The OpenAI wire shapes the server speaks: request bodies checked into a GenerateRequest (a bad field
 * is InvalidOptions naming it), errors as `{ error: { message, type, code } }` with their status.
 */
import { EngineError, InvalidInput, InvalidOptions, messageOf } from '../errors/index.js';
import type { GenerateRequest } from '../model/qwen3/model.js';
import type { FinishReason } from '../model/qwen3/generate.js';
import { checkMessages } from '../model/tokenizer/chat.js';

/** A checked request: what to generate and how to answer. */
export interface ServeRequest {
  readonly model: string;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly generate: GenerateRequest;
}

type Body = Record<string, unknown>;

function num(b: Body, field: string, min: number, max = Infinity): number | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new InvalidOptions(field, `a number from ${min}${max === Infinity ? '' : ` to ${max}`}, not ${JSON.stringify(v)}`);
  return v;
}

function int(b: Body, field: string, min: number): number | undefined {
  const v = num(b, field, min);
  if (v !== undefined && !Number.isSafeInteger(v)) throw new InvalidOptions(field, `a whole number, not ${v}`);
  return v;
}

function stopOf(b: Body): string[] | undefined {
  const s = b['stop'];
  if (s === undefined || s === null) return undefined;
  if (typeof s === 'string') return [s];
  if (Array.isArray(s) && s.every((x) => typeof x === 'string')) return [...s] as string[];
  throw new InvalidOptions('stop', 'a string or an array of strings');
}

/** Checks a chat or completions body; InvalidOptions names the first bad field. */
export function parseBody(body: unknown, kind: 'chat' | 'completions'): ServeRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidOptions('body', 'a JSON object');
  const b = body as Body;
  if (typeof b['model'] !== 'string') throw new InvalidOptions('model', 'the model id, a string');
  const stream = b['stream'] ?? false;
  if (typeof stream !== 'boolean') throw new InvalidOptions('stream', 'true or false');
  const so = b['stream_options'];
  const includeUsage = typeof so === 'object' && so !== null && (so as Body)['include_usage'] === true;
  let prompt: Pick<GenerateRequest, 'prompt' | 'messages'>;
  if (kind === 'chat') {
    const m = b['messages'];
    try { checkMessages(m); } catch (e) { throw e instanceof InvalidInput ? new InvalidOptions(`messages${e.path}`, e.reason) : e; }
    if (m.length === 0) throw new InvalidOptions('messages', 'at least one message');
    prompt = { messages: m };
  } else {
    const p = b['prompt'];
    const one = Array.isArray(p) && p.length === 1 ? p[0] : p;
    if (typeof one !== 'string') throw new InvalidOptions('prompt', 'a string (or an array of one string)');
    prompt = { prompt: one };
  }
  const maxTokens = int(b, 'max_completion_tokens', 0) ?? int(b, 'max_tokens', 0);
  const temperature = num(b, 'temperature', 0, 2);
  const topP = num(b, 'top_p', 0, 1);
  const seed = int(b, 'seed', 0);
  const repetitionPenalty = num(b, 'repetition_penalty', 0);
  const stop = stopOf(b);
  return {
    model: b['model'], stream, includeUsage,
    generate: {
      ...prompt,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { topP } : {}),
      ...(seed !== undefined ? { seed } : {}),
      ...(repetitionPenalty !== undefined ? { repetitionPenalty } : {}),
      ...(stop !== undefined ? { stop } : {}),
    },
  };
}

/** OpenAI's finish reasons: an end-of-sequence id or a stop string is `stop`; a count or the context `length`. */
export function finishOf(f: FinishReason): 'stop' | 'length' {
  return f === 'eos' || f === 'stop' ? 'stop' : 'length';
}

/** An error in OpenAI's shape. */
export interface WireFailure {
  readonly status: number;
  readonly body: { readonly error: { readonly message: string; readonly type: string; readonly code: string; readonly param?: string } };
}

/** A failure with its status, message, type and code. */
export function failure(status: number, type: string, code: string, message: string, param?: string): WireFailure {
  return { status, body: { error: { message, type, code, ...(param !== undefined ? { param } : {}) } } };
}

/** Any thrown value as a wire failure: a user's mistake 400, a server's own failure 500 with its typed code. */
export function failureOf(e: unknown): WireFailure {
  if (e instanceof EngineError) {
    const field = (e as { field?: unknown }).field;
    switch (e.code) {
      case 'InvalidOptions': case 'InvalidInput': case 'TokenizerError':
        return failure(400, 'invalid_request_error', e.code, e.message, typeof field === 'string' ? field : undefined);
      case 'ResourceLimit':
        return failure(400, 'invalid_request_error', 'context_length_exceeded', e.message);
      default:
        return failure(500, 'server_error', e.code, e.message);
    }
  }
  return failure(500, 'server_error', 'InternalError', messageOf(e));
}
