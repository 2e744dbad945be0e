/**
 * One generation: the prompt's ids are prefilled (in chunks of at most `prefillChunk` tokens, each
 * one step of a prefill program), then each next token is chosen from the last logits and decoded one
 * step at a time, until an end-of-sequence id, a stop string, `maxTokens` or the context's end. Every
 * generation starts from a zeroed KV cache, or from the cached positions of its prompt's longest
 * cached prefix (prefix.ts), which give the bytes a cold run would; so the same greedy request gives
 * the same text whatever ran before it.
 */
import { InvalidOptions, ResourceLimit } from '../../errors/index.js';
import { signalOf, throwIfAborted, untilAborted, type AbortOptions } from '../../jobs/abort.js';
import { tensor, zeros, type Tensor } from '../../ir/tensor.js';
import type { Program } from '../../ir/types.js';
import type { TensorMap } from '../../ir/values.js';
import type { Qwen3Config } from './config.js';
import { cacheLayout, cacheShapes, type CacheType } from './program.js';
import type { CacheCursor, RanOn, StepRunner } from './runner.js';
import type { PrefixCache } from './prefix.js';
import type { KvBudget, KvReservation } from './kv.js';
import type { PromptShare, SharedPrefill } from './share.js';
import { Sampler, type SamplingOptions } from './sampler.js';
import { TextStream } from './stream.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { ConstrainedDecoder } from '../grammar/decoder.js';
import type { Grammar } from '../grammar/grammar.js';

/** What a generation needs of its model. */
export interface GenerationContext {
  readonly config: Qwen3Config;
  readonly ctx: number;
  /** The KV cache's dtype (default f32). */
  readonly cacheType?: CacheType;
  readonly prefillChunk: number;
  readonly tokenizer: Tokenizer | null;
  readonly eosIds: readonly number[];
  readonly runner: StepRunner;
  /** The program of `tokens` tokens at this context (built once per length). */
  program(tokens: number): Program;
  /** The KV cache of earlier generations' prefixes that a prompt may start from (prefix.ts); none: every prompt prefilled whole. */
  readonly prefixCache?: PrefixCache;
  /** The blocks a generation reserves when it starts (kv.ts); none: no budget kept. */
  readonly kvBudget?: KvBudget;
}

/** The decoding of one request, once its prompt is ids. */
export interface DecodeRequest extends SamplingOptions {
  readonly promptIds: readonly number[];
  /** The most tokens to generate (default 128). */
  readonly maxTokens?: number;
  /** Texts that end the generation; the text stops before the first one met. */
  readonly stop?: readonly string[];
  /** Keep each step's logits (the scores the token was chosen from, before the penalty). */
  readonly logits?: boolean;
  /** Go on past end-of-sequence ids (for measuring speed; default false). */
  readonly ignoreEos?: boolean;
  /** Give each token's log probability and this many of the most likely tokens' (0 to 20; unset: none). */
  readonly logprobs?: number;
  /**
   * Constrained decoding: each step's logits are masked to the ids that keep the text a prefix this
   * grammar allows (src/model/grammar: compileJsonSchema, jsonObjectGrammar, toolCallGrammar), and
   * end-of-sequence is allowed only once the text is complete. Needs the model's tokenizer.
   */
  readonly constraint?: Grammar;
}

/** A token's log probability (log-softmax of the logits it was chosen from, after penalties and bias, before temperature). */
export interface TokenLogprob {
  readonly id: number;
  /** Its text (a piece of a character shows as U+FFFD) and its bytes. */
  readonly token: string;
  readonly bytes: readonly number[];
  readonly logprob: number;
}

/** One generated token. */
export interface GeneratedToken {
  readonly id: number;
  /** The text this token made certain (text is held back while it may begin a stop string). */
  readonly text: string;
  /** The logits it was chosen from (with `logits: true`). */
  readonly logits?: Tensor;
  /** Its position in the context (the prompt's tokens come first). */
  readonly position?: number;
  /** With `logprobs`: this token's, and the most likely tokens' (most likely first). */
  readonly logprobs?: TokenLogprob & { readonly top: readonly TokenLogprob[] };
}

/**
 * Options of a generation beside its request: `signal` ends it with Aborted (at once when already
 * aborted; else between steps, or during one, whose device work runs to its end and then lets the
 * KV cache's sessions go, so the next generation finds the model free).
 */
export type GenerateOptions = AbortOptions & {
  /**
   * A prompt's prefill shared with other generations of the same prompt (share.ts): the first prefills,
   * the others start from a copy of its cache. Their answers are the bytes each gives alone.
   */
  readonly share?: PromptShare;
};

/** Why a generation ended. */
export type FinishReason = 'eos' | 'stop' | 'length' | 'context';

