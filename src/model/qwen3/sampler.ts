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
  return { ...DEFAULT_SAMPLING, ...given };
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

/**
 * The logits after the repetition penalty over the last `window` of `history` (a copy; the input is
 * kept), written into `into` when it is given and of the logits' length (else a new array).
 */
export function penalize(logits: ArrayLike<number>, history: readonly number[], penalty: number, window: number, into?: Float64Array): Float64Array {
  let out: Float64Array;
  if (into !== undefined && into.length === logits.length) {
    out = into;
    out.set(logits);
  } else {
    out = Float64Array.from(logits);
  }
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
  /**
   * The logits the last id was chosen from: after the penalties and the bias, before temperature. Valid
   * until the next call of `next`, which may write the next step's over them.
   */
  last: ArrayLike<number> | undefined;
  // The penalized logits of a step, kept for the next: one array per generation, not one per step (a
  // vocabulary of 150k is 1.2 MB a step, and the garbage collector's work grows with what is allocated).
  #scratch: Float64Array | undefined;

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
    // Greedy with nothing to add or take off: the logits are read as they are (penalize would copy them unchanged).
    const asGiven = (o.repetitionPenalty === 1 || o.repetitionWindow === 0) && o.presencePenalty === 0 && o.frequencyPenalty === 0 && this.#bias.length === 0;
    if (asGiven && o.temperature === 0) {
      this.last = logits;
      return argmax(logits);
    }
    const l = penalize(logits, history, o.repetitionPenalty, o.repetitionWindow, this.#scratch);
    this.#scratch = l;
    if (o.presencePenalty !== 0 || o.frequencyPenalty !== 0) {
      const seen = new Map<number, number>();
      for (const id of history.slice(generatedFrom)) seen.set(id, (seen.get(id) ?? 0) + 1);
      for (const [id, c] of seen) if (id >= 0 && id < l.length) l[id]! -= c * o.frequencyPenalty + o.presencePenalty;
    }
    for (const [id, b] of this.#bias) if (id < l.length) l[id]! += b;
    this.last = l;
    if (o.temperature === 0) return argmax(l);
    return draw(l, o, this.#rand());
  }
}

/** The largest logit, in one pass. */
function maxOf(l: Float64Array): number {
  let top = -Infinity;
  for (let i = 0; i < l.length; i++) if (l[i]! > top) top = l[i]!;
  return top;
}

/** Highest logit first, the lower id first among equals: a total order. */
const byLogit = (l: Float64Array) => (a: number, b: number): number => l[b]! - l[a]! || a - b;

/**
 * The `m` ids of largest logit in byLogit's order, without sorting the vocabulary: the m-th largest
 * logit found by selection (O(n)), then only the ids at or above it sorted.
 */
export function topIds(l: Float64Array, m: number): number[] {
  const n = l.length;
  if (m >= n) return Array.from(l.keys()).sort(byLogit(l));
  // Quickselect the (m-1)-th largest of a copy (descending).
  const v = Float64Array.from(l);
  let lo = 0;
  let hi = n - 1;
  const k = m - 1;
  while (lo < hi) {
    const pivot = v[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (v[i]! > pivot) i++;
      while (v[j]! < pivot) j--;
      if (i <= j) { const t = v[i]!; v[i] = v[j]!; v[j] = t; i++; j--; }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  const cut = v[k]!;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) if (l[i]! > cut) ids.push(i);
  // Ties at the cut: the lower ids, as byLogit orders them.
  for (let i = 0; i < n && ids.length < m; i++) if (l[i] === cut) ids.push(i);
  return ids.sort(byLogit(l));
}

/**
 * A token drawn from `l` at `u` in [0, 1). Without top_k, top_p or min_p every id is a candidate, in id
 * order (no sort). With them, the candidates are the most likely ids in byLogit's order, found by
 * selection and grown (64, then 8 times as many) only until top_p's mass or min_p's floor is reached:
 * top_k keeps the k most likely; top_p the fewest of those whose weights reach p of their total (the
 * whole vocabulary's without top_k); min_p those at least min_p as likely as the most likely one.
 */
function draw(l: Float64Array, o: Resolved, u: number): number {
  const top = maxOf(l);
  // Every id's weight, once, where the whole vocabulary's total is needed.
  const all = o.topK === 0 && (o.topP < 1 || o.minP === 0) ? new Float64Array(l.length) : undefined;
  let total = 0;
  if (all !== undefined) {
    for (let i = 0; i < l.length; i++) total += all[i] = Math.exp((l[i]! - top) / o.temperature);
  }
  const weight = all !== undefined ? (i: number): number => all[i]! : (i: number): number => Math.exp((l[i]! - top) / o.temperature);
  if (all !== undefined && o.topP === 1 && o.minP === 0) {
    let r = u * total;
    for (let i = 0; i < all.length; i++) {
      r -= all[i]!;
      if (r < 0) return i;
    }
    return argmax(l);
  }
  let m = o.topK > 0 ? Math.min(o.topK, l.length) : Math.min(64, l.length);
  for (;;) {
    const ids = topIds(l, m);
    const w = ids.map(weight);
    if (o.topK > 0) total = w.reduce((s, x) => s + x, 0);
    let keep = ids.length;
    if (o.topP < 1) {
      let acc = 0;
      keep = 0;
      while (keep < ids.length && acc < o.topP * total) acc += w[keep++]!;
      // Not reached within these m: take more (the whole vocabulary at worst).
      if (acc < o.topP * total && o.topK === 0 && m < l.length) { m = Math.min(l.length, m * 8); continue; }
      keep = Math.max(1, keep);
    }
    if (o.minP > 0) {
      // w[0] is the most likely id's weight (1): keep those at least minP as likely.
      let k = 1;
      while (k < keep && w[k]! >= o.minP * w[0]!) k++;
      // Every one of these m passes: there may be more past them.
      if (k === keep && keep === ids.length && o.topK === 0 && o.topP === 1 && m < l.length) { m = Math.min(l.length, m * 8); continue; }
      keep = k;
    }
    let kept = 0;
    for (let k = 0; k < keep; k++) kept += w[k]!;
    let r = u * kept;
    for (let k = 0; k < keep; k++) {
      r -= w[k]!;
      if (r < 0) return ids[k]!;
    }
    return ids[keep - 1]!;
  }
}
