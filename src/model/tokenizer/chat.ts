/**
 * Chat prompts: the model's own Jinja template (tokenizer_config.json's `chat_template`, a GGUF's
 * `tokenizer.chat_template`) rendered with @huggingface/jinja under the variables transformers passes
 * (messages, add_generation_prompt, the special tokens, tools, enable_thinking), or ChatML for a
 * model without one.
 * @internal
 */
import { Template } from '@huggingface/jinja';
import { InvalidInput, InvalidOptions, messageOf, TokenizerError } from '../../errors/index.js';
import { checkText } from './text.js';
import type { ChatMessage, ChatOptions } from './types.js';

/** A model's chat template and the special-token strings templates read. */
export interface ChatSpec {
  readonly template: string | null;
  readonly tokens: Readonly<Partial<Record<'bos_token' | 'eos_token' | 'pad_token' | 'unk_token', string>>>;
}

const compiled = new WeakMap<ChatSpec, ChatTemplate>();
/** The last template given in place of a model's own (a server gives the same one every time). */
let given: { readonly text: string; readonly template: ChatTemplate } | undefined;

/** A compiled chat template: renders a template's variables to the prompt text. */
export interface ChatTemplate {
  render(items?: Record<string, unknown>): string;
}

/** A Jinja chat template compiled; TokenizerError naming `source` when it does not parse. */
export function compileChatTemplate(text: string, source: string): ChatTemplate {
  try {
    return new Template(text);
  } catch (e) {
    throw new TokenizerError(source, `the chat template does not parse: ${messageOf(e)}`);
  }
}

function templateOf(spec: ChatSpec & { template: string }, source: string): ChatTemplate {
  let t = compiled.get(spec);
  if (t === undefined) {
    t = compileChatTemplate(spec.template, source);
    compiled.set(spec, t);
  }
  return t;
}

function givenTemplate(text: string, source: string): ChatTemplate {
  if (given?.text !== text) given = { text, template: compileChatTemplate(text, `${source} (the given chat template)`) };
  return given.template;
}

/** Throws InvalidInput unless `messages` is an array of { role, content } with string fields. */
export function checkMessages(messages: unknown): asserts messages is readonly ChatMessage[] {
  if (!Array.isArray(messages)) throw new InvalidInput('', 'messages must be an array of { role, content }');
  messages.forEach((m: unknown, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new InvalidInput(`/${i}`, 'a message must be an object { role, content }');
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || role === '') throw new InvalidInput(`/${i}/role`, 'must be a non-empty string');
    if (typeof content !== 'string') throw new InvalidInput(`/${i}/content`, 'must be a string');
    checkText(role, `/${i}/role`);
    checkText(content, `/${i}/content`);
  });
}

/** The ChatML prompt, for a model that carries no template. */
function chatml(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  let s = '';
  for (const m of messages) s += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  return addGenerationPrompt ? `${s}<|im_start|>assistant\n` : s;
}

/** Renders the prompt for messages. */
export function renderChat(spec: ChatSpec, source: string, messages: readonly ChatMessage[], options: ChatOptions): string {
  checkMessages(messages);
  const addGenerationPrompt = options.addGenerationPrompt ?? true;
  if (options.template === undefined && spec.template === null) {
    // ChatML has no place for tools or tool calls: refused rather than dropped.
    if (options.tools !== undefined && options.tools.length > 0) throw new InvalidOptions('tools', 'this model has no chat template, and ChatML (used in its place) cannot render tools: give a template (serve --chat-template FILE)');
    const i = messages.findIndex((m) => Array.isArray(m['tool_calls']) && m['tool_calls'].length > 0);
    if (i >= 0) throw new InvalidOptions(`messages/${i}/tool_calls`, 'this model has no chat template, and ChatML (used in its place) cannot render tool calls: give a template (serve --chat-template FILE)');
    return chatml(messages, addGenerationPrompt);
  }
  const template = options.template !== undefined ? givenTemplate(options.template, source) : templateOf(spec as ChatSpec & { template: string }, source);
  const vars: Record<string, unknown> = { ...spec.tokens, ...options.variables, messages, add_generation_prompt: addGenerationPrompt };
  if (options.tools !== undefined) vars['tools'] = options.tools;
  if (options.enableThinking !== undefined) vars['enable_thinking'] = options.enableThinking;
  let out: unknown;
  try {
    out = template.render(vars);
  } catch (e) {
    throw new TokenizerError(source, `the chat template failed: ${messageOf(e)}`);
  }
  if (typeof out !== 'string') throw new TokenizerError(source, 'the chat template did not render a string');
  return out;
}
