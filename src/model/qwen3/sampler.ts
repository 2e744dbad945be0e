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
}

/** The decoding defaults. */
export const DEFAULT_SAMPLING = { temperature: 0, topK: 0, topP: 1, seed: 0, repetitionPenalty: 1.1, repetitionWindow: 64 } as const;

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
  return { ...DEFAULT_SAMPLING, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) } as Resolved;
}

/** The index of the largest value, the lowest index among equals (NaN never wins). */
export function argmax(x: ArrayLike<number>): number {
  let best = 0;
  let top = x[0]!;
  for (let i = 1; i < x.length; i++) {
    const v = x[i]!;
    // top !== top: the best so far is NaN, which any later value replaces.
    if (v > top || top !== top) {
      best = i;
      top = v;
    }
  }
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
  readonly #rand: () => number;

  constructor(o: SamplingOptions = {}) {
    this.options = resolveSampling(o);
    this.#rand = mulberry32(this.options.seed);
  }

  /** The next id after `history` (the prompt and the ids generated so far). */
  next(logits: ArrayLike<number>, history: readonly number[]): number {
    const o = this.options;
    // Without a penalty the logits are read as they are (penalize would copy them unchanged).
    const noPenalty = o.repetitionPenalty === 1 || o.repetitionWindow === 0;
    if (noPenalty && o.temperature === 0) return argmax(logits);
    const l = penalize(logits, history, o.repetitionPenalty, o.repetitionWindow);
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
    const kept = w.reduce((s, x) => s + x, 0);
    let u = this.#rand() * kept;
    for (let k = 0; k < ids.length; k++) {
      u -= w[k]!;
      if (u < 0) return ids[k]!;
    }
    return ids[ids.length - 1]!;
  }
}
