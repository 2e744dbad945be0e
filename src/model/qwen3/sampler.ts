/**
 * Choosing the next token from a step's logits: greedy with a 1.1 repetition penalty over the last 64
 * ids by default (the serving default of the design document; `repetitionPenalty: 1` is plain greedy),
 * or sampling with temperature, top_k and top_p from a seeded generator, as OpenAI-style APIs offer.
 */
import { InvalidOptions } from '../../errors/index.js';
import { mulberry32 } from '../../numerics/random.js';

/** How the next token is chosen. */
export interface SamplingOptions {
  /** 0 (the default) is greedy; above 0, logits are divided by it and a token is drawn. */
  readonly temperature?: number;
  /** Draw only among the k most likely tokens (0 or unset: all). */
  readonly topK?: number;
  /** Draw only among the most likely tokens whose probabilities add up to p (1 or unset: all). */
  readonly topP?: number;
  /** The seed of the draws (default 0): the same seed and request give the same tokens. */
  readonly seed?: number;
  /** Divides a positive logit (multiplies a negative one) of each id seen in the window; default 1.1. */
  readonly repetitionPenalty?: number;
  /** How many of the last ids (prompt included) the penalty looks at; default 64. */
  readonly repetitionWindow?: number;
  /** Draw only among tokens at least this fraction as likely as the most likely one (0 or unset: all). */
  readonly minP?: number;
  /** OpenAI's presence penalty: subtracted from the logit of each id generated so far (the prompt not counted). */
  readonly presencePenalty?: number;
  /** OpenAI's frequency penalty: subtracted from each id's logit once per time it was generated so far. */
  readonly frequencyPenalty?: number;
  /** Added to the logits of the ids named (OpenAI's logit_bias: +100 all but forces an id, -100 all but bans it). */
  readonly logitBias?: Readonly<Record<number, number>>;
}

/** The decoding defaults. */
export const DEFAULT_SAMPLING = { temperature: 0, topK: 0, topP: 1, seed: 0, repetitionPenalty: 1.1, repetitionWindow: 64, minP: 0, presencePenalty: 0, frequencyPenalty: 0 } as const;

type Resolved = { readonly [K in keyof typeof DEFAULT_SAMPLING]: number };

function check(v: unknown, field: string, ok: (n: number) => boolean, what: string): void {
  if (v !== undefined && !(typeof v === 'number' && ok(v))) throw new InvalidOptions(field, `${what}, not ${JSON.stringify(v)}`);
}

/** The options with defaults, each checked (InvalidOptions naming the field). */
export function resolveSampling(o: SamplingOptions = {}): Resolved {
  check(o.temperature, 'temperature', (n) => Number.isFinite(n) && n >= 0, 'a temperature is a finite number of at least 0');
  check(o.topK, 'topK', (n) => Number.isSafeInteger(n) && n >= 0, 'top_k is a whole number of at least 0');
  check(o.topP, 'topP', (n) => n > 0 && n <= 1, 'top_p is a number above 0 and at most 1');
  check(o.seed, 'seed', (n) => Number.isSafeInteger(n), 'a seed is a whole number');
  check(o.repetitionPenalty, 'repetitionPenalty', (n) => Number.isFinite(n) && n > 0, 'a repetition penalty is a finite number above 0');
  check(o.repetitionWindow, 'repetitionWindow', (n) => Number.isSafeInteger(n) && n >= 0, 'a window is a whole number of ids of at least 0');
  check(o.minP, 'minP', (n) => n >= 0 && n <= 1, 'min_p is a number from 0 to 1');
  check(o.presencePenalty, 'presencePenalty', (n) => n >= -2 && n <= 2, 'a presence penalty is a number from -2 to 2');
  check(o.frequencyPenalty, 'frequencyPenalty', (n) => n >= -2 && n <= 2, 'a frequency penalty is a number from -2 to 2');
  if (o.logitBias !== undefined) {
    if (typeof o.logitBias !== 'object' || o.logitBias === null) throw new InvalidOptions('logitBias', 'an object of token id to bias');
    for (const [k, v] of Object.entries(o.logitBias)) {
      if (!/^(0|[1-9][0-9]*)$/.test(k)) throw new InvalidOptions(`logitBias/${k}`, 'a key is a token id (a whole number)');
      check(v, `logitBias/${k}`, (n) => n >= -100 && n <= 100, 'a bias is a number from -100 to 100');
    }
  }
  const given = Object.fromEntries(Object.entries(o).filter(([k, v]) => v !== undefined && k in DEFAULT_SAMPLING));
  return { ...DEFAULT_SAMPLING, ...given } as Resolved;
}

