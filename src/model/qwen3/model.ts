/**
 * loadModel: a Qwen3 from a GGUF or a model directory, run through the engine on a target. Its
 * `generate` is an async iterator of tokens (its return value the whole result), `complete` the same
 * collected. `reference()` is the same model on the fp64 oracle, for checking a target against it.
 */
import { EngineError, InvalidOptions, ResourceLimit, TokenizerError } from '../../errors/index.js';
import { parseTargetList } from '../../planner/partition.js';
import { createEngine, type Engine } from '../../jobs/engine.js';
import type { Program } from '../../ir/types.js';
import { DEFAULT_LIMITS, resolveLimits, type Limits } from '../../ir/limits.js';
import { isTargetName, TARGET_NAMES } from '../../targets/target.js';
import type { ChatMessage, ChatOptions } from '../tokenizer/types.js';
import type { Tokenizer } from '../tokenizer/types.js';
import type { Qwen3Config } from './config.js';
import { generateIds, prefillTokens, type DecodeRequest, type GenerateOptions, type GeneratedToken, type GenerationContext, type GenerationResult } from './generate.js';
import { buildProgram, CACHE_TYPES, cacheLayout, type CacheType } from './program.js';
import { checkPrefixCacheOptions, PrefixCache, type PrefixCacheOptions, type PrefixCut } from './prefix.js';
import { programFor, type PlacedProgram } from './forms.js';
import { EngineRunner, ReferenceRunner, type StepRunner } from './runner.js';
import { BatchRunner, Batcher, type BatchUse } from './batch.js';
import { KvBudget, type KvUse } from './kv.js';
import { openModelSource, type ModelSource } from './source.js';
import { scoreIds, type ScoreResult } from './score.js';
import { embedIds, type Pooling } from './embed.js';
import { loadTokenizer } from '../tokenizer/load.js';
import { TextWorker, type TextLimits } from '../tokenizer/textWorker.js';

/** Options of loadModel. */
export interface LoadModelOptions {
  /**
   * The target the programs run on (default `cpu`). Each program is built in the form the target plans
   * best (forms.ts); what its planner refuses of the decode program (or of a prefill program on
   * `prefillTarget`) refuses the model when it loads, with that typed error.
   */
  readonly target?: string;
  /** Positions the KV cache holds (default the smaller of 1024 and the model's context length). */
  readonly ctx?: number;
  /** Threads for a target that takes a count (host); the cpu target runs the oracle on one. */
  readonly threads?: number;
  /**
   * On host, matmuls by a quantized weight in the exact class (f32 activations, within γ(K+2)) rather
   * than the default q8-activations class (docs/HOST.md, "q8 activations": faster prefill, its own
   * bound, batch-invariant). Part of the artifacts' identity.
   */
  readonly exactMatmul?: boolean;
  /**
   * The KV cache's dtype: `f32` (the default, the exact class) or `f16` (half the bytes; each stored k
   * and v element rounded once to f16, docs/MODELS.md "KV cache type"). Part of the programs' names.
   */
  readonly cacheType?: CacheType;
  /** Tokens per prefill step at most (default 512; halved, down to 16, while its program is past the program-bytes limit). */
  readonly prefillChunk?: number;
  /** An engine to run on (it stays open); default a new one, closed by close(). */
  readonly engine?: Engine;
  /** The blob cache directory of the engine made here. */
  readonly cacheDir?: string;
  /**
   * Where prompts are prefilled, when not on `target`: a target or a list of them in order of preference
   * (`npu4,host`: a partitioned program). Its KV cache is handed to `target`'s decode session.
   */
  readonly prefillTarget?: string;
  /** A tokenizer.json or a directory holding one, used over the model's own tokenizer. */
  readonly tokenizer?: string;
  /** A step's deadline in ms (default none: a large model's prefill on the cpu target takes minutes). */
  readonly deadlineMs?: number;
  /** The bounds of rendering and encoding prompts in the text worker (docs/LIMITS.md). */
  readonly textLimits?: TextLimits;
  /**
   * The program limits (docs/LIMITS.md) the model's programs are built under, and the engine made here
   * checks them under (an engine given here checks them under its own): a long context needs a larger
   * `programBytes` (ctx 32768 for Qwen3-0.6B holds 7.5 GB of f32 KV cache, 15 GB as the limit counts it).
   */
  readonly limits?: Partial<Limits>;
  /**
   * The prefix cache (prefix.ts): the KV cache of the prompts' prefixes kept across generations, at
   * most `bytes` of it in blocks of `block` positions (default 64), so that a prompt starting with a
   * cached prefix prefills only the rest, its answer the bytes of a cold run's. Unset or `false`: none
   * (a model that runs one generation would only pay for keeping it); `serve` gives one of
   * `--cache-ram` MiB (default DEFAULT_PREFIX_CACHE_BYTES). A partitioned prefill target (a list) takes none.
   */
  readonly prefixCache?: PrefixCacheOptions | false;
  /**
   * Generations decoded together (default 4): `generate` calls running at once on the host target share
   * one step of a program of this many sequences (batch.ts), each one's tokens and logits the bytes it
   * gets alone. 1 decodes each generation by itself. Other targets, a prefill target, or a batch program
   * past the program limits decode each by itself.
   */
  readonly parallel?: number;
  /**
   * The KV budget (kv.ts): positions the generations running at once may fill, in blocks of the prefix
   * cache's `block` (default 64). Each generation reserves its prompt and `maxTokens` (within `ctx`) when
   * it starts and is refused with KvCacheFull when they are not free; it gives them back when it ends.
   * `true`: `ctx` for each slot (`ctx` x `parallel` where generations batch, else `ctx`), as `serve`
   * gives unless `--kv-budget` says otherwise; a number: that many positions (whole blocks of them).
   * Unset or `false`: none (concurrent `generate` calls past the slots wait for one).
   */
  readonly kvBudget?: number | boolean;
}

