/**
 * The OpenAI wire shapes the server speaks: request bodies checked into a GenerateRequest (a bad field
 * is InvalidOptions naming it), errors as `{ error: { message, type, code } }` with their status.
 */
import { EngineError, InvalidInput, InvalidOptions, messageOf, type ResourceLimit } from '../errors/index.js';
import { shown } from '../io/escape.js';
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

function num(b: Body, field: string, min: number, max = Infinity, aboveMin = false): number | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (aboveMin && v === min) || v > max) {
    throw new InvalidOptions(field, `a ${typeof v === 'number' && !Number.isFinite(v) ? 'finite ' : ''}number ${aboveMin ? 'above' : 'from'} ${min}${max === Infinity ? '' : ` to ${max}`}, not ${shown(v)}`);
  }
  return v;
}

function int(b: Body, field: string, min: number): number | undefined {
  const v = num(b, field, min);
  if (v !== undefined && !Number.isSafeInteger(v)) throw new InvalidOptions(field, `a whole number, not ${shown(v)}`);
  return v;
}

function stopOf(b: Body): string[] | undefined {
  const s = b['stop'];
  if (s === undefined || s === null) return undefined;
  if (typeof s === 'string') return [s];
  if (Array.isArray(s) && s.every((x) => typeof x === 'string')) return [...s] as string[];
  throw new InvalidOptions('stop', 'a string or an array of strings');
}

/** Message roles the server renders; `tool` (and tool calls) are not implemented yet. */
const ROLES: readonly string[] = ['system', 'user', 'assistant', 'developer'];

const absent = (v: unknown): boolean => v === undefined || v === null;
const empty = (v: unknown): boolean => absent(v) || (typeof v === 'object' && Object.keys(v as object).length === 0);

/**
 * OpenAI parameters this server does not implement, each with the values that ask for nothing (the
 * defaults): any other value is refused, so that a client never gets silently less than it asked for.
 */
const REFUSED: readonly { readonly param: string; readonly kinds: readonly ('chat' | 'completions')[]; readonly accepts: (v: unknown) => boolean; readonly what: string }[] = [
  { param: 'n', kinds: ['chat', 'completions'], accepts: (v) => absent(v) || v === 1, what: 'one choice per request (n: 1)' },
  { param: 'best_of', kinds: ['completions'], accepts: (v) => absent(v) || v === 1, what: 'best_of: 1' },
  { param: 'logprobs', kinds: ['chat'], accepts: (v) => absent(v) || v === false, what: 'no log probabilities (logprobs: false)' },
  { param: 'logprobs', kinds: ['completions'], accepts: absent, what: 'no log probabilities (logprobs: null)' },
  { param: 'top_logprobs', kinds: ['chat'], accepts: absent, what: 'no log probabilities' },
  { param: 'echo', kinds: ['completions'], accepts: (v) => absent(v) || v === false, what: 'echo: false' },
  { param: 'suffix', kinds: ['completions'], accepts: (v) => absent(v) || v === '', what: 'no suffix' },
  { param: 'tools', kinds: ['chat'], accepts: (v) => absent(v) || (Array.isArray(v) && v.length === 0), what: 'no tools' },
  { param: 'tool_choice', kinds: ['chat'], accepts: (v) => absent(v) || v === 'none', what: 'no tools (tool_choice: "none")' },
  { param: 'parallel_tool_calls', kinds: ['chat'], accepts: (v) => absent(v) || typeof v === 'boolean', what: 'true or false' },
  { param: 'functions', kinds: ['chat'], accepts: (v) => absent(v) || (Array.isArray(v) && v.length === 0), what: 'no functions' },
  { param: 'function_call', kinds: ['chat'], accepts: (v) => absent(v) || v === 'none', what: 'no function calls (function_call: "none")' },
  { param: 'response_format', kinds: ['chat'], accepts: (v) => absent(v) || (typeof v === 'object' && (v as Body)['type'] === 'text' && Object.keys(v as object).length === 1), what: 'plain text ({ "type": "text" })' },
  { param: 'frequency_penalty', kinds: ['chat', 'completions'], accepts: (v) => absent(v) || v === 0, what: 'no frequency penalty (0); repetition_penalty is this server\'s penalty' },
  { param: 'presence_penalty', kinds: ['chat', 'completions'], accepts: (v) => absent(v) || v === 0, what: 'no presence penalty (0); repetition_penalty is this server\'s penalty' },
  { param: 'logit_bias', kinds: ['chat', 'completions'], accepts: empty, what: 'no logit bias ({})' },
  { param: 'audio', kinds: ['chat'], accepts: absent, what: 'no audio' },
  { param: 'modalities', kinds: ['chat'], accepts: (v) => absent(v) || (Array.isArray(v) && v.every((m) => m === 'text')), what: 'text only (["text"])' },
  { param: 'prediction', kinds: ['chat'], accepts: absent, what: 'no predicted output' },
];

