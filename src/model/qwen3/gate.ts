/**
 * The gate: a model on a target checked against the same model on the fp64 oracle, phase by phase
 * (the design document's npu phase, made public). All phases decode plain greedy (repetition penalty
 * 1) and go on past end-of-sequence ids, so they compare the model and not the stopping rules:
 *   - greedy: a short greedy run, token for token equal to the reference's;
 *   - teacher-forced: the reference's tokens fed to the target, every step's logits at cosine
 *     >= minCosine with the reference's and the same argmax;
 *   - 64-position: greedy until the cache holds `positions` positions, equal to the reference's, timed;
 *   - prefill: the prompt in one prefill step against the reference's prefill and against the target's
 *     own token-by-token decode of it (cosine and argmax);
 *   - repeat: the short run again after another request, byte-identical ids and text;
 *   - speed: the 64-position run's decode tok/s at least minDecodeTokS;
 *   - handoff (with a prefill target): the KV cache the prefill target hands over within the loosest
 *     numerics class of its targets of the reference's (normwise: a prefill is a chain of ops), and
 *     greedy tokens after it equal to the decode target's alone wherever that run's top-two margin
 *     exceeds handoffMargin (HANDOFF_MARGIN, or twice the class's bound on a logit where larger).
 */
import { InvalidOptions } from '../../errors/index.js';
import { cosineSimilarity } from '../../numerics/measures.js';
import type { Tensor } from '../../ir/tensor.js';
import { zeroCache } from './generate.js';
import { compareTensor } from '../../numerics/compare.js';
import { CLASS_TOLERANCES, toleranceFor } from '../../numerics/classes.js';
import type { TensorMap } from '../../ir/values.js';
import { EngineRunner, loosest } from './runner.js';
import type { Qwen3Model } from './model.js';
import { argmax } from './sampler.js';

/** Options of the gate. */
export interface GateOptions {
  /** The prompt's ids (default: "The capital of France is" encoded, or ids 1 to 8 without a tokenizer). */
  readonly promptIds?: readonly number[];
  /** Tokens of the greedy and teacher-forced phases (default 8). */
  readonly steps?: number;
  /** Positions of the build phase (default 64). */
  readonly positions?: number;
  /** Logits' least cosine with the reference's (default 0.9999). */
  readonly minCosine?: number;
  /** The speed floor in decoded tokens per second (default 0: none). */
  readonly minDecodeTokS?: number;
}

/** One phase's verdict. */
export interface GatePhase {
  readonly phase: 'greedy' | 'teacher-forced' | '64-position' | 'prefill' | 'repeat' | 'speed' | 'handoff';
  readonly pass: boolean;
  readonly detail: string;
}

/** The gate's report: every phase, and whether all passed. */
export interface GateReport {
  readonly target: string;
  readonly promptTokens: number;
  readonly decodeTokS: number;
  readonly phases: readonly GatePhase[];
  readonly pass: boolean;
}

const GREEDY = { repetitionPenalty: 1, temperature: 0, ignoreEos: true } as const;

/** The logits after the prompt, then after each of `tokens` fed in turn (one decode step each). */
async function teacherForced(m: Qwen3Model, prompt: readonly number[], tokens: readonly number[]): Promise<Tensor[]> {
  let state = zeroCache(m.config, m.ctx, m.cacheType);
  const out: Tensor[] = [];
  const first = await m.runner.step(m.program(prompt.length), { ids: prompt, positions: prompt.map((_, i) => i), state });
  out.push(first.logits);
  state = first.state;
  for (const [k, id] of tokens.entries()) {
    const r = await m.runner.step(m.program(1), { ids: [id], positions: [prompt.length + k], state });
    out.push(r.logits);
    state = r.state;
  }
  return out;
}

/** The logits after the prompt fed one token per decode step. */
async function tokenByToken(m: Qwen3Model, prompt: readonly number[]): Promise<Tensor> {
  let state = zeroCache(m.config, m.ctx, m.cacheType);
  let last: Tensor | undefined;
  for (const [i, id] of prompt.entries()) {
    const r = await m.runner.step(m.program(1), { ids: [id], positions: [i], state });
    state = r.state;
    last = r.logits;
  }
  return last!;
}

function firstDifference(a: readonly number[], b: readonly number[]): string {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return `token ${i}: target ${a[i] ?? '(none)'}, reference ${b[i] ?? '(none)'}`;
  return '';
}

