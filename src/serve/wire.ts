/**
 * The OpenAI wire shapes the server speaks: request bodies checked into a GenerateRequest (a bad field
 * is InvalidOptions naming it), errors as `{ error: { message, type, code } }` with their status.
 */
import { EngineError, InvalidInput, InvalidOptions, messageOf, type KvCacheFull, type ResourceLimit } from '../errors/index.js';
import { shown } from '../io/escape.js';
import type { GenerateRequest } from '../model/qwen3/model.js';
import { compileJsonSchema, jsonObjectGrammar, toolCallGrammar, type Grammar } from '../model/grammar/index.js';
import type { FinishReason } from '../model/qwen3/generate.js';
import { checkMessages } from '../model/tokenizer/chat.js';
import type { ChatMessage } from '../model/tokenizer/types.js';

/** A checked request: what to generate and how to answer. */
export interface ServeRequest {
  readonly model: string;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** The first prompt's request (the one of a chat). */
  readonly generate: GenerateRequest;
  /** One request per prompt (a completions `prompt` may be an array of them); each is answered by `n` choices. */
  readonly prompts: readonly GenerateRequest[];
  /** Choices per prompt (default 1); choice j of a prompt samples with seed + j. */
  readonly n: number;
  /** A forced tool call (tool_choice required or named): the names it may call; the answer is read into `message.tool_calls`. */
  readonly toolCall?: readonly string[];
  /** With tools and `tool_choice` `auto` (or none given): their names; calls the model writes are read from its answer. */
  readonly autoTools?: readonly string[];
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

function int(b: Body, field: string, min: number, max = Infinity): number | undefined {
  const v = num(b, field, min, max);
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

/** Message roles the server renders (through the model's chat template). */
const ROLES: readonly string[] = ['system', 'user', 'assistant', 'developer', 'tool'];

const absent = (v: unknown): boolean => v === undefined || v === null;
const empty = (v: unknown): boolean => absent(v) || (typeof v === 'object' && Object.keys(v as object).length === 0);
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * OpenAI parameters this server does not implement, each with the values that ask for nothing (the
 * defaults): any other value is refused, so that a client never gets silently less than it asked for.
 */
const REFUSED: readonly { readonly param: string; readonly kinds: readonly ('chat' | 'completions')[]; readonly accepts: (v: unknown) => boolean; readonly what: string }[] = [
  { param: 'best_of', kinds: ['completions'], accepts: (v) => absent(v) || v === 1, what: 'best_of: 1 (choose among n with n)' },
  { param: 'echo', kinds: ['completions'], accepts: (v) => absent(v) || v === false, what: 'echo: false' },
  { param: 'suffix', kinds: ['completions'], accepts: (v) => absent(v) || v === '', what: 'no suffix' },
  // Tools are rendered by the chat template; with tool_choice auto the calls the model writes are read
  // from its answer (autoToolsOf, src/serve/toolcalls.ts); required and a named function are forced by
  // constrained decoding (toolCallOf).
  { param: 'parallel_tool_calls', kinds: ['chat'], accepts: (v) => absent(v) || typeof v === 'boolean', what: 'true or false' },
  { param: 'functions', kinds: ['chat'], accepts: (v) => absent(v) || (Array.isArray(v) && v.length === 0), what: 'no functions (the deprecated form; give tools)' },
  { param: 'function_call', kinds: ['chat'], accepts: (v) => absent(v) || v === 'none' || v === 'auto', what: 'function_call "none" or "auto"' },
  // response_format (text, json_object, json_schema) is read by constraintOf.
  { param: 'audio', kinds: ['chat'], accepts: absent, what: 'no audio' },
  { param: 'modalities', kinds: ['chat'], accepts: (v) => absent(v) || (Array.isArray(v) && v.every((m) => m === 'text')), what: 'text only (["text"])' },
  { param: 'prediction', kinds: ['chat'], accepts: absent, what: 'no predicted output' },
  { param: 'web_search_options', kinds: ['chat'], accepts: absent, what: 'no web search' },
  { param: 'reasoning_effort', kinds: ['chat'], accepts: absent, what: 'no reasoning effort (Qwen3\'s switch is chat_template_kwargs.enable_thinking)' },
  { param: 'verbosity', kinds: ['chat'], accepts: absent, what: 'no verbosity setting' },
];

/** Refuses the first parameter of REFUSED given a value this server would not honour. */
function refuseUnimplemented(b: Body, kind: 'chat' | 'completions'): void {
  for (const r of REFUSED) {
    if (!r.kinds.includes(kind) || r.accepts(b[r.param])) continue;
    throw new InvalidOptions(r.param, `${shown(b[r.param])} is not supported by this server: it serves ${r.what}`);
  }
}

/** A message's content as text: a string, content parts of type `text` (joined), or null (an assistant's tool calls). */
function contentOf(c: unknown, at: string, role: string, hasCalls: boolean): string {
  if (typeof c === 'string') return c;
  if (c === null || c === undefined) {
    if (role === 'assistant' && hasCalls) return '';
    throw new InvalidOptions(at, 'a string or an array of content parts (null only for an assistant message with tool_calls)');
  }
  if (!Array.isArray(c)) throw new InvalidOptions(at, `a string or an array of content parts, not ${shown(c)}`);
  return c.map((part: unknown, k) => {
    if (!isObject(part)) throw new InvalidOptions(`${at}/${k}`, 'a content part { "type": "text", "text": ... }');
    if (part['type'] !== 'text') throw new InvalidOptions(`${at}/${k}/type`, `${shown(part['type'])}: this server takes text parts only (no images, audio or files)`);
    if (typeof part['text'] !== 'string') throw new InvalidOptions(`${at}/${k}/text`, 'a string');
    return part['text'];
  }).join('');
}

/** An assistant's tool calls, as the template reads them: `{ id, type: "function", function: { name, arguments } }`. */
function toolCallsOf(v: unknown, at: string): unknown[] | undefined {
  if (absent(v)) return undefined;
  if (!Array.isArray(v)) throw new InvalidOptions(at, 'an array of tool calls');
  v.forEach((t: unknown, k) => {
    if (!isObject(t)) throw new InvalidOptions(`${at}/${k}`, 'a tool call { id, type: "function", function: { name, arguments } }');
    if (t['type'] !== undefined && t['type'] !== 'function') throw new InvalidOptions(`${at}/${k}/type`, `"function", not ${shown(t['type'])}`);
    const f = t['function'];
    if (!isObject(f)) throw new InvalidOptions(`${at}/${k}/function`, 'an object { name, arguments }');
    if (typeof f['name'] !== 'string') throw new InvalidOptions(`${at}/${k}/function/name`, 'a string');
    if (typeof f['arguments'] !== 'string' && !isObject(f['arguments'])) throw new InvalidOptions(`${at}/${k}/function/arguments`, 'a JSON string (or an object)');
  });
  return v.length === 0 ? undefined : v;
}

/** Chat messages checked and normalized for the template: content as text, tool calls and tool results kept. */
function messagesOf(m: unknown): ChatMessage[] {
  if (!Array.isArray(m)) throw new InvalidOptions('messages', 'an array of { role, content }');
  if (m.length === 0) throw new InvalidOptions('messages', 'at least one message');
  const out = m.map((msg: unknown, i): ChatMessage => {
    if (!isObject(msg)) throw new InvalidOptions(`messages/${i}`, 'a message must be an object { role, content }');
    const role = msg['role'];
    if (typeof role !== 'string' || !ROLES.includes(role)) throw new InvalidOptions(`messages/${i}/role`, `${shown(role)} is not a role this server renders (${ROLES.join(', ')})`);
    if (!absent(msg['function_call'])) throw new InvalidOptions(`messages/${i}/function_call`, 'the deprecated function_call is not supported: give tool_calls');
    const calls = role === 'assistant' ? toolCallsOf(msg['tool_calls'], `messages/${i}/tool_calls`) : undefined;
    if (role !== 'assistant' && !empty(msg['tool_calls'])) throw new InvalidOptions(`messages/${i}/tool_calls`, 'only an assistant message carries tool calls');
    const content = contentOf(msg['content'], `messages/${i}/content`, role, calls !== undefined);
    const out: Record<string, unknown> = { role, content };
    if (calls !== undefined) out['tool_calls'] = calls;
    if (role === 'tool') {
      if (typeof msg['tool_call_id'] !== 'string') throw new InvalidOptions(`messages/${i}/tool_call_id`, 'a tool message names the call it answers (tool_call_id, a string)');
      out['tool_call_id'] = msg['tool_call_id'];
    }
    for (const f of ['name', 'reasoning_content']) if (typeof msg[f] === 'string') out[f] = msg[f];
    return out as ChatMessage;
  });
  try { checkMessages(out); } catch (e) { throw e instanceof InvalidInput ? new InvalidOptions(`messages${e.path}`, e.reason) : e; }
  return out;
}

/** The tools a chat offers, for its template: `[{ type: "function", function: { name, description?, parameters? } }]`. */
function toolsOf(v: unknown): unknown[] | undefined {
  if (absent(v)) return undefined;
  if (!Array.isArray(v)) throw new InvalidOptions('tools', 'an array of { type: "function", function: { name, ... } }');
  v.forEach((t: unknown, k) => {
    if (!isObject(t) || t['type'] !== 'function') throw new InvalidOptions(`tools/${k}/type`, 'a tool of type "function"');
    const f = t['function'];
    if (!isObject(f) || typeof f['name'] !== 'string') throw new InvalidOptions(`tools/${k}/function/name`, 'a string');
  });
  return v.length === 0 ? undefined : v;
}

/** `chat_template_kwargs`: variables the chat template reads; `enable_thinking` is Qwen3's switch (a boolean). */
function templateKwargsOf(v: unknown): Pick<GenerateRequest, 'enableThinking' | 'chatVariables'> {
  if (absent(v)) return {};
  if (!isObject(v)) throw new InvalidOptions('chat_template_kwargs', `an object of template variables, not ${shown(v)}`);
  const t = v['enable_thinking'];
  if (t !== undefined && typeof t !== 'boolean') throw new InvalidOptions('chat_template_kwargs/enable_thinking', `true or false, not ${shown(t)}`);
  for (const k of ['messages', 'tools', 'add_generation_prompt']) if (k in v) throw new InvalidOptions(`chat_template_kwargs/${k}`, `${k} is the request's own (give it as the request's field)`);
  return { ...(t !== undefined ? { enableThinking: t } : {}), chatVariables: { ...v } };
}

/** The most choices a request may ask for (`n`), generations that share their prompt's prefill (server.ts, choicesOf). */
const MAX_N = 16;

/** `logit_bias`: `{ "token id": bias from -100 to 100 }`. */
function logitBiasOf(v: unknown): Record<number, number> | undefined {
  if (absent(v)) return undefined;
  if (!isObject(v)) throw new InvalidOptions('logit_bias', `an object of token id to bias, not ${shown(v)}`);
  const out: Record<number, number> = {};
  for (const [k, x] of Object.entries(v)) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(k)) throw new InvalidOptions(`logit_bias/${k}`, 'a key is a token id (a whole number)');
    if (typeof x !== 'number' || !(x >= -100 && x <= 100)) throw new InvalidOptions(`logit_bias/${k}`, `a bias from -100 to 100, not ${shown(x)}`);
    out[Number(k)] = x;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** How many top tokens each token's log probabilities come with; undefined when none are asked for. */
function logprobsOf(b: Body, kind: 'chat' | 'completions'): number | undefined {
  if (kind === 'completions') return int(b, 'logprobs', 0, 20);
  const on = b['logprobs'];
  if (!absent(on) && typeof on !== 'boolean') throw new InvalidOptions('logprobs', `true or false, not ${shown(on)}`);
  const top = int(b, 'top_logprobs', 0, 20);
  if (top !== undefined && on !== true) throw new InvalidOptions('top_logprobs', 'top_logprobs needs logprobs: true');
  return on === true ? top ?? 0 : undefined;
}

/** A completions `prompt`: a string, an array of strings, token ids, or an array of arrays of token ids. */
function promptsOf(p: unknown): Pick<GenerateRequest, 'prompt' | 'promptIds'>[] {
  const ids = (v: unknown, at: string): number[] => {
    (v as unknown[]).forEach((x, k) => { if (!(typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) throw new InvalidOptions(`${at}/${k}`, `a token id (a whole number of at least 0), not ${shown(x)}`); });
    return [...(v as number[])];
  };
  if (typeof p === 'string') return [{ prompt: p }];
  if (!Array.isArray(p) || p.length === 0) throw new InvalidOptions('prompt', 'a string, an array of strings, an array of token ids, or an array of arrays of token ids');
  if (p.every((x) => typeof x === 'number')) return [{ promptIds: ids(p, 'prompt') }];
  return p.map((x: unknown, k) => {
    if (typeof x === 'string') return { prompt: x };
    if (Array.isArray(x)) return { promptIds: ids(x, `prompt/${k}`) };
    throw new InvalidOptions(`prompt/${k}`, `a string or an array of token ids, not ${shown(x)}`);
  });
}

/**
 * `response_format` as a grammar the answer is held to: none for `{ "type": "text" }` (or absent),
 * any JSON object for `json_object`, the schema's JSON for `json_schema` (`{ name, schema, strict?,
 * description? }`; an unsupported keyword is a 400 naming its path, `response_format.json_schema.schema...`).
 */
function constraintOf(v: unknown): Grammar | undefined {
  if (absent(v)) return undefined;
  if (!isObject(v)) throw new InvalidOptions('response_format', `an object { "type": "text" | "json_object" | "json_schema" }, not ${shown(v)}`);
  const extra = Object.keys(v).find((k) => k !== 'type' && !(v['type'] === 'json_schema' && k === 'json_schema'));
  if (extra !== undefined) throw new InvalidOptions(`response_format.${extra}`, `not a field of a ${shown(v['type'])} response format`);
  switch (v['type']) {
    case 'text': return undefined;
    case 'json_object': return jsonObjectGrammar();
    case 'json_schema': {
      const j = v['json_schema'];
      if (!isObject(j)) throw new InvalidOptions('response_format.json_schema', 'an object { name, schema, strict?, description? }');
      if (typeof j['name'] !== 'string') throw new InvalidOptions('response_format.json_schema.name', 'the schema\'s name, a string');
      if (!absent(j['strict']) && typeof j['strict'] !== 'boolean') throw new InvalidOptions('response_format.json_schema.strict', `true or false, not ${shown(j['strict'])}`);
      const other = Object.keys(j).find((k) => !['name', 'schema', 'strict', 'description'].includes(k));
      if (other !== undefined) throw new InvalidOptions(`response_format.json_schema.${other}`, 'not a field of json_schema (name, schema, strict, description)');
      // No schema: any JSON value (OpenAI's default); the answer is held to the schema whether strict or not.
      return compileJsonSchema(j['schema'] ?? {}, 'response_format.json_schema.schema');
    }
    default:
      throw new InvalidOptions('response_format.type', `"text", "json_object" or "json_schema", not ${shown(v['type'])}`);
  }
}

/**
 * `tool_choice`: `none` and `auto` constrain nothing (auto's calls are read from the answer); `required` (any of the tools) and a named function
 * (`{ type: "function", function: { name } }`) force a call by constrained decoding, in Qwen's
 * `<tool_call>` form, its arguments valid under the tool's parameters (errors name `tools[i].function.parameters...`).
 */
function toolCallOf(v: unknown, tools: unknown[] | undefined): Grammar | undefined {
  if (absent(v) || v === 'none' || v === 'auto') return undefined;
  const specs = (tools ?? []).map((t) => { const f = (t as Body)['function'] as Body; return { name: f['name'] as string, parameters: f['parameters'] }; });
  if (v === 'required') {
    if (specs.length === 0) throw new InvalidOptions('tool_choice', '"required" needs tools');
    return toolCallGrammar(specs);
  }
  if (isObject(v) && v['type'] === 'function' && isObject(v['function']) && typeof v['function']['name'] === 'string') {
    const name = v['function']['name'];
    const i = specs.findIndex((t) => t.name === name);
    if (i < 0) throw new InvalidOptions('tool_choice/function/name', `${shown(name)} is not one of the tools`);
    return toolCallGrammar([{ ...specs[i]!, at: `tools[${i}]` }]);
  }
  throw new InvalidOptions('tool_choice', `"none", "auto", "required" or { "type": "function", "function": { "name": ... } }, not ${shown(v)}`);
}

/** The names of checked tools. */
const namesOf = (tools: unknown[]): string[] => tools.map((t) => ((t as Body)['function'] as Body)['name'] as string);

/** The tools' names when the model may call them on its own (tools given, `tool_choice` absent or `auto`). */
function autoToolsOf(choice: unknown, tools: unknown[] | undefined): string[] | undefined {
  if (tools === undefined || tools.length === 0 || !(absent(choice) || choice === 'auto')) return undefined;
  return namesOf(tools);
}

/** The names a forced call (toolCallOf's) may call: the named function, or any tool for `required`. */
function forcedNamesOf(choice: unknown, tools: unknown[] | undefined): string[] {
  return choice === 'required' ? namesOf(tools ?? []) : [((choice as Body)['function'] as Body)['name'] as string];
}

/** Checks a chat or completions body; InvalidOptions names the first bad field by its wire name. */
export function parseBody(body: unknown, kind: 'chat' | 'completions', chatTemplate?: string): ServeRequest {
  if (!isObject(body)) throw new InvalidOptions('body', 'a JSON object');
  const b = body;
  refuseUnimplemented(b, kind);
  if (typeof b['model'] !== 'string') throw new InvalidOptions('model', 'the model id, a string');
  const stream = b['stream'] ?? false;
  if (typeof stream !== 'boolean') throw new InvalidOptions('stream', 'true or false');
  const so = b['stream_options'];
  const includeUsage = typeof so === 'object' && so !== null && (so as Body)['include_usage'] === true;
  let prompts: Partial<GenerateRequest>[];
  if (kind === 'chat') {
    const tools = toolsOf(b['tools']);
    prompts = [{ messages: messagesOf(b['messages']), ...templateKwargsOf(b['chat_template_kwargs']), ...(tools !== undefined && b['tool_choice'] !== 'none' ? { tools } : {}), ...(chatTemplate !== undefined ? { chatTemplate } : {}) }];
  } else {
    prompts = promptsOf(b['prompt']);
  }
  const maxTokens = int(b, 'max_completion_tokens', 0) ?? int(b, 'max_tokens', 0);
  const temperature = num(b, 'temperature', 0, 2);
  const topP = num(b, 'top_p', 0, 1, true);
  const seed = int(b, 'seed', 0);
  const repetitionPenalty = num(b, 'repetition_penalty', 0, Infinity, true);
  const stop = stopOf(b);
  const n = int(b, 'n', 1, MAX_N) ?? 1;
  const topK = int(b, 'top_k', 0);
  const minP = num(b, 'min_p', 0, 1);
  const presencePenalty = num(b, 'presence_penalty', -2, 2);
  const frequencyPenalty = num(b, 'frequency_penalty', -2, 2);
  const logitBias = logitBiasOf(b['logit_bias']);
  const logprobs = logprobsOf(b, kind);
  const format = kind === 'chat' ? constraintOf(b['response_format']) : undefined;
  const forced = kind === 'chat' ? toolCallOf(b['tool_choice'], toolsOf(b['tools'])) : undefined;
  if (format !== undefined && forced !== undefined) throw new InvalidOptions('response_format', 'a forced tool call (tool_choice) and a JSON response format cannot both hold the answer');
  const constraint = format ?? forced;
  const decode = {
    ...(constraint !== undefined ? { constraint } : {}),
    ...(topK !== undefined && topK > 0 ? { topK } : {}),
    ...(minP !== undefined && minP > 0 ? { minP } : {}),
    ...(presencePenalty !== undefined && presencePenalty !== 0 ? { presencePenalty } : {}),
    ...(frequencyPenalty !== undefined && frequencyPenalty !== 0 ? { frequencyPenalty } : {}),
    ...(logitBias !== undefined ? { logitBias } : {}),
    ...(logprobs !== undefined ? { logprobs } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { topP } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(repetitionPenalty !== undefined ? { repetitionPenalty } : {}),
    ...(stop !== undefined ? { stop } : {}),
  };
  const all = prompts.map((p) => ({ ...p, ...decode }));
  const auto = kind === 'chat' ? autoToolsOf(b['tool_choice'], toolsOf(b['tools'])) : undefined;
  return { model: b['model'], stream, includeUsage, generate: all[0]!, prompts: all, n, ...(forced !== undefined ? { toolCall: forcedNamesOf(b['tool_choice'], toolsOf(b['tools'])) } : {}), ...(auto !== undefined ? { autoTools: auto } : {}) };
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
function wireParam(field: string): string {
  // A schema's path is already the wire's (its property names as the client wrote them).
  if (field.startsWith('response_format') || field.startsWith('tools[')) return field;
  // A completions prompt given as token ids reaches the model as promptIds.
  if (field === 'promptIds' || field.startsWith('promptIds/')) field = `prompt${field.slice('promptIds'.length)}`;
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
      case 'KvCacheFull': {
        // Past the whole budget it never fits (400); else it fits once running generations end (429).
        const { needed, total } = e as KvCacheFull;
        return needed > total ? failure(400, 'invalid_request_error', e.code, e.message, 'max_tokens') : failure(429, 'rate_limit_error', e.code, e.message);
      }
      default:
        return failure(500, 'server_error', e.code, e.message);
    }
  }
  return failure(500, 'server_error', 'InternalError', messageOf(e));
}