/** Each model source's text worker, shared by the models made from it (reference(), decodeTargetOnly()). */
const TEXT_WORKERS = new WeakMap<ModelSource, { readonly limits: TextLimits; worker?: TextWorker }>();

/** A request: exactly one of `prompt`, `promptIds` or `messages`, and how to decode. */
export interface GenerateRequest extends Omit<DecodeRequest, 'promptIds'> {
  readonly prompt?: string;
  readonly promptIds?: readonly number[];
  readonly messages?: readonly ChatMessage[];
  /** Qwen3's thinking switch for `messages` (unset leaves it to the template). */
  readonly enableThinking?: boolean;
  /** Tool definitions the chat template renders with `messages`. */
  readonly tools?: readonly unknown[];
  /** A Jinja chat template used over the model's own for `messages`. */
  readonly chatTemplate?: string;
  /** Further variables the chat template reads (a server's `chat_template_kwargs`). */
  readonly chatVariables?: Readonly<Record<string, unknown>>;
}

/** The chat options of a request's `messages`: its thinking switch, tools and template. */
export function chatOptionsOf(r: GenerateRequest): ChatOptions {
  return {
    ...(r.enableThinking !== undefined ? { enableThinking: r.enableThinking } : {}),
    ...(r.tools !== undefined ? { tools: r.tools } : {}),
    ...(r.chatTemplate !== undefined ? { template: r.chatTemplate } : {}),
    ...(r.chatVariables !== undefined ? { variables: r.chatVariables } : {}),
  };
}

function positiveInt(v: unknown, field: string): void {
  if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= 1)) throw new InvalidOptions(field, `a whole number of at least 1, not ${JSON.stringify(v)}`);
}

/** The target a model may run on: one of the engine's, else a typed refusal. */
export function checkModelTarget(target: string): string {
  if (isTargetName(target)) return target;
  throw new InvalidOptions('target', `no such target ${JSON.stringify(target)} (the targets: ${TARGET_NAMES.join(', ')})`);
}

