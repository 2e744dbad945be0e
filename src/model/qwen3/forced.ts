/**
 * Teacher-forced runs: a sequence of ids run from an empty cache in prefill steps of the model's chunk,
 * every step's result handed on (score.ts reads every position's logits, embed.ts every token's hidden
 * state), and the check of the ids both take.
 */
import { InvalidOptions, ResourceLimit } from '../../errors/index.js';
import type { Tensor } from '../../ir/tensor.js';
import type { Program } from '../../ir/types.js';
import type { Qwen3Config } from './config.js';
import { prefillTokens, zeroCache } from './generate.js';
import type { CacheType } from './program.js';
import type { StepRunner } from './runner.js';

/** What a teacher-forced run reads of a loaded model (Qwen3Model has it; named here so the files do not import model.ts). */
export interface ForcedModel {
  readonly config: Qwen3Config;
  readonly ctx: number;
  readonly cacheType: CacheType;
  readonly runner: StepRunner;
  fittingChunk(): number;
}

/**
 * `ids` checked against the model: whole numbers in the vocabulary, at least `least` of them (else
 * InvalidOptions saying `tooFew`), at most the context (ResourceLimit); errors name `field`.
 */
export function checkForcedIds(model: { readonly config: Qwen3Config; readonly ctx: number }, ids: unknown, field: string, least: number, tooFew: (n: number) => string): number[] {
  if (!Array.isArray(ids)) throw new InvalidOptions(field, 'an array of token ids');
  const vocab = model.config.vocab;
  ids.forEach((id, i) => {
    if (!(typeof id === 'number' && Number.isSafeInteger(id))) throw new InvalidOptions(`${field}/${i}`, `token id ${JSON.stringify(id)} is not a whole number`);
    if (id < 0 || id >= vocab) throw new InvalidOptions(`${field}/${i}`, `token id ${id} is outside the vocabulary (0 to ${vocab - 1})`);
  });
  if (ids.length < least) throw new InvalidOptions(field, tooFew(ids.length));
  if (ids.length > model.ctx) throw new ResourceLimit('context', ids.length, model.ctx, field);
  return ids as number[];
}

/**
 * Runs `ids` from an empty cache through `program(tokens)` in steps of the model's prefill chunk,
 * handing `each` a step's first position, its count of ids and its result. A padded bucket's rows past
 * the count are not positions of the sequence.
 */
export async function forcedSteps(model: ForcedModel, ids: readonly number[], program: (tokens: number) => Program, each: (at: number, count: number, out: Tensor) => void): Promise<void> {
  const chunk = model.fittingChunk();
  const cursor = await model.runner.begin(() => zeroCache(model.config, model.ctx, model.cacheType));
  try {
    for (let at = 0; at < ids.length; at += chunk) {
      const part = ids.slice(at, at + chunk);
      const tokens = prefillTokens(part.length, model.ctx - at, chunk);
      each(at, part.length, await cursor.step(program(tokens), part, part.map((_, k) => at + k)));
    }
  } finally {
    await cursor.close();
  }
}
