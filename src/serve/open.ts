/**
 * Which path serves a model: a directory's config.json `model_type` picks an add-on route when one
 * accepts it; an optional route that declines (its reason logged) leaves it to the built-in Qwen3 path,
 * exactly as without the add-on; a `model_type` nothing serves is refused naming it.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EngineError, InvalidInput, InvalidOptions, messageOf } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';
import { parseJsonFile } from '../ir/jsonText.js';
import { chatOptionsOf, loadModel, type GenerateRequest, type LoadModelOptions, type Qwen3Model } from '../model/qwen3/model.js';
import type { FinishReason, GeneratedToken, GenerationResult } from '../model/qwen3/generate.js';
import { TextStream } from '../model/qwen3/stream.js';
import { compileChatTemplate } from '../model/tokenizer/chat.js';
import { vocabularyTrie } from '../model/grammar/decoder.js';
import { loadTokenizer } from '../model/tokenizer/load.js';
import { TextWorker } from '../model/tokenizer/textWorker.js';
import type { Registry, RouteModel, RouteOptions } from './addons.js';
import type { ServedModel } from './model.js';
import { repacked, REPACK_TARGETS } from './repack.js';

/** The model_types the built-in path serves. */
const BUILT_IN_TYPES: readonly string[] = ['qwen3'];

/** A model resolved to its path: its id and how to open it. */
export interface ResolvedModel {
  readonly id: string;
  /** 'built-in', or the model_type of the add-on route that serves it. */
  readonly route: string;
  readonly open: () => Promise<ServedModel>;
}

function modelTypeOf(dir: string): string | undefined {
  const p = join(dir, 'config.json');
  if (!existsSync(p)) return undefined;
  let json: unknown;
  try { json = parseJsonFile(readRegularFile(p).toString('utf8'), p); } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new InvalidInput(p, `config.json is not JSON: ${messageOf(e)}`);
  }
  const t = typeof json === 'object' && json !== null ? (json as { model_type?: unknown }).model_type : undefined;
  return typeof t === 'string' ? t : undefined;
}

/** Resolves MODEL to the route that serves it (see the file's doc). */
export async function resolveModel(path: string, load: LoadModelOptions & { readonly npuOpts?: Readonly<Record<string, string>> }, registry: Registry, log: (line: string) => void): Promise<ResolvedModel> {
  const id = basename(path).replace(/\.gguf$/i, '');
  const isDir = existsSync(path) && statSync(path).isDirectory();
  const type = isDir ? modelTypeOf(path) : undefined;
  if (type !== undefined) {
    for (const route of registry.routesFor(type)) {
      const answer = await route.canServe(path);
      if (answer === true) {
        const options: RouteOptions = { target: load.target ?? 'host', npuOpts: load.npuOpts ?? {}, ...(load.ctx !== undefined ? { ctx: load.ctx } : {}), ...(load.threads !== undefined ? { threads: load.threads } : {}) };
        return { id, route: type, open: async () => servedRouteModel(path, await route.open(path, options), type) };
      }
      if (route.optional !== true) throw new InvalidInput(join(path, 'config.json'), `the ${type} route cannot serve this directory: ${answer.unavailable}`);
      log(`the optional ${type} route declined ${path}: ${answer.unavailable}; the built-in path serves it`);
    }
    if (!BUILT_IN_TYPES.includes(type)) throw new InvalidInput(join(path, 'config.json'), `model_type ${JSON.stringify(type)}: its route is not part of this build (the built-in path serves ${BUILT_IN_TYPES.join(', ')}; an add-on may add it with --addon)`);
  }
  // Threads reach an add-on route as an option; the built-in path takes them from its engine (when given one).
  const { npuOpts: _n, ...given } = load;
  const { threads: _t, ...withEngine } = given;
  const opts = given.engine !== undefined ? withEngine : given;
  // The decode session opens while the server says it is loading, not in the first request.
  const warmed = async (load: () => Promise<Qwen3Model>) => {
    const model = await load();
    try {
      await model.warm();
      // The vocabulary trie a constrained answer walks (response_format, forced tool calls): about 0.6 s
      // for Qwen3's 151k tokens, spent here while the server says it is loading rather than on the
      // event loop of the first constrained request, where every stream would wait for it.
      const tok = model.tokenizer;
      if (tok !== null) vocabularyTrie(tok);
    } catch (e) {
      await model.close();
      throw e;
    }
    return model;
  };
  if (!isDir && REPACK_TARGETS.includes(load.target ?? 'host')) {
    return { id, route: 'repack', open: () => warmed(() => loadModel(repacked(path, log, load.cacheDir === undefined ? undefined : join(load.cacheDir, 'q4nx')), opts)) };
  }
  return { id, route: 'built-in', open: () => warmed(() => loadModel(path, opts)) };
}