/** A target or a comma list of them (the planner's own reading of a list); else InvalidOptions naming `field`. */
function checkTargetList(list: unknown, field: string): string {
  if (typeof list !== 'string') throw new InvalidOptions(field, `a target or a comma list of targets, not ${JSON.stringify(list)}`);
  try {
    parseTargetList(list);
  } catch (e) {
    if (e instanceof EngineError) throw new InvalidOptions(field, e.message);
    throw e;
  }
  return list;
}

/** A loaded Qwen3. */
export class Qwen3Model {
  readonly #programs = new Map<string, PlacedProgram>();
  readonly #owned: Engine | undefined;
  #chunk: number | undefined;
  // The prefix cache's options (none for a model made from another: reference(), decodeTargetOnly()), and the cache once made.
  #prefixOptions: PrefixCacheOptions | false = false;
  #prefixes: PrefixCache | undefined;
  // The batch of the generations running at once (built at the first generation), or null where none runs.
  #batch: BatchRunner | null | undefined;
  // loadModel's kvBudget, and the budget once made.
  #kvOption: number | boolean = false;
  #kv: KvBudget | undefined;

  private constructor(readonly source: ModelSource, readonly ctx: number, readonly prefillChunk: number, readonly runner: StepRunner, owned?: Engine, readonly limits: Limits = DEFAULT_LIMITS, readonly cacheType: CacheType = 'f32', readonly parallel = 1) {
    this.#owned = owned;
  }

  /** @internal Use loadModel. */
  static create(source: ModelSource, opts: LoadModelOptions): Qwen3Model {
    positiveInt(opts.ctx, 'ctx');
    positiveInt(opts.threads, 'threads');
    positiveInt(opts.prefillChunk, 'prefillChunk');
    positiveInt(opts.parallel, 'parallel');
    const target = checkModelTarget(opts.target ?? 'cpu');
    const ctx = opts.ctx ?? Math.min(1024, source.config.contextLength);
    if (ctx > source.config.contextLength) throw new InvalidOptions('ctx', `${ctx} positions are more than the model's context length ${source.config.contextLength}`);
    if (opts.engine !== undefined && opts.threads !== undefined) {
      throw new InvalidOptions('threads', 'an engine given to loadModel keeps its own threads: createEngine({ devices: { host: { threads } } })');
    }
    if (opts.cacheType !== undefined && !CACHE_TYPES.includes(opts.cacheType)) throw new InvalidOptions('cacheType', `f32 or f16, not ${JSON.stringify(opts.cacheType)}`);
    if (opts.exactMatmul !== undefined && typeof opts.exactMatmul !== 'boolean') throw new InvalidOptions('exactMatmul', `true or false, not ${typeof opts.exactMatmul}`);
    if (opts.engine !== undefined && opts.exactMatmul !== undefined) {
      throw new InvalidOptions('exactMatmul', 'an engine given to loadModel keeps its own matmul class: createEngine({ devices: { host: { matmul } } })');
    }
    const prefix = checkPrefixCacheOptions(opts.prefixCache) ?? false;
    if (opts.kvBudget !== undefined && typeof opts.kvBudget !== 'boolean') positiveInt(opts.kvBudget, 'kvBudget');
    const host = { ...(opts.threads === undefined ? {} : { threads: opts.threads }), matmul: opts.exactMatmul === true ? 'exact' as const : 'q8' as const };
    // Made now so that bad limits refuse the load; its thread starts with the first text.
    const text = source.tokenizer instanceof TokenizerError ? undefined : new TextWorker(source.tokenizer.source, opts.textLimits);
    TEXT_WORKERS.set(source, { limits: opts.textLimits ?? {}, ...(text !== undefined ? { worker: text } : {}) });
    const limits = resolveLimits(opts.limits);
    const owned = opts.engine === undefined
      ? createEngine({ ...(opts.cacheDir === undefined ? {} : { cacheDir: opts.cacheDir }), devices: { host }, ...(opts.limits === undefined ? {} : { limits }) })
      : undefined;
    const prefill = opts.prefillTarget === undefined ? undefined : checkTargetList(opts.prefillTarget, 'prefillTarget');
    const runner = new EngineRunner(opts.engine ?? owned!, target, source.weights, opts.deadlineMs, prefill);
    const model = new Qwen3Model(source, ctx, opts.prefillChunk ?? 512, runner, owned, limits, opts.cacheType ?? 'f32', opts.parallel ?? 4);
    model.#prefixOptions = prefill?.includes(',') === true ? false : prefix;
    model.#kvOption = opts.kvBudget ?? false;
    try {
      model.#checkPlanned();
    } catch (e) {
      void owned?.close();
      throw e;
    }
    return model;
  }