function tokensPhase(phase: GatePhase['phase'], got: readonly number[], want: readonly number[]): GatePhase {
  const diff = firstDifference(got, want);
  return { phase, pass: diff === '', detail: diff === '' ? `${got.length}/${want.length} tokens equal the fp64 reference's` : `first difference at ${diff}` };
}

/** Runs every phase of the gate on `model` (its target) against `model.reference()`. */
export async function runGate(model: Qwen3Model, o: GateOptions = {}): Promise<GateReport> {
  const steps = o.steps ?? 8;
  const positions = o.positions ?? 64;
  // Matmuls in the q8-activations class (docs/HOST.md) are held to their own, looser bound: about
  // 1/254 of each block's largest activation per unit of Σ|w|, so logits sit further from fp64's.
  const minCosine = o.minCosine ?? (q8Matmuls(model) ? Q8_MIN_COSINE : 0.9999);
  const floor = o.minDecodeTokS ?? 0;
  const tok = model.tokenizer;
  const prompt = [...(o.promptIds ?? (tok ? tok.encode('The capital of France is') : [1, 2, 3, 4, 5, 6, 7, 8]))];
  if (prompt.length === 0) throw new InvalidOptions('promptIds', 'the gate needs a prompt of at least one token');
  if (!(Number.isSafeInteger(steps) && steps >= 1)) throw new InvalidOptions('steps', `a whole number of at least 1, not ${steps}`);
  if (prompt.length + steps > positions || positions > model.ctx) {
    throw new InvalidOptions('positions', `the build phase's ${positions} positions must hold the prompt (${prompt.length}) and ${steps} steps, and fit the context (${model.ctx}; raise --ctx)`);
  }
  const ref = model.reference();
  const phases: GatePhase[] = [];
  const build = positions - prompt.length + 1;
  const want = await ref.complete({ promptIds: prompt, maxTokens: build, logits: true, ...GREEDY });

  const short = await model.complete({ promptIds: prompt, maxTokens: steps, ...GREEDY });
  phases.push(tokensPhase('greedy', short.ids, want.ids.slice(0, steps)));

  const forced = await teacherForced(model, prompt, want.ids.slice(0, steps));
  let worst = 1;
  let argmaxAt = -1;
  forced.forEach((l, k) => {
    const r = want.logits![k]!;
    worst = Math.min(worst, cosineSimilarity(l.data, r.data));
    if (argmaxAt < 0 && argmax(l.data) !== argmax(r.data)) argmaxAt = k;
  });
  phases.push({
    phase: 'teacher-forced', pass: worst >= minCosine && argmaxAt < 0,
    detail: `${forced.length} steps, worst logits cosine ${worst.toPrecision(10)} (floor ${minCosine})${argmaxAt >= 0 ? `, argmax differs at step ${argmaxAt}` : ', argmax equal at every step'}`,
  });

  const long = await model.complete({ promptIds: prompt, maxTokens: build, ...GREEDY });
  phases.push({ ...tokensPhase('64-position', long.ids, want.ids), detail: `${positions} positions: ${tokensPhase('64-position', long.ids, want.ids).detail}` });

  const refPrefill = want.logits![0]!;
  const pre = forced[0]!;
  const stepwise = await tokenByToken(model, prompt);
  const cosRef = cosineSimilarity(pre.data, refPrefill.data);
  const cosSteps = cosineSimilarity(pre.data, stepwise.data);
  const sameArgmax = argmax(pre.data) === argmax(refPrefill.data) && argmax(pre.data) === argmax(stepwise.data);
  phases.push({
    phase: 'prefill', pass: cosRef >= minCosine && cosSteps >= minCosine && sameArgmax,
    detail: `${prompt.length} tokens in one step: cosine ${cosRef.toPrecision(10)} with the reference, ${cosSteps.toPrecision(10)} with token-by-token decode, argmax ${sameArgmax ? 'equal' : 'differs'}`,
  });

  await model.complete({ promptIds: [...prompt].reverse(), maxTokens: 3, ...GREEDY });
  const again = await model.complete({ promptIds: prompt, maxTokens: steps, ...GREEDY });
  const same = again.text === short.text && firstDifference(again.ids, short.ids) === '';
  phases.push({ phase: 'repeat', pass: same, detail: same ? 'the same ids and text after another request' : `the repeat differs: ${firstDifference(again.ids, short.ids) || 'text differs'}` });

  const rate = long.timings.decodeTokS;
  phases.push({ phase: 'speed', pass: rate >= floor, detail: `${rate.toFixed(2)} decode tok/s over ${long.timings.decodeSteps} steps (floor ${floor})` });
  if (model.prefillTarget !== undefined) phases.push(await handoffPhase(model, ref, prompt, steps));
  return { target: model.runner.name, promptTokens: prompt.length, decodeTokS: rate, phases, pass: phases.every((p) => p.pass) };
}

