/**
 * Embeddings: ids run from an empty cache through programs whose result is every token's final-norm
 * hidden state (program.ts, `output: 'hidden'`), in prefill steps of the model's chunk, pooled into one
 * vector of `hidden` values: the mean over the tokens (in float64) or the last token's, rounded once to
 * f32 (what the wire carries, so a float answer and a base64 one are the same bits).
 */
import { InvalidOptions } from '../../errors/index.js';
import type { Program } from '../../ir/types.js';
import type { Qwen3Config } from './config.js';
import { checkForcedIds, forcedSteps, type ForcedModel } from './forced.js';

/** How the hidden states of a sequence's tokens become one vector. */
export type Pooling = 'mean' | 'last';

/** The poolings embed takes. */
const POOLINGS: readonly Pooling[] = ['mean', 'last'];

/** What embedding reads of a loaded model (Qwen3Model has it). */
export interface EmbeddedModel extends ForcedModel {
  hiddenProgram(tokens: number): Program;
}

/** Checks ids against the model: whole numbers in the vocabulary, at least one, at most the context; InvalidOptions or ResourceLimit naming `field`. */
function checkEmbedIds(model: { readonly config: Qwen3Config; readonly ctx: number }, ids: unknown, field: string): number[] {
  return checkForcedIds(model, ids, field, 1, () => 'no tokens: an embedding needs at least one');
}

/** The pooled final-norm hidden state of `ids` (see the module's comment); `field` names them in errors. */
export async function embedIds(model: EmbeddedModel, ids: readonly number[], pooling: Pooling = 'mean', field = 'ids'): Promise<Float32Array> {
  if (!POOLINGS.includes(pooling)) throw new InvalidOptions('pooling', `mean or last, not ${JSON.stringify(pooling)}`);
  const checked = checkEmbedIds(model, ids, field);
  const hidden = model.config.hidden;
  const sum = new Float64Array(hidden);
  await forcedSteps(model, checked, (tokens) => model.hiddenProgram(tokens), (at, count, out) => {
    // The last token's row only in the step that holds it.
    const rows = pooling === 'mean' ? Array.from({ length: count }, (_, k) => k) : at + count === checked.length ? [count - 1] : [];
    for (const k of rows) for (let j = 0; j < hidden; j++) sum[j]! += out.data[k * hidden + j]!;
  });
  const n = pooling === 'mean' ? checked.length : 1;
  return Float32Array.from(sum, (x) => x / n);
}