/** A whole generation. */
export interface GenerationResult {
  /** The generated ids, without the end-of-sequence id that ended them. */
  readonly ids: number[];
  readonly text: string;
  readonly promptTokens: number;
  readonly finishReason: FinishReason;
  readonly timings: { readonly prefillMs: number; readonly decodeMs: number; readonly prefillTokS: number; readonly decodeTokS: number; readonly decodeSteps: number };
  readonly logits?: Tensor[];
  /** Where the prefill and the decode ran (devices, simulated or not, numerics class); empty on the reference. */
  readonly ranOn: readonly RanOn[];
  /** The prompt's positions taken from the prefix cache rather than prefilled (0: none). */
  readonly cachedTokens?: number;
  /** The prompt's positions copied from another generation's prefill of it (GenerateOptions `share`; 0: none). */
  readonly sharedTokens?: number;
}

/**
 * The tokens of the program a prompt chunk of `n` runs in: 16, 32 or 64, then the next multiple of 64
 * (at most a quarter more work past 256 tokens), within the chunk size and the room left in the cache
 * (stepActivations pads the chunk), so that a handful of programs, compiled once, serve every prompt
 * length. One token runs in the decode program.
 */
export function prefillTokens(n: number, room: number, chunk: number): number {
  if (n <= 1) return n;
  let b = 16;
  while (b < n && b < 64) b *= 2;
  if (b < n) b = Math.ceil(n / 64) * 64;
  return Math.max(n, Math.min(b, room, chunk));
}

/** A zeroed KV cache of `cacheType` (default f32): where every generation starts. */
export function zeroCache(c: Qwen3Config, ctx: number, cacheType: CacheType = 'f32'): TensorMap {
  const m: Record<string, Tensor> = {};
  for (const [k, s] of cacheShapes(c, ctx)) m[k] = zeros(cacheType, s);
  return m;
}

/** Checks a request's prompt and counts against the model; InvalidOptions or ResourceLimit naming the field. */
function checkDecodeRequest(g: GenerationContext, r: DecodeRequest): number {
  const ids = r.promptIds;
  if (ids.length === 0) throw new InvalidOptions('prompt', 'the prompt is empty: give at least one token');
  ids.forEach((id, i) => {
    if (!(Number.isSafeInteger(id) && id >= 0 && id < g.config.vocab)) throw new InvalidOptions(`promptIds/${i}`, `token id ${JSON.stringify(id)} is outside the vocabulary (0 to ${g.config.vocab - 1})`);
  });
  if (ids.length > g.ctx) throw new ResourceLimit('context', ids.length, g.ctx, 'prompt');
  const max = r.maxTokens ?? 128;
  if (!(Number.isSafeInteger(max) && max >= 0)) throw new InvalidOptions('maxTokens', `a whole number of tokens of at least 0, not ${JSON.stringify(max)}`);
  for (const [i, s] of (r.stop ?? []).entries()) if (typeof s !== 'string') throw new InvalidOptions(`stop/${i}`, `a stop string, not ${typeof s}`);
  for (const k of Object.keys(r.logitBias ?? {})) if (!(Number(k) < g.config.vocab)) throw new InvalidOptions(`logitBias/${k}`, `token id ${k} is outside the vocabulary (0 to ${g.config.vocab - 1})`);
  if (r.logprobs !== undefined && !(Number.isSafeInteger(r.logprobs) && r.logprobs >= 0 && r.logprobs <= 20)) throw new InvalidOptions('logprobs', `a whole number of top tokens from 0 to 20, not ${JSON.stringify(r.logprobs)}`);
  return max;
}

/** The log probabilities of `id` and the `top` most likely ids under `logits` (log-softmax). */
export function logprobsOf(tokenizer: Tokenizer | null, logits: ArrayLike<number>, id: number, top: number): TokenLogprob & { top: TokenLogprob[] } {
  let most = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > most) most = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - most);
  const norm = most + Math.log(sum);
  // The `top` largest, highest first (lower id first among equals), by insertion into a short list.
  const best: number[] = [];
  for (let i = 0; i < logits.length && top > 0; i++) {
    if (best.length === top && !(logits[i]! > logits[best[top - 1]!]!)) continue;
    let at = best.length;
    while (at > 0 && logits[i]! > logits[best[at - 1]!]!) at--;
    best.splice(at, 0, i);
    if (best.length > top) best.pop();
  }
  const entry = (i: number): TokenLogprob => {
    const bytes = tokenizer === null ? new Uint8Array() : tokenizer.decodeBytes([i]);
    return { id: i, token: tokenizer === null ? '' : tokenizer.decode([i]), bytes: [...bytes], logprob: logits[i]! - norm };
  };
  return { ...entry(id), top: best.map(entry) };
}

