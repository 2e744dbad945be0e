/**
 * The one model a server serves, held through its loads: `loading` (health 503) until open resolves,
 * then `ready`; a generation whose device failed (a missed deadline, a crash) closes it and opens it
 * again, so the next request finds a fresh actor. One generation runs at a time (one KV cache).
 */
import { EngineError } from '../errors/index.js';
import type { GenerateRequest } from '../model/qwen3/model.js';
import type { GenerateOptions, GeneratedToken, GenerationResult } from '../model/qwen3/generate.js';
import type { PrefixCacheStats } from '../model/qwen3/prefix.js';
import type { KvUse } from '../model/qwen3/kv.js';

/** What the server needs of a model: the built-in Qwen3Model, or an add-on's route model. */
export interface ServedModel {
  /** `options.share`: the choices of one prompt share its prefill (the built-in model; others ignore it). */
  generate(r: GenerateRequest, options?: GenerateOptions): AsyncGenerator<GeneratedToken, GenerationResult, void>;
  close(): Promise<void>;
  /** The chat template family whose tool-call format its answers are read in (src/serve/toolcalls.ts; default qwen). */
  readonly toolCallFamily?: string;
  /** The model's prefix cache (the built-in Qwen3Model's; src/model/qwen3/prefix.ts), for /v1/status and /metrics. */
  readonly prefixCache?: { stats(): PrefixCacheStats } | undefined;
  /** Generations it decodes together (the built-in model's batch, model/qwen3/batch.ts); absent: one at a time. */
  readonly slots?: number;
  /** The KV budget's use now (the built-in model's; src/model/qwen3/kv.ts), for /v1/status and /metrics. */
  kvUse?(): KvUse | undefined;
}

/** The codes after which the model's device is not to be trusted: reload it. */
const RELOAD_CODES: ReadonlySet<string> = new Set(['DeadlineExceeded', 'DevicePoisoned', 'ActorCrashed', 'ActorDown']);

/** Whether a failure of a generation calls for a reload of its model. */
export function needsReload(e: unknown): boolean {
  return e instanceof EngineError && RELOAD_CODES.has(e.code);
}

/** The served model and its state. */
export class ModelHolder {
  #model: ServedModel | undefined;
  #loading: Promise<void> | undefined;
  #error: unknown;

  constructor(readonly id: string, private readonly open: () => Promise<ServedModel>, private readonly log: (line: string) => void) {}

  get state(): 'loading' | 'ready' | 'failed' {
    return this.#model !== undefined ? 'ready' : this.#loading !== undefined ? 'loading' : 'failed';
  }

  /** Why the last load failed. */
  get error(): unknown { return this.#error; }

  /** Loads (or reloads) the model; resolves once it is ready or failed. */
  load(): Promise<void> {
    if (this.#loading !== undefined) return this.#loading;
    const old = this.#model;
    this.#model = undefined;
    this.#loading = (async () => {
      try {
        await old?.close().catch(() => undefined);
        this.#model = await this.open();
        this.#error = undefined;
      } catch (e) {
        this.#error = e;
        this.log(`the model ${this.id} failed to load: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        this.#loading = undefined;
      }
    })();
    return this.#loading;
  }

  /** The ready model (the caller checks `state` first). */
  get model(): ServedModel | undefined { return this.#model; }

  async close(): Promise<void> {
    await this.#loading;
    await this.#model?.close();
    this.#model = undefined;
  }
}
