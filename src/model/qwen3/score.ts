/**
 * Teacher-forced scoring: a sequence of ids run through the model in prefill steps whose programs keep
 * every position's logits (`allLogits`), so row t is the model's next-token logits after ids[0..t];
 * each next id's log-probability under its row (a log-softmax in float64) and the perplexity
 * exp(-mean). A text is scored as llama.cpp's llama-perplexity scores it: its tokens (with the BOS
 * the tokenizer adds) cut into windows of `ctx` tokens, the remainder dropped, each window run from an
 * empty cache with its first token made the BOS when the tokenizer adds one, and only the predictions
 * of its second half counted (positions ctx/2 to ctx-2), so every counted token has at least half a
 * window of context.
 */
import { InvalidOptions } from '../../errors/index.js';
import { TextWorker, type TextLimits } from '../tokenizer/textWorker.js';
import { checkForcedIds, forcedSteps, type ForcedModel } from './forced.js';
import type { Program } from '../../ir/types.js';
import type { Tokenizer } from '../tokenizer/types.js';

/** What scoring reads of a loaded model (Qwen3Model has it; named here, not imported, so the two files do not import each other). */
export interface ScoredModel extends ForcedModel {
  readonly tokenizer: Tokenizer | null;
  program(tokens: number, allLogits?: boolean): Program;
}

/** What scoring a sequence gives. */
export interface ScoreResult {
  /** One row per input position: the next-token logits after the ids up to it. */
  readonly logits: readonly Float64Array[];
  /** For ids[1..]: the log-probability of each given the ids before it. */
  readonly logprobs: readonly number[];
  /** exp(-mean(logprobs)). */
  readonly perplexity: number;
}

/** What scoring a text gives. */
export interface TextScoreResult {
  /** The log-probabilities counted: the second half of each window. */
  readonly logprobs: readonly number[];
  readonly perplexity: number;
  /** The text's tokens, the windows scored, and their size. */
  readonly tokens: number;
  readonly windows: number;
  readonly window: number;
}

/** log softmax(row)[id], in float64. */
export function logProbability(row: ArrayLike<number>, id: number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i]! > max) max = row[i]!;
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i]! - max);
  return row[id]! - max - Math.log(sum);
}

const perplexityOf = (logprobs: readonly number[]): number => Math.exp(-logprobs.reduce((s, x) => s + x, 0) / logprobs.length);

/** Checks ids against the model: whole numbers in the vocabulary, at least two, at most the context; InvalidOptions or ResourceLimit naming `field`. */
function checkScoreIds(model: ScoredModel, ids: unknown, field: string): number[] {
  return checkForcedIds(model, ids, field, 2, (n) => `${n} ids: scoring needs at least 2 (the first is only context)`);
}

/**
 * Every position's logits for ids run from an empty cache, in prefill steps of the model's chunk, each
 * row handed to `row` as it comes (a text's windows keep none of them).
 */
async function eachRow(model: ScoredModel, ids: readonly number[], row: (t: number, logits: Float64Array) => void): Promise<void> {
  const vocab = model.config.vocab;
  await forcedSteps(model, ids, (tokens) => model.program(tokens, true), (at, count, out) => {
    for (let k = 0; k < count; k++) row(at + k, out.data.subarray(k * vocab, (k + 1) * vocab));
  });
}

/** Scores ids teacher-forced (see the module's comment); `field` names them in errors. */
export async function scoreIds(model: ScoredModel, ids: readonly number[], field = 'ids'): Promise<ScoreResult> {
  const checked = checkScoreIds(model, ids, field);
  const logits: Float64Array[] = [];
  await eachRow(model, checked, (_, row) => logits.push(row.slice()));
  const logprobs = checked.slice(1).map((id, t) => logProbability(logits[t]!, id));
  return { logits, logprobs, perplexity: perplexityOf(logprobs) };
}

/**
 * Scores a text in windows of `window` tokens (default the model's context) as llama-perplexity does;
 * the text is encoded in a text worker (bounded in time and memory), and needs at least two windows
 * of tokens, as llama-perplexity asks.
 */
export async function scoreText(model: ScoredModel, text: string, window = model.ctx, field = 'text', limits?: TextLimits): Promise<TextScoreResult> {
  if (typeof text !== 'string') throw new InvalidOptions(field, `a string, not ${typeof text}`);
  if (!(Number.isSafeInteger(window) && window >= 4)) throw new InvalidOptions('ctx', `a window of at least 4 tokens, not ${JSON.stringify(window)}`);
  if (window > model.ctx) throw new InvalidOptions('ctx', `a window of ${window} tokens is more than the model's context ${model.ctx}`);
  const tok = model.tokenizer;
  if (tok === null) throw new InvalidOptions(field, 'the model has no usable tokenizer: score ids instead');
  const worker = new TextWorker(tok.source, limits);
  let tokens: number[];
  try {
    tokens = await worker.encode(text);
  } finally {
    await worker.close();
  }
  if (tokens.length < 2 * window) {
    throw new InvalidOptions(field, `${tokens.length} tokens: scoring in windows of ${window} needs at least ${2 * window} (two windows), as llama-perplexity does; give a smaller --ctx or a longer text`);
  }
  // llama-perplexity puts the BOS in each window's first place when the tokenizer adds one.
  const bos = tok.encode('', { addSpecial: true });
  const first = Math.floor(window / 2);
  const windows = Math.floor(tokens.length / window);
  const logprobs: number[] = [];
  for (let w = 0; w < windows; w++) {
    const ids = tokens.slice(w * window, (w + 1) * window);
    if (bos.length === 1 && tok.bosId !== null && bos[0] === tok.bosId) ids[0] = tok.bosId;
    await eachRow(model, ids, (t, row) => { if (t >= first && t < window - 1) logprobs.push(logProbability(row, ids[t + 1]!)); });
  }
  return { logprobs, perplexity: perplexityOf(logprobs), tokens: tokens.length, windows, window };
}