/** The index of the largest value, the lowest index among equals (NaN never wins). */
export function argmax(x: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]! || Number.isNaN(x[best]!)) best = i;
  return best;
}

/** The logits after the repetition penalty over the last `window` of `history` (a copy; the input is kept). */
export function penalize(logits: ArrayLike<number>, history: readonly number[], penalty: number, window: number): Float64Array {
  const out = Float64Array.from(logits);
  if (penalty === 1 || window === 0) return out;
  for (const id of new Set(history.slice(-window))) {
    if (id < 0 || id >= out.length) continue;
    const v = out[id]!;
    // transformers' RepetitionPenaltyLogitsProcessor and llama.cpp's penalty_repeat alike.
    out[id] = v < 0 ? v * penalty : v / penalty;
  }
  return out;
}

/** Picks tokens for one generation; its draws follow the seed, one per sampled step. */
export class Sampler {
  readonly options: Resolved;
  readonly #bias: readonly (readonly [number, number])[];
  readonly #rand: () => number;
  /** The logits the last id was chosen from: after the penalties and the bias, before temperature. */
  last: Float64Array | undefined;

  constructor(o: SamplingOptions = {}) {
    this.options = resolveSampling(o);
    this.#bias = Object.entries(o.logitBias ?? {}).map(([k, v]) => [Number(k), v] as const);
    this.#rand = mulberry32(this.options.seed);
  }

  /**
   * The next id after `history` (the prompt and the ids generated so far); the ids from `generatedFrom`
   * on are the generated ones, which the presence and frequency penalties count.
   */
  next(logits: ArrayLike<number>, history: readonly number[], generatedFrom = 0): number {
    const o = this.options;
    const l = penalize(logits, history, o.repetitionPenalty, o.repetitionWindow);
    if (o.presencePenalty !== 0 || o.frequencyPenalty !== 0) {
      const seen = new Map<number, number>();
      for (const id of history.slice(generatedFrom)) seen.set(id, (seen.get(id) ?? 0) + 1);
      for (const [id, c] of seen) if (id >= 0 && id < l.length) l[id]! -= c * o.frequencyPenalty + o.presencePenalty;
    }
    for (const [id, b] of this.#bias) if (id < l.length) l[id]! += b;
    this.last = l;
    if (o.temperature === 0) return argmax(l);
    // Candidates by logit, highest first (lower id first among equals, so the order is total).
    let ids = Array.from(l.keys()).sort((a, b) => l[b]! - l[a]! || a - b);
    if (o.topK > 0) ids = ids.slice(0, o.topK);
    const top = l[ids[0]!]!;
    const w = ids.map((i) => Math.exp((l[i]! - top) / o.temperature));
    const total = w.reduce((s, x) => s + x, 0);
    if (o.topP < 1) {
      let acc = 0;
      let keep = 0;
      while (keep < ids.length && acc < o.topP * total) acc += w[keep++]!;
      ids = ids.slice(0, Math.max(1, keep));
      w.length = ids.length;
    }
    if (o.minP > 0) {
      // w[0] is the most likely id's weight (1): keep those at least minP as likely.
      let keep = 1;
      while (keep < ids.length && w[keep]! >= o.minP * w[0]!) keep++;
      ids = ids.slice(0, keep);
      w.length = keep;
    }
    const kept = w.reduce((s, x) => s + x, 0);
    let u = this.#rand() * kept;
    for (let k = 0; k < ids.length; k++) {
      u -= w[k]!;
      if (u < 0) return ids[k]!;
    }
    return ids[ids.length - 1]!;
  }
}
