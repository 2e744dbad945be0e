/**
 * The flags `generate` and `gate` share: the model's target, context and threads, and the prompt
 * (`--prompt`, `--prompt-ids`, `--chat FILE.json`). A malformed value is a usage error (exit 2).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { EngineError, InvalidInput, messageOf } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';
import { loadModel, type Qwen3Model } from '../model/qwen3/model.js';
import { checkMessages } from '../model/tokenizer/chat.js';
import type { ChatMessage } from '../model/tokenizer/types.js';
import { TARGET_NAMES } from '../targets/target.js';
import { intArg } from './options.js';
import { threadsArg } from './limits.js';
import { parseJsonFile } from '../ir/jsonText.js';

/** The flags of the model and its prompt. */
export interface ModelFlags {
  readonly target: string;
  readonly ctx?: number;
  readonly threads?: number;
  readonly exactMatmul?: boolean;
  readonly cacheType?: 'f32' | 'f16';
  readonly maxProgramBytes?: number;
  readonly prefillTarget?: string;
  readonly cacheDir?: string;
  readonly prompt?: string;
  readonly promptIds?: number[];
  readonly chat?: string;
  readonly thinking?: boolean;
}

/** A parser of a number flag of at least `min`. */
export function numberArg(flag: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min) throw new InvalidArgumentError(`${flag} must be a number of at least ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** `1,2,3` as token ids. */
export function idsArg(v: string): number[] {
  const parts = v.split(',').map((s) => s.trim());
  if (parts.some((s) => !/^\d{1,15}$/.test(s))) throw new InvalidArgumentError(`--prompt-ids takes token ids separated by commas (1,2,3), got ${JSON.stringify(v)}`);
  return parts.map(Number);
}

/** Adds the model and prompt flags to a command; `--target` defaults to `target`. */
export function withModelFlags(c: Command, target: string): Command {
  return c
    .addOption(new Option('--target <target>', 'where the programs run (cpu: the float64 reference, slow; host: the fast CPU target)').choices([...TARGET_NAMES]).default(target))
    .addOption(new Option('--ctx <n>', 'positions the KV cache holds (default 1024, at most the model\'s context)').argParser(intArg('--ctx')))
    .addOption(new Option('--threads <n>', 'threads of a target that takes a count (host)').argParser(threadsArg('--threads')))
    .addOption(new Option('--exact-matmul', 'host: matmuls by quantized weights with f32 activations (the exact class) rather than int8 activations (docs/HOST.md, "q8 activations")'))
      .addOption(new Option('--cache-type <type>', 'the KV cache\'s dtype: f32 (the exact class) or f16 (half the bytes, each stored element rounded once; docs/MODELS.md)').choices(['f32', 'f16']).default('f32'))
    .addOption(maxProgramBytesOption())
    .addOption(new Option('--prefill-target <targets>', 'where prompts are prefilled, a target or a list (npu4,host); the KV cache is handed to --target'))
    .addOption(new Option('--cache-dir <dir>', 'blob cache directory'))
    .addOption(new Option('--prompt <text>', 'the prompt as text'))
    .addOption(new Option('--prompt-ids <ids>', 'the prompt as token ids, 1,2,3').argParser(idsArg))
    .addOption(new Option('--chat <file>', 'a JSON file of messages [{ "role", "content" }], rendered by the model\'s chat template'))
    .addOption(new Option('--no-thinking', 'with --chat: Qwen3\'s enable_thinking = false'));
}

/**
 * `--max-program-bytes` for a model: the program-bytes limit its programs are built and run under
 * (docs/LIMITS.md). A long context needs more than the default: a 32k cache of Qwen3-0.6B counts 15 GB
 * at 8 bytes an element, however few bytes the host holds it in.
 */
export function maxProgramBytesOption(): Option {
  return new Option('--max-program-bytes <n>', 'the program-bytes limit of the model\'s programs: bytes of the values a step holds at once, 8 per element (default 8589934592; a long --ctx needs more, docs/LIMITS.md)').argParser(intArg('--max-program-bytes'));
}

/** The messages of a --chat file: an array of messages, or `{ "messages": [...] }`. */
export function readChat(path: string): ChatMessage[] {
  let json: unknown;
  try {
    json = parseJsonFile(readRegularFile(path).toString('utf8'), path);
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new InvalidInput(path, `the chat file is not JSON: ${messageOf(e)}`);
  }
  const messages = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as { messages?: unknown }).messages : json;
  try {
    checkMessages(messages);
  } catch (e) {
    if (e instanceof InvalidInput) throw new InvalidInput(`${path}${e.path}`, e.reason);
    throw e;
  }
  return [...messages];
}

/** The prompt part of a request from the flags (exactly one is checked by the model). */
export function promptOf(f: ModelFlags): { prompt?: string; promptIds?: number[]; messages?: ChatMessage[]; enableThinking?: boolean } {
  return {
    ...(f.prompt !== undefined ? { prompt: f.prompt } : {}),
    ...(f.promptIds !== undefined ? { promptIds: f.promptIds } : {}),
    ...(f.chat !== undefined ? { messages: readChat(f.chat) } : {}),
    ...(f.thinking === false ? { enableThinking: false } : {}),
  };
}

/** Loads the model the flags name (these commands run one generation at a time: no batch of them, parallel 1). */
export function modelOf(path: string, f: ModelFlags): Promise<Qwen3Model> {
  return loadModel(path, {
    target: f.target,
    parallel: 1,
    ...(f.ctx !== undefined ? { ctx: f.ctx } : {}),
    ...(f.threads !== undefined ? { threads: f.threads } : {}),
    ...(f.exactMatmul === true ? { exactMatmul: true } : {}),
    ...(f.cacheType !== undefined ? { cacheType: f.cacheType } : {}),
    ...(f.maxProgramBytes !== undefined ? { limits: { programBytes: Math.max(1, f.maxProgramBytes) } } : {}),
    ...(f.prefillTarget !== undefined ? { prefillTarget: f.prefillTarget } : {}),
    ...(f.cacheDir !== undefined ? { cacheDir: f.cacheDir } : {}),
  });
}