/** Runs one generation, yielding each token as it is made; returns the whole result. */
export async function* generateIds(g: GenerationContext, r: DecodeRequest, options?: GenerateOptions): AsyncGenerator<GeneratedToken, GenerationResult, void> {
  const signal = signalOf(options);
  throwIfAborted(signal);
  const max = checkDecodeRequest(g, r);
  // Its blocks of the KV budget, held from here to its end however it ends (KvCacheFull when they are not free).
  const hold = g.kvBudget?.reserve(max > 0 ? r.promptIds.length + max : 0);
  const share = options?.share;
  let sharing: { readonly shared?: SharedPrefill; readonly first: boolean } = { first: false };
  try {
    if (share !== undefined && max > 0) sharing = await untilAborted(share.take(r.promptIds), signal);
    const t0 = performance.now();
    // Every generation's own cache; let go however the generation ends (a consumer's return() too).
    const { cache, from } = sharing.shared !== undefined ? await sharedCache(g, sharing.shared) : await startingCache(g, max > 0 ? r.promptIds : []);
    const steps = new AbortableSteps(cache, signal);
    try {
      const prefilled = sharing.first ? (logits: Tensor) => giveShare(g, share!, cache, r.promptIds, logits) : undefined;
      const result = yield* decodeWith(g, r, steps, max, t0, from, hold, sharing.shared?.logits, prefilled);
      await keepPrefix(g, cache, [...r.promptIds, ...result.ids], result.promptTokens + result.timings.decodeSteps, result.promptTokens);
      return result;
    } finally {
      hold?.release();
      // A step still running on its device (the generation aborted during it) keeps the cache until it ends.
      const running = steps.running;
      if (running === undefined) await cache.close();
      else {
        cache.cancel?.();
        void running.then(() => cache.close(), () => cache.close()).catch(() => undefined);
      }
    }
  } finally {
    hold?.release();
    // A first generation that ended before its prefill was read: the others prefill for themselves.
    if (sharing.first) share!.give(undefined);
  }
}

/** Each state arg's position axis (cacheLayout). */
function positionAxes(g: GenerationContext): Record<string, number> {
  const axes: Record<string, number> = {};
  for (const [arg, l] of cacheLayout(g.config, g.ctx)) axes[arg] = l.positionAxis;
  return axes;
}

/** The cache of a generation that starts from another's prefill of its prompt (share.ts): a copy of its positions. */
async function sharedCache(g: GenerationContext, p: SharedPrefill): Promise<{ readonly cache: CacheCursor; readonly from: number }> {
  const cache = await g.runner.begin(() => zeroCache(g.config, g.ctx, g.cacheType));
  cache.loadPositions!(p.axes, p.pieces);
  return { cache, from: p.ids.length };
}

/** The first generation of a share has prefilled: its prompt's positions and last logits, for the others. */
async function giveShare(g: GenerationContext, share: PromptShare, cache: CacheCursor, ids: readonly number[], logits: Tensor): Promise<void> {
  const read = cache.readPositions?.bind(cache);
  if (read === undefined || cache.loadPositions === undefined) { share.give(undefined); return; }
  const axes = g.prefixCache?.axes ?? positionAxes(g);
  try {
    const [state] = await read(axes, [[0, ids.length]]);
    share.give({ ids: [...ids], axes, pieces: [{ from: 0, state: state! }], logits });
  } catch {
    share.give(undefined);
  }
}

/**
 * The cache a prompt starts from: a new cursor over a zeroed cache, into which the longest prefix of
 * `promptIds` the prefix cache holds is loaded (`from` positions of it; 0 without a prefix cache or a
 * match). The prompt is then prefilled from `from` on. The one place a generation's cache is made.
 */
async function startingCache(g: GenerationContext, promptIds: readonly number[]): Promise<{ readonly cache: CacheCursor; readonly from: number }> {
  const cache = await g.runner.begin(() => zeroCache(g.config, g.ctx, g.cacheType));
  const prefixes = g.prefixCache;
  if (prefixes === undefined || promptIds.length === 0 || cache.loadPositions === undefined) return { cache, from: 0 };
  const hit = prefixes.lookup(promptIds);
  if (hit.positions > 0) cache.loadPositions(prefixes.axes, hit.pieces);
  return { cache, from: hit.positions };
}

/**
 * Keeps in the prefix cache the positions a finished generation filled: `filled` of `ids` (the
 * prompt's `promptTokens`, then the generated ids its decode steps ran). A cache that cannot be read
 * by positions keeps nothing.
 */
async function keepPrefix(g: GenerationContext, cache: CacheCursor, ids: readonly number[], filled: number, promptTokens: number): Promise<void> {
  const prefixes = g.prefixCache;
  const read = cache.readPositions?.bind(cache);
  if (prefixes === undefined || read === undefined || filled === 0) return;
  // A cache that cannot be read now (its device restarted) is kept no part of: the generation stands.
  await prefixes.keep(ids, filled, promptTokens, (ranges) => read(prefixes.axes, ranges)).catch(() => undefined);
}

