/**
 * Embeddings: ids run from an empty cache through programs whose result is every token's final-norm
 * hidden state (program.ts, `output: 'hidden'`), in prefill steps of the model's chunk, pooled into one
 * vector of `hidden` values: the mean over the tokens (in float64) or the last token's, rounded once to
 * f32 (what the wire carries, so a float answer and a base64 one are the same bits).
 */
import { InvalidOptions, ResourceLimit } from '../../errors/index.js';
import type { Program } from '../../ir/types.js';
import type { Qwen3Config } from './config.js';
import { prefillTokens, zeroCache } from './generate.js';
import type { CacheType } from './program.js';
import type { StepRunner } from './runner.js';

/** How the hidden states of a sequence's tokens become one vector. */
export type Pooling = 'mean' | 'last';

/** The poolings embed takes. */
export const POOLINGS: readonly Pooling[] = ['mean', 'last'];

/** What embedding reads of a loaded model (Qwen3Model has it). */
export interface EmbeddedModel {
  readonly config: Qwen3Config;
  readonly ctx: number;
  readonly cacheType: CacheType;
  readonly runner: StepRunner;
  fittingChunk(): number;
  hiddenProgram(tokens: number): Program;
}

/** Checks ids against the model: whole numbers in the vocabulary, at least one, at most the context; InvalidOptions or ResourceLimit naming `field`. */
export function checkEmbedIds(model: { readonly config: Qwen3Config; readonly ctx: number }, ids: unknown, field: string): number[] {
  if (!Array.isArray(ids)) throw new InvalidOptions(field, 'an array of token ids');
  const vocab = model.config.vocab;
  ids.forEach((id, i) => {
    if (!(typeof id === 'number' && Number.isSafeInteger(id))) throw new InvalidOptions(`${field}/${i}`, `token id ${JSON.stringify(id)} is not a whole number`);
    if (id < 0 || id >= vocab) throw new InvalidOptions(`${field}/${i}`, `token id ${id} is outside the vocabulary (0 to ${vocab - 1})`);
  });
  if (ids.length === 0) throw new InvalidOptions(field, 'no tokens: an embedding needs at least one');
  if (ids.length > model.ctx) throw new ResourceLimit('context', ids.length, model.ctx, field);
  return ids as number[];
}

/** The pooled final-norm hidden state of `ids` (see the module's comment); `field` names them in errors. */
export async function embedIds(model: EmbeddedModel, ids: readonly number[], pooling: Pooling = 'mean', field = 'ids'): Promise<Float32Array> {
  if (!POOLINGS.includes(pooling)) throw new InvalidOptions('pooling', `mean or last, not ${JSON.stringify(pooling)}`);
  const checked = checkEmbedIds(model, ids, field);
  const hidden = model.config.hidden;
  const sum = new Float64Array(hidden);
  const chunk = model.fittingChunk();
  const cursor = await model.runner.begin(() => zeroCache(model.config, model.ctx, model.cacheType));
  try {
    for (let at = 0; at < checked.length; at += chunk) {
      const part = checked.slice(at, at + chunk);
      const tokens = prefillTokens(part.length, model.ctx - at, chunk);
      const out = await cursor.step(model.hiddenProgram(tokens), part, part.map((_, k) => at + k));
      // A padded bucket's rows past the chunk's ids are not tokens of the sequence.
      const rows = pooling === 'mean' ? part.map((_, k) => k) : at + part.length === checked.length ? [part.length - 1] : [];
      for (const k of rows) for (let j = 0; j < hidden; j++) sum[j]! += out.data[k * hidden + j]!;
    }
  } finally {
    await cursor.close();
  }
  const n = pooling === 'mean' ? checked.length : 1;
  return Float32Array.from(sum, (x) => x / n);
}