/** Refuses the first parameter of REFUSED given a value this server would not honour. */
function refuseUnimplemented(b: Body, kind: 'chat' | 'completions'): void {
  for (const r of REFUSED) {
    if (!r.kinds.includes(kind) || r.accepts(b[r.param])) continue;
    throw new InvalidOptions(r.param, `${shown(b[r.param])} is not supported by this server: it serves ${r.what}`);
  }
}

/** Checks a chat or completions body; InvalidOptions names the first bad field by its wire name. */
export function parseBody(body: unknown, kind: 'chat' | 'completions'): ServeRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidOptions('body', 'a JSON object');
  const b = body as Body;
  refuseUnimplemented(b, kind);
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
    m.forEach((msg, i) => {
      if (!ROLES.includes(msg.role)) throw new InvalidOptions(`messages/${i}/role`, `${JSON.stringify(msg.role)} is not a role this server renders (${ROLES.join(', ')}; tool messages are not supported yet)`);
      for (const f of ['tool_calls', 'function_call']) if (!empty(msg[f])) throw new InvalidOptions(`messages/${i}/${f}`, 'tool calls are not supported by this server');
    });
    prompt = { messages: m };
  } else {
    const p = b['prompt'];
    const one = Array.isArray(p) && p.length === 1 ? p[0] : p;
    if (typeof one !== 'string') throw new InvalidOptions('prompt', 'a string (or an array of one string)');
    prompt = { prompt: one };
  }
  const maxTokens = int(b, 'max_completion_tokens', 0) ?? int(b, 'max_tokens', 0);
  const temperature = num(b, 'temperature', 0, 2);
  const topP = num(b, 'top_p', 0, 1, true);
  const seed = int(b, 'seed', 0);
  const repetitionPenalty = num(b, 'repetition_penalty', 0, Infinity, true);
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

/** A field named by the library (`topP`, `maxTokens`, `promptIds/3`) by its wire name (`top_p`, ...). */
export function wireParam(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Limits that mean the prompt cannot fit the model's context. */
const CONTEXT_LIMITS: ReadonlySet<string> = new Set(['context', 'prompt-bytes']);

/**
 * Any thrown value as a wire failure: a user's mistake 400 (`param` its wire name), a prompt past the
 * context 400 `context_length_exceeded`, a server's own failure 500 with its typed code.
 */
export function failureOf(e: unknown): WireFailure {
  if (e instanceof EngineError) {
    const field = (e as { field?: unknown }).field;
    switch (e.code) {
      case 'InvalidOptions': case 'InvalidInput': case 'TokenizerError':
        return failure(400, 'invalid_request_error', e.code, e.message, typeof field === 'string' ? wireParam(field) : undefined);
      case 'ResourceLimit': {
        const { what, place } = e as ResourceLimit;
        const param = place === 'prompt' || place === 'messages' ? place : undefined;
        if (CONTEXT_LIMITS.has(what)) return failure(400, 'invalid_request_error', 'context_length_exceeded', e.message, param);
        // A chat template past its bounds (time, memory, size) refuses this request; the server goes on.
        return failure(400, 'invalid_request_error', e.code, e.message, param);
      }
      default:
        return failure(500, 'server_error', e.code, e.message);
    }
  }
  return failure(500, 'server_error', 'InternalError', messageOf(e));
}