  get config(): Qwen3Config { return this.source.config; }

  /** The tokenizer, or null when the model has none (then only `promptIds` work). */
  get tokenizer(): Tokenizer | null {
    return this.source.tokenizer instanceof TokenizerError ? null : this.source.tokenizer;
  }

  /** The ids that end a generation: the tokenizer's, else the file's. */
  get eosIds(): readonly number[] {
    return this.tokenizer?.eosIds ?? this.config.eosIds;
  }

  /** The same model (same programs, same weights) on the oracle in fp64 mode, in this thread. */
  reference(): Qwen3Model {
    return new Qwen3Model(this.source, this.ctx, this.prefillChunk, new ReferenceRunner(this.source.weights), undefined, this.limits, this.cacheType);
  }

  /** Where this model's prompts are prefilled when not on its target (loadModel's prefillTarget). */
  get prefillTarget(): string | undefined {
    return this.runner instanceof EngineRunner ? this.runner.prefillTarget : undefined;
  }

  /** The same model on the same engine and target with every step there (no prefill target). */
  decodeTargetOnly(): Qwen3Model {
    if (!(this.runner instanceof EngineRunner) || this.runner.prefillTarget === undefined) return this;
    const r = this.runner;
    return new Qwen3Model(this.source, this.ctx, this.prefillChunk, new EngineRunner(r.engine, r.target, this.source.weights, r.deadlineMs), undefined, this.limits, this.cacheType);
  }

  /**
   * The batch the generations running at once decode in (batch.ts), made at the first call: null where
   * none runs (parallel 1, a target other than host, a prefill target, a batch program past the limits).
   */
  #batchRunner(): BatchRunner | null {
    if (this.#batch !== undefined) return this.#batch;
    const r = this.runner;
    this.#batch = null;
    if (this.parallel < 2 || !(r instanceof EngineRunner) || r.target !== 'host' || r.prefillTarget !== undefined) return null;
    let program: Program;
    try {
      program = buildProgram(this.config, this.source.weights, { tokens: 1, ctx: this.ctx, limits: this.limits, cacheType: this.cacheType, sequences: this.parallel });
    } catch (e) {
      if (e instanceof ResourceLimit) return null;
      throw e;
    }
    this.#batch = new BatchRunner(r, new Batcher(r, this.config, this.ctx, program, this.parallel));
    // Each generation of a batch gives back its prefill's and its decode program's sessions: kept for
    // the next `parallel` generations, which so open none (each opened anew is a new zeroed cache).
    r.keepIdle(2 * this.parallel);
    return this.#batch;
  }

  /** Generations that decode together: `parallel` where they batch (batchRunner), else 1. */
  get slots(): number {
    return this.#batchRunner() === null ? 1 : this.parallel;
  }

  /** The batch's slots in use now (none where generations decode each by itself). */
  batchUse(): BatchUse | undefined {
    return this.#batch?.batcher.use();
  }