/** The default logits cosine floor where host matmuls are in the q8-activations class. */
const Q8_MIN_COSINE = 0.999;

/** Whether `model` runs host matmuls in the q8-activations class (its engine's devices.host.matmul). */
export function q8Matmuls(model: Qwen3Model): boolean {
  const r = model.runner;
  if (!(r instanceof EngineRunner) || r.engine.hostMatmul !== 'q8') return false;
  return [r.target, ...(model.prefillTarget ?? '').split(',')].includes('host');
}

/** The least top-two logit margin at which a token after a handoff must be the decode target's own. */
const HANDOFF_MARGIN = 0.05;

/**
 * The top-two margin past which a token after a handoff must be the decode target's own: HANDOFF_MARGIN,
 * or where it is larger twice what the class's normwise bound lets a logit move (`rel` times the largest
 * logit magnitude: FP16's 1e-2 under NarrowStorage), since either of the two may move by it.
 */
export function handoffMargin(rel: number, logits: ArrayLike<number>): number {
  let top = 0;
  for (let i = 0; i < logits.length; i++) top = Math.max(top, Math.abs(logits[i]!));
  return Math.max(HANDOFF_MARGIN, 2 * rel * top);
}

/** The KV cache a model's cursor holds after prefilling `prompt` (from position 0, a zeroed cache). */
export async function cacheAfter(m: Qwen3Model, prompt: readonly number[]): Promise<TensorMap> {
  const c = await m.runner.begin(() => zeroCache(m.config, m.ctx, m.cacheType));
  try {
    await c.step(m.prefillProgram(prompt.length), prompt, prompt.map((_, i) => i));
    return await c.state();
  } finally {
    await c.close();
  }
}

/** The handoff phase (see the file's doc). */
async function handoffPhase(model: Qwen3Model, ref: Qwen3Model, prompt: readonly number[], steps: number): Promise<GatePhase> {
  // q8-activation matmuls are judged as narrow storage is (normwise 1e-2): their per-block rounding
  // of the activations, like an f16 intermediate, is relative to the block's magnitude.
  const named = loosest(model.prefillTarget!);
  const cls = q8Matmuls(model) && named !== 'NarrowStorage' ? 'NarrowStorage' : named;
  const [got, want] = [await cacheAfter(model, prompt), await cacheAfter(ref, prompt)];
  // A whole prefill is a chain of per-op contracts, not one op: under the Contract class the cache is
  // compared normwise at the class's relative bound; NarrowStorage is normwise already.
  const tol = cls === 'Contract' ? { kind: 'normwise', rel: CLASS_TOLERANCES.Contract.f32.rel } as const : toleranceFor(cls, 'f32');
  let worst: string | null = null;
  for (const [k, w] of Object.entries(want)) {
    const c = compareTensor(got[k]!, w, tol);
    if (!c.pass && worst === null) worst = `${k} ${c.reason ?? 'outside the class'}`;
  }
  const alone = await model.decodeTargetOnly().complete({ promptIds: prompt, maxTokens: steps, logits: true, ...GREEDY });
  const after = await model.complete({ promptIds: prompt, maxTokens: steps, ...GREEDY });
  let decisive = 0;
  let differs = -1;
  for (const [k, id] of alone.ids.entries()) {
    const l = alone.logits![k]!.data;
    const clear = margin(l) > handoffMargin('rel' in tol ? tol.rel : 0, l);
    if (after.ids[k] === id) { if (clear) decisive++; continue; }
    // After a token differs the two runs see different contexts: only a clear margin makes it a failure.
    if (clear) differs = k;
    break;
  }
  const pass = worst === null && differs < 0;
  return {
    phase: 'handoff', pass,
    detail: `prefill on ${model.prefillTarget} (${cls}): KV cache ${worst === null ? `within ${cls} of the reference` : `outside ${cls}: ${worst}`}; ` +
      (differs >= 0 ? `token ${differs} differs from ${model.runner.name} alone at a clear margin` : `${decisive} of ${alone.ids.length} tokens decisive, all equal to ${model.runner.name} alone`),
  };
}

/** The gap between the largest and second largest logit. */
export function margin(l: ArrayLike<number>): number {
  let a = -Infinity;
  let b = -Infinity;
  for (let i = 0; i < l.length; i++) {
    const v = l[i]!;
    if (v > a) { b = a; a = v; } else if (v > b) b = v;
  }
  return a - b;
}