/** A cursor's steps under a signal: an abort ends the wait for a step at once, the step itself runs on. */
class AbortableSteps {
  running: Promise<Tensor> | undefined;
  constructor(readonly cache: CacheCursor, private readonly signal: AbortSignal | undefined) {}
  async step(program: Program, ids: readonly number[], positions: readonly number[]): Promise<Tensor> {
    throwIfAborted(this.signal);
    const p = this.cache.step(program, ids, positions);
    this.running = p;
    try {
      return await untilAborted(p, this.signal);
    } finally {
      // Settled (or failed): the close need not wait for it. Only an abort leaves it running.
      if (this.signal?.aborted !== true) this.running = undefined;
    }
  }
}

/**
 * Prefills the prompt from `from` (none when `first`, the logits of its last token, are given: a shared
 * prefill), then decodes. `hold` counts the positions filled; `prefilled` sees the prompt's last logits.
 */
async function* decodeWith(
  g: GenerationContext, r: DecodeRequest, cache: AbortableSteps, max: number, t0: number, from: number,
  hold?: KvReservation, first?: Tensor, prefilled?: (logits: Tensor) => Promise<void>,
): AsyncGenerator<GeneratedToken, GenerationResult, void> {
  const sampler = new Sampler(r);
  const constraint = r.constraint === undefined ? undefined : new ConstrainedDecoder(r.constraint, g.tokenizer, g.eosIds, g.config.vocab);
  const stream = new TextStream(g.tokenizer, r.stop ?? []);
  const prompt = [...r.promptIds];
  let logits: Tensor | undefined = max > 0 ? first : undefined;
  // The decode program's session opens while the prompt is prefilled, not at the first decode step.
  if (max > 1) cache.cache.prepare?.(g.program(1));
  for (let at = from; at < prompt.length && max > 0; at += g.prefillChunk) {
    const ids = prompt.slice(at, at + g.prefillChunk);
    logits = await cache.step(g.program(prefillTokens(ids.length, g.ctx - at, g.prefillChunk)), ids, ids.map((_, k) => at + k));
  }
  if (logits !== undefined) {
    hold?.fill(prompt.length);
    // Read before the first decode step (the prompt's positions stay as they are after it, but the cache moves into a slot).
    await prefilled?.(logits);
  }
  cache.cache.prefilled?.();
  const prefillMs = performance.now() - t0;
  const generated: number[] = [];
  const kept: Tensor[] = [];
  let text = '';
  let finish: FinishReason = 'length';
  let decodeMs = 0;
  let steps = 0;
  while (logits !== undefined && generated.length < max) {
    const id = sampler.next(constraint === undefined ? logits.data : constraint.mask(logits.data), [...prompt, ...generated], prompt.length);
    if (!r.ignoreEos && g.eosIds.includes(id)) { finish = 'eos'; break; }
    constraint?.accept(id);
    generated.push(id);
    // A batch step's row is a view of the whole step's logits (batch.ts): what is kept gets its own copy,
    // so keeping a row does not keep every row of its step.
    if (r.logits && logits.data.byteLength !== logits.data.buffer.byteLength) logits = tensor(logits.dtype, logits.shape, logits.data.slice());
    if (r.logits) kept.push(logits);
    const piece = stream.push(id);
    text += piece;
    const position = prompt.length + generated.length - 1;
    const lp = r.logprobs !== undefined ? { logprobs: logprobsOf(g.tokenizer, sampler.last!, id, r.logprobs) } : {};
    yield r.logits ? { id, text: piece, logits, position, ...lp } : { id, text: piece, position, ...lp };
    if (stream.stopped) { finish = 'stop'; break; }
    if (generated.length >= max) break;
    const pos = prompt.length + generated.length - 1;
    if (pos >= g.ctx) { finish = 'context'; break; }
    const t1 = performance.now();
    logits = await cache.step(g.program(1), [id], [pos]);
    hold?.fill(pos + 1);
    decodeMs += performance.now() - t1;
    steps++;
  }
  text += stream.end();
  const rate = (n: number, ms: number) => (ms > 0 ? (n * 1000) / ms : 0);
  return {
    ids: generated, text, promptTokens: prompt.length, finishReason: finish,
    timings: { prefillMs, decodeMs, prefillTokS: rate(prompt.length, prefillMs), decodeTokS: rate(steps, decodeMs), decodeSteps: steps },
    ...(r.logits ? { logits: kept } : {}),
    ranOn: cache.cache.ranOn?.() ?? [],
    cachedTokens: first !== undefined ? 0 : from,
    ...(first !== undefined ? { sharedTokens: from } : {}),
  };
}