  /**
   * The KV budget (kv.ts), made at the first call: undefined when the model keeps none (loadModel's
   * `kvBudget` unset or false). Its blocks are the prefix cache's (64 positions without one).
   */
  get kvBudget(): KvBudget | undefined {
    const o = this.#kvOption;
    if (this.#kv !== undefined || o === false) return this.#kv;
    const block = this.#prefixOptions === false ? 64 : this.#prefixOptions.block ?? 64;
    const total = o === true ? Math.ceil(this.ctx / block) * this.slots : Math.floor(o / block);
    this.#kv = new KvBudget(total, block, this.ctx);
    return this.#kv;
  }

  /** The KV budget's use now (blocks held, filled, free; each running generation's), undefined without one. */
  kvUse(): KvUse | undefined {
    return this.kvBudget?.use();
  }

  /** The program of `tokens` tokens (1: decode) at this model's context, in the form its target runs (forms.ts). */
  program(tokens: number, allLogits = false): Program {
    const r = this.runner;
    return this.#programOn(r instanceof EngineRunner ? r.target : undefined, tokens, allLogits);
  }

  /** The program a prompt chunk of `tokens` tokens is prefilled with: in the prefill target's form, when there is one. */
  prefillProgram(tokens: number): Program {
    const r = this.runner;
    return this.#programOn(r instanceof EngineRunner ? r.prefillTarget ?? r.target : undefined, tokens, false);
  }

  /**
   * The tokens a prefill step takes at most: `prefillChunk`, halved (down to 16) while its program is
   * past the `program-bytes` limit (a long context: the scores of a chunk grow with it), so that a
   * long prompt is prefilled in smaller steps rather than refused. Found once, its program kept.
   */
  fittingChunk(): number {
    if (this.#chunk !== undefined) return this.#chunk;
    let c = Math.max(1, Math.min(this.prefillChunk, this.ctx));
    for (;;) {
      try {
        if (c > 1) this.prefillProgram(c);
        break;
      } catch (e) {
        if (!(e instanceof ResourceLimit && e.what === 'program-bytes') || c <= 16) throw e;
        c = Math.max(16, Math.floor(c / 2));
      }
    }
    this.#chunk = c;
    return c;
  }

  /** The program of `tokens` tokens whose result is every token's final-norm hidden state (embed). */
  hiddenProgram(tokens: number): Program {
    const r = this.runner;
    const target = r instanceof EngineRunner ? (tokens > 1 ? r.prefillTarget ?? r.target : r.target) : undefined;
    return this.#placed(target, tokens, false, 'hidden').program;
  }

  #programOn(targets: string | undefined, tokens: number, allLogits: boolean): Program {
    return this.#placed(targets, tokens, allLogits).program;
  }

  #placed(targets: string | undefined, tokens: number, allLogits: boolean, output?: 'hidden'): PlacedProgram {
    const key = `${targets ?? ''}/${tokens}/${allLogits}${output === undefined ? '' : `/${output}`}`;
    let p = this.#programs.get(key);
    if (p === undefined) {
      const shape = { tokens, ctx: this.ctx, allLogits, limits: this.limits, cacheType: this.cacheType, ...(output === undefined ? {} : { output }) };
      p = targets === undefined ? { program: buildProgram(this.config, this.source.weights, shape) } : programFor(this.config, this.source.weights, shape, targets);
      this.#programs.set(key, p);
    }
    return p;
  }