/**
 * A chat template file (`serve --chat-template FILE`): its text, once it parses as Jinja; a template that
 * does not parse is a TokenizerError naming the file, a file that cannot be read its typed error.
 */
export function readChatTemplate(path: string): string {
  const text = readRegularFile(path, { what: 'chat template' }).toString('utf8');
  compileChatTemplate(text, path);
  return text;
}

/** A request's prompt as ids, its text rendered and encoded in the text worker (off the event loop). */
async function promptOf(t: TextWorker, r: GenerateRequest): Promise<number[]> {
  if (r.promptIds !== undefined) return [...r.promptIds];
  if (r.messages !== undefined) return (await t.encodeChat(r.messages, chatOptionsOf(r))).ids;
  return t.encode(r.prompt ?? '');
}

/** A route model as a served model: the directory's tokenizer, its end ids, stop strings and counts. */
function servedRouteModel(dir: string, model: RouteModel, route = 'add-on'): ServedModel {
  const tokenizer = loadTokenizer(dir);
  const worker = new TextWorker(dir);
  return {
    async *generate(r: GenerateRequest): AsyncGenerator<GeneratedToken, GenerationResult, void> {
      // A route model takes temperature, top_p, seed and the repetition penalty only: the rest is refused, not ignored.
      for (const f of ['logprobs', 'logitBias', 'topK', 'minP', 'presencePenalty', 'frequencyPenalty'] as const) {
        if (r[f] !== undefined) throw new InvalidOptions(f, `the ${route} add-on route does not take ${f} (only temperature, top_p, seed and repetition_penalty)`);
      }
      const promptIds = await promptOf(worker, r);
      const max = r.maxTokens ?? 128;
      const stream = new TextStream(tokenizer, r.stop ?? []);
      const ids: number[] = [];
      let text = '';
      let finish: FinishReason = 'length';
      const t0 = performance.now();
      if (max > 0) {
        for await (const id of model.generate({ promptIds, maxTokens: max, ...pick(r) })) {
          if (tokenizer.eosIds.includes(id)) { finish = 'eos'; break; }
          ids.push(id);
          const piece = stream.push(id);
          text += piece;
          yield { id, text: piece };
          if (stream.stopped) { finish = 'stop'; break; }
          if (ids.length >= max) break;
        }
      }
      text += stream.end();
      const ms = performance.now() - t0;
      return { ids, text, promptTokens: promptIds.length, finishReason: finish, timings: { prefillMs: 0, decodeMs: ms, prefillTokS: 0, decodeTokS: ms > 0 ? (ids.length * 1000) / ms : 0, decodeSteps: ids.length }, ranOn: [] };
    },
    close: async () => { await worker.close(); await model.close?.(); },
  };
}

function pick(r: GenerateRequest): Omit<Parameters<RouteModel['generate']>[0], 'promptIds' | 'maxTokens'> {
  return {
    ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
    ...(r.topP !== undefined ? { topP: r.topP } : {}),
    ...(r.seed !== undefined ? { seed: r.seed } : {}),
    ...(r.repetitionPenalty !== undefined ? { repetitionPenalty: r.repetitionPenalty } : {}),
  };
}