  /**
   * Throws what the planner refuses of this model's decode program on its target, and of a prefill
   * program on its prefill target: a model no step of which could run is refused when it loads.
   */
  #checkPlanned(): void {
    const r = this.runner;
    if (!(r instanceof EngineRunner)) return;
    const decode = this.#placed(r.target, 1, false).refusal;
    if (decode !== undefined) throw decode;
    const prefill = r.prefillTarget === undefined || this.ctx < 2 ? undefined : this.#placed(r.prefillTarget, 2, false).refusal;
    if (prefill !== undefined) throw prefill;
  }

  /**
   * Gets the first generation's programs ready now, so that it does not wait for them; a server calls
   * this while it says it is loading. The decode program's session is opened (compiled or taken from
   * the cache, its weights bound and, on host, read in; where generations batch, batch.ts, the batch
   * program is compiled too, for the moment a second generation joins), the prefill chunk found (fittingChunk), and the
   * prefill program a prompt of `promptTokens` tokens (default a full chunk) runs its first chunk in is
   * built and its session opened too: of the prefill programs (generate.ts's buckets) one session is
   * kept between generations, so one is made ready. A partitioned prefill target (a list) runs its
   * chunks as jobs and gets no session here.
   */
  async warm(options: { readonly promptTokens?: number } = {}): Promise<void> {
    positiveInt(options.promptTokens, 'promptTokens');
    const r = this.runner;
    if (!(r instanceof EngineRunner)) return;
    // A generation alone decodes in the single decode program (its session readied); where generations
    // batch, the batch program is compiled too, its session opened when a second generation first joins.
    await r.warm(this.program(1));
    const batch = this.#batchRunner();
    if (batch !== null) await r.engine.compileOnly(batch.batcher.program, r.target);
    const chunk = this.fittingChunk();
    const first = Math.min(options.promptTokens ?? chunk, chunk);
    const tokens = prefillTokens(first, this.ctx, chunk);
    if (tokens > 1 && r.prefillTarget?.includes(',') !== true) await r.warm(this.prefillProgram(tokens), r.prefillTarget ?? r.target);
    // Its programs ready, an engine of its own needs no compiler workers until another program is compiled.
    await this.#owned?.releaseCompilers();
  }

  #tokenizerFor(field: string): Tokenizer {
    const t = this.source.tokenizer;
    if (t instanceof TokenizerError) throw new InvalidOptions(field, `the model's tokenizer cannot be used (${t.reason}); give promptIds`);
    return t;
  }

  /** The prompt of a request as ids. */
  promptIds(r: GenerateRequest): number[] {
    const given = [r.prompt, r.promptIds, r.messages].filter((x) => x !== undefined).length;
    if (given !== 1) throw new InvalidOptions('prompt', `give exactly one of prompt, promptIds and messages (${given} given)`);
    if (r.promptIds !== undefined) {
      if (!Array.isArray(r.promptIds)) throw new InvalidOptions('promptIds', 'an array of token ids');
      return [...(r.promptIds as readonly number[])]; // Array.isArray narrowed it to any[]
    }
    if (r.prompt !== undefined) {
      if (typeof r.prompt !== 'string') throw new InvalidOptions('prompt', `a string, not ${typeof r.prompt}`);
      return this.#tokenizerFor('prompt').encode(r.prompt);
    }
    return this.#tokenizerFor('messages').encodeChat(r.messages!, chatOptionsOf(r)).ids;
  }

  /**
   * The prompt of a request as ids, its text rendered and encoded in the model's text worker (bounded in
   * time, memory and size; the event loop stays free). A text that cannot fit the context is refused
   * (`ResourceLimit` `prompt-bytes`) before it is encoded.
   */
  async encodePrompt(r: GenerateRequest): Promise<number[]> {
    const given = [r.prompt, r.promptIds, r.messages].filter((x) => x !== undefined).length;
    if (given !== 1 || r.promptIds !== undefined) return this.promptIds(r);
    if (r.prompt !== undefined) {
      if (typeof r.prompt !== 'string') throw new InvalidOptions('prompt', `a string, not ${typeof r.prompt}`);
      return this.#textWorker('prompt').encode(r.prompt, {}, this.ctx);
    }
    return (await this.#textWorker('messages').encodeChat(r.messages!, chatOptionsOf(r), this.ctx)).ids;
  }

  #textWorker(field: string): TextWorker {
    const t = this.#tokenizerFor(field);
    let box = TEXT_WORKERS.get(this.source);
    if (box === undefined) { box = { limits: {} }; TEXT_WORKERS.set(this.source, box); }
    box.worker ??= new TextWorker(t.source, box.limits);
    return box.worker;
  }

  /**
   * The prefix cache (prefix.ts), made at the first generation; undefined when the model has none
   * (`prefixCache: false`, a partitioned prefill target, the reference).
   */
  get prefixCache(): PrefixCache | undefined {
    const o = this.#prefixOptions;
    if (this.#prefixes !== undefined || o === false) return this.#prefixes;
    const layout = cacheLayout(this.config, this.ctx);
    const axes: Record<string, number> = {};
    let positionBytes = 0;
    for (const [arg, l] of layout) {
      axes[arg] = l.positionAxis;
      positionBytes += (l.shape.reduce((a, d) => a * d, 1) / l.shape[l.positionAxis]!) * (this.cacheType === 'f16' ? 2 : 4);
    }
    this.#prefixes = new PrefixCache(o.bytes, o.block ?? 64, this.#prefixCut(), this.fittingChunk(), axes, positionBytes);
    return this.#prefixes;
  }

  /**
   * Where the prefix cache may cut a prompt (prefix.ts): at any block when every row's keys and values
   * are computed alike in any chunking (host, its q8 class, every layer matmul by a q4_0, q4_1 or q8_0
   * weight: docs/HOST.md, batch invariance), else only where a cold prefill starts a chunk.
   */
  #prefixCut(): PrefixCut {
    const r = this.runner;
    if (!(r instanceof EngineRunner) || r.target !== 'host' || r.prefillTarget !== undefined || r.engine.hostMatmul !== 'q8') return 'chunk';
    for (const [name, w] of this.source.weights) {
      if (name.startsWith('blk.') && w.shape.length === 2 && !['q4_0', 'q4_1', 'q8_0'].includes(w.dtype)) return 'chunk';
    }
    return 'block';
  }

  /**
   * Generates from a request: yields each token as it is made, returns the whole result.
   * `options.signal` ends it with Aborted (GenerateOptions), the model then free for the next one.
   */
  async *generate(r: GenerateRequest, options?: GenerateOptions): AsyncGenerator<GeneratedToken, GenerationResult, void> {
    const promptIds = await this.encodePrompt(r);
    const g: GenerationContext = {
      config: this.config, ctx: this.ctx, cacheType: this.cacheType, prefillChunk: this.fittingChunk(), tokenizer: this.tokenizer,
      eosIds: this.eosIds, runner: this.#batchRunner() ?? this.runner, program: (n) => (n > 1 ? this.prefillProgram(n) : this.program(n)),
      ...(this.prefixCache !== undefined ? { prefixCache: this.prefixCache } : {}),
      ...(this.kvBudget !== undefined ? { kvBudget: this.kvBudget } : {}),
    };
    return yield* generateIds(g, { ...r, promptIds }, options);
  }

  /** The whole generation of a request (generate, collected); `options.signal` as generate's. */
  async complete(r: GenerateRequest, options?: GenerateOptions): Promise<GenerationResult> {
    const it = this.generate(r, options);
    for (;;) {
      const n = await it.next();
      if (n.done === true) return n.value;
    }
  }

  /**
   * Teacher-forced scoring of `ids` (at least 2, at most ctx): every position's next-token logits, each
   * next id's log-probability and the perplexity (score.ts).
   */
  score(ids: readonly number[]): Promise<ScoreResult> {
    return scoreIds(this, ids);
  }

  /**
   * The embedding of `ids` (at least 1, at most ctx; run from an empty cache): the final-norm hidden
   * states pooled by `pooling`, `mean` over the tokens (default) or the `last` token's (embed.ts).
   * `field` names the ids in errors.
   */
  embed(ids: readonly number[], pooling: Pooling = 'mean', field = 'ids'): Promise<Float32Array> {
    return embedIds(this, ids, pooling, field);
  }

  /** Closes the engine this model made (an engine given to loadModel stays open). */
  async close(): Promise<void> {
    this.#prefixes?.clear();
    await TEXT_WORKERS.get(this.source)?.worker?.close();
    await this.#batch?.batcher.close();
    await this.runner.close?.();
    await this.#owned?.close();
  }
}

/** Loads a Qwen3 from a GGUF file or a model directory (see LoadModelOptions). */
export async function loadModel(path: string, options: LoadModelOptions = {}): Promise<Qwen3Model> {
  // The options are checked before the file is opened, so a bad flag costs no read.
  checkModelTarget(options.target ?? 'cpu');
  const source = openModelSource(path);
  return Qwen3Model.create(options.tokenizer === undefined ? source : { ...source, tokenizer: loadTokenizer(options.tokenizer) }, options);
}
