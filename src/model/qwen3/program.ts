/**
 * A model of any architecture that runs (src/model/arch: its graph options, `c.options`, choose the
 * rope, the q/k norms and biases, fused projections) as programs of the format: one program runs T tokens (the prefill of a prompt, T > 1, or a
 * decode step, T = 1) at consecutive positions, reading and writing the KV cache, which is carried
 * state. Args, in order:
 *   - weights, named as llama.cpp names the tensors without `.weight` (`token_embd`, `blk.0.attn_q`, ...;
 *     a bias keeps its `.bias`), in the dtype and shape of the file (weights.ts);
 *   - state `cache.k.<l>` and `cache.v.<l>`, both `[kvHeads, ctx, headDim]` (one row per position, so a
 *     step touches only the pages of the positions it writes; cacheRow says where a row lies) (f32, or
 *     f16 with `cacheType: 'f16'`: each new k and v element is rounded once to f16, nearest even, as it
 *     is written, and attention reads the cache through convert(f16 -> f32), which is exact);
 *   - activations `ids` `[T]` (i32) and `positions` `[T]` (i32, consecutive: the cache is written at
 *     positions[0]; rope and the causal mask read every position), and for a prefill (T > 1, not
 *     allLogits) `last` `[1]` (i32): the row whose logits are the result (stepActivations fills them).
 * Result: `logits`, `[vocab]` for the last token (or `[T, vocab]` with `allLogits`), or with
 * `output: 'hidden'` `hidden` `[T, hidden]`, every token's final-norm hidden state (embeddings). A program's name
 * starts with the architecture (`qwen3-decode-ctx1024`, `llama-prefill-64-ctx1024`).
 * Rope's cos and sin are computed in the program from the positions (layers.ts, ropeTables), so the
 * fp64 reference computes them exactly too.
 *
 * The plain form (`form: 'plain'`, for a target that recognizes no composite and has no trig or integer
 * arithmetic: the NPU4) computes the same from plain ops only (no row kernel), and takes rope's tables
 * and the causal mask as three more activations, `rope.cos` and `rope.sin` `[T, D/2]` and `mask`
 * `[T, ctx]` (f32), which stepActivations computes from the positions.
 */
import { InvalidOptions } from '../../errors/index.js';
import type { Limits } from '../../ir/limits.js';
import type { Program } from '../../ir/types.js';
import { program, type ProgramBuilder, type Value } from '../../ops/builder.js';
import type { Qwen3Config } from './config.js';
import type { Tensor } from '../../ir/tensor.js';
import { tensor } from '../../ir/tensor.js';
import {
  causalBias, causalMaskValues, geglu, linear, slidingBias, maskedSoftmax, maskedSoftmaxPlain, rmsNorm, rmsNormPlain, rope, ropeNormal, ropePartial,
  constantVector, ropeTables, ropeTableValues, swiglu, swigluPlain,
} from './layers.js';
import type { LayerTensor, MoeOptions } from '../arch/types.js';
import type { ModelWeights } from './weights.js';

/** The shape of one program of a model. */
export interface ProgramShape {
  /** Tokens per step (1 for decode). */
  readonly tokens: number;
  /** Positions the KV cache holds. */
  readonly ctx: number;
  /** Logits of every token, not only the last (tests and teacher forcing). */
  readonly allLogits?: boolean;
  /** Row kernels and in-program tables (fused, the default), or plain ops with the tables as inputs. */
  readonly form?: ProgramForm;
  /** The limits the program is checked under (default: the defaults, src/ir/limits.ts). */
  readonly limits?: Limits;
  /** The KV cache's dtype (default f32, the exact class; f16 rounds each stored element once). */
  readonly cacheType?: CacheType;
  /**
   * What the program gives: `logits` (the default) or `hidden`, every token's final-norm hidden state
   * `[T, hidden]` (the output norm applied, no lm head: what embeddings pool). Absent by default, so
   * the other programs keep their names and graphs.
   */
  readonly output?: ProgramOutput;
  /**
   * Sequences decoded together (default 1): a decode step (tokens 1) of this many sequences, each with
   * its own slot of the KV cache (state `slot<s>.<name>` for each of cacheShapes' names, slotStateName),
   * its own id and position (`ids` and `positions` `[sequences]`, any positions), logits `[sequences, vocab]`.
   * One pass over the weights serves every row; each row's rope, cache write and attention run over its
   * own slot with the single decode program's equations, so a batch-invariant target gives each row
   * the bits it gets alone. Fused form, logits only. Part of the program's name.
   */
  readonly sequences?: number;
}

/** What a program's result is: see ProgramShape.output. */
type ProgramOutput = 'logits' | 'hidden';

/** The dtypes a KV cache is held in. */
export type CacheType = 'f32' | 'f16';

/** The cache types loadModel takes. */
export const CACHE_TYPES: readonly CacheType[] = ['f32', 'f16'];

/** How a program is written: see the file's doc. */
export type ProgramForm = 'fused' | 'plain';

/** The pieces of one form. */
interface Pieces {
  readonly norm: typeof rmsNorm;
  readonly softmax: typeof maskedSoftmax;
  readonly glu: typeof swiglu;
}

const PIECES: Readonly<Record<ProgramForm, Pieces>> = {
  fused: { norm: rmsNorm, softmax: maskedSoftmax, glu: swiglu },
  plain: { norm: rmsNormPlain, softmax: maskedSoftmaxPlain, glu: swigluPlain },
};

// What a plain-form program needs to compute its table inputs from the positions.
const TABLE_INPUTS = new WeakMap<Program, { readonly headDim: number; readonly theta: number; readonly ctx: number; readonly freqScale: number }>();

/**
 * The activations of one step of `program` over `ids` at `positions`: ids and positions, `last` (the
 * index of the last of them, whose logits a prefill gives), and a plain-form program's tables and mask.
 * A prefill program of more tokens than `ids` (a padded bucket, prefillTokens) runs them padded with id
 * 0 at the positions after: those rows of the cache are written too, but every later step masks a row
 * until it writes that row itself, so they never count.
 */
export function stepActivations(program: Program, ids: readonly number[], positions: readonly number[]): Record<string, Tensor> {
  const t = program.args.find((a) => a.name === 'ids')?.shape[0] ?? ids.length;
  if (ids.length > t || ids.length === 0) throw new InvalidOptions('ids', `${ids.length} tokens for a program of ${t}`);
  const padIds = [...ids, ...new Array<number>(t - ids.length).fill(0)];
  const padPositions = Array.from({ length: t }, (_, k) => (k < positions.length ? positions[k]! : positions[positions.length - 1]! + k - positions.length + 1));
  const out: Record<string, Tensor> = {
    ids: tensor('i32', [t], padIds),
    positions: tensor('i32', [t], padPositions),
  };
  if (program.args.some((a) => a.name === 'last')) out['last'] = tensor('i32', [1], [ids.length - 1]);
  const tables = TABLE_INPUTS.get(program);
  if (tables !== undefined) {
    const { cos, sin } = ropeTableValues(padPositions, tables.headDim, tables.theta, tables.freqScale);
    out['rope.cos'] = tensor('f32', [t, tables.headDim / 2], cos);
    out['rope.sin'] = tensor('f32', [t, tables.headDim / 2], sin);
    out['mask'] = tensor('f32', [t, tables.ctx], causalMaskValues(padPositions, tables.ctx));
  }
  return out;
}

/**
 * The KV cache's layout: each state arg's shape and the axis its positions run along (keys and values
 * both `[kvHeads, ctx, headDim]`, one row per position; cacheRow gives a row's element offset). What
 * reads or writes positions of a cache outside the programs (the prefix cache, prefix.ts) goes by this alone.
 */
export function cacheLayout(c: Qwen3Config, ctx: number): Map<string, { readonly shape: readonly number[]; readonly positionAxis: number }> {
  const m = new Map<string, { readonly shape: readonly number[]; readonly positionAxis: number }>();
  for (let l = 0; l < c.layers; l++) {
    m.set(`cache.k.${l}`, { shape: [c.kvHeads, ctx, c.headDim], positionAxis: 1 });
    m.set(`cache.v.${l}`, { shape: [c.kvHeads, ctx, c.headDim], positionAxis: 1 });
  }
  return m;
}

/** The state args of a model's programs, with their shapes (each a zeroed tensor of the cache type at the start of a generation). */
export function cacheShapes(c: Qwen3Config, ctx: number): Map<string, readonly number[]> {
  return new Map([...cacheLayout(c, ctx)].map(([k, l]) => [k, l.shape]));
}

/**
 * A mixture of experts' FFN on `h [T, hidden]` (llama.cpp's build_moe_ffn with softmax gating): the
 * router's probabilities over the experts, the `used` most probable chosen one at a time (the lowest
 * index among equals), their probabilities as weights (divided by their sum when `normalize`), each
 * chosen expert's SwiGLU by matmul_id (only the chosen experts' rows are read), the weighted sum.
 */
function moeFfn(p: ProgramBuilder, f: Pieces, h: Value, L: (n: LayerTensor) => Value, moe: MoeOptions, hidden: number): Value {
  const t = h.shape[0]!;
  const { experts: e, used: k } = moe;
  const logits = linear(p, h, L('ffn_gate_inp'), e);
  const row = (v: Value) => p.broadcast(v, [t, e], [0]);
  const ex = p.exp(p.sub(logits, row(p.reduceMax(logits, [1]))));
  const probs = p.div(ex, row(p.reduceSum(ex, [1])));
  const index = p.iota([t, e], 1, 'f32');
  let left = probs;
  const ids: Value[] = [];
  const weights: Value[] = [];
  for (let j = 0; j < k; j++) {
    const top = p.reduceMax(left, [1]);
    const isTop = p.convert(p.ge(left, row(top)), 'f32');
    // The lowest index holding the maximum: the least of index + e where not the maximum.
    const first = p.neg(p.reduceMax(p.neg(p.add(index, p.mul(p.sub(1, isTop), e))), [1]));
    ids.push(p.reshape(p.convert(first, 'i32'), [t, 1]));
    weights.push(p.reshape(top, [t, 1]));
    if (j + 1 < k) {
      // Taken out of the running: a probability is at most 1, so minus 2 is below every other.
      const chosen = p.mul(p.convert(p.ge(index, row(first)), 'f32'), p.convert(p.ge(row(first), index), 'f32'));
      left = p.sub(left, p.mul(chosen, 2));
    }
  }
  const id = k === 1 ? ids[0]! : p.concat(ids, 1);
  let w = k === 1 ? weights[0]! : p.concat(weights, 1);
  if (moe.normalize) w = p.div(w, p.broadcast(p.reduceSum(w, [1]), [t, k], [0]));
  const x = p.reshape(h, [t, 1, hidden]);
  const act = f.glu(p, p.matmulId(x, L('ffn_gate_exps'), id), p.matmulId(x, L('ffn_up_exps'), id));
  const down = p.matmulId(act, L('ffn_down_exps'), id);
  return p.reduceSum(p.mul(down, p.broadcast(w, [t, k, hidden], [0, 1])), [1]);
}

/** The name of state `name` (one of cacheShapes') in slot `slot` of a program of several sequences. */
export function slotStateName(name: string, slot: number): string {
  return `slot${slot}.${name}`;
}

/**
 * Where the KV cache of `ctx` positions holds the key (`which` 'k') or value ('v') of kv head `head`
 * at position `pos` in layer `layer`: the state tensor's name and the element offset of the row's
 * `length` (headDim) contiguous elements in it, found from cacheLayout's shape and position axis (the
 * kv head on axis 0, the row the last axis); InvalidOptions names an index outside the model or the context.
 */
export function cacheRow(c: Qwen3Config, ctx: number, which: 'k' | 'v', layer: number, head: number, pos: number): { readonly name: string; readonly offset: number; readonly length: number } {
  const within = (what: string, v: number, n: number): void => {
    if (!(Number.isSafeInteger(v) && v >= 0 && v < n)) throw new InvalidOptions(what, `0 to ${n - 1}, not ${JSON.stringify(v)}`);
  };
  if (which !== 'k' && which !== 'v') throw new InvalidOptions('which', `k or v, not ${JSON.stringify(which)}`);
  within('layer', layer, c.layers);
  within('head', head, c.kvHeads);
  within('pos', pos, ctx);
  const name = `cache.${which}.${layer}`;
  const { shape, positionAxis } = cacheLayout(c, ctx).get(name)!;
  const index = shape.map((_, axis) => (axis === 0 ? head : axis === positionAxis ? pos : 0));
  let offset = 0;
  for (let axis = 0; axis < shape.length; axis++) offset = offset * shape[axis]! + index[axis]!;
  return { name, offset, length: shape[shape.length - 1]! };
}

/** Attention of `q [T, H, D]` over the cache after this step's keys and values are written. */
function attention(p: ProgramBuilder, c: Qwen3Config, f: Pieces, q: Value, kc: Value, vc: Value, bias: Value): Value {
  const t = q.shape[0]!;
  const g = c.heads / c.kvHeads;
  // Query heads h = kv * g + j share kv head `kv`: group them so one batched matmul per kv head serves all.
  const qg = p.reshape(p.transpose(p.reshape(q, [t, c.kvHeads, g, c.headDim]), [1, 0, 2, 3]), [c.kvHeads, t * g, c.headDim]);
  // The keys are rows [kvHeads, ctx, D], as the cache holds them: the host reads them in place (its attention record).
  const scores = p.matmul(qg, p.transpose(kc, [0, 2, 1]));
  const probs = f.softmax(p, scores, bias, 1 / Math.sqrt(c.headDim));
  const o = p.reshape(p.matmul(probs, vc), [c.kvHeads, t, g, c.headDim]);
  return p.reshape(p.transpose(o, [1, 0, 2, 3]), [t, c.heads * c.headDim]);
}

/** The program of `shape.tokens` tokens for a model whose weights are `weights`; see the file's doc. */
export function buildProgram(c: Qwen3Config, weights: ModelWeights, shape: ProgramShape): Program {
  const { tokens: t, ctx } = shape;
  if (!(Number.isSafeInteger(t) && t >= 1)) throw new InvalidOptions('tokens', `a program runs 1 or more tokens, not ${t}`);
  if (!(Number.isSafeInteger(ctx) && ctx >= t)) throw new InvalidOptions('ctx', `the context (${ctx}) holds at least the ${t} tokens of a step`);
  if (c.options.ropeDims % 2 !== 0) throw new InvalidOptions('headDim', `rope needs an even count of a head's elements, not ${c.options.ropeDims}`);
  const form = shape.form ?? 'fused';
  const cacheType = shape.cacheType ?? 'f32';
  if (!CACHE_TYPES.includes(cacheType)) throw new InvalidOptions('cacheType', `f32 or f16, not ${JSON.stringify(cacheType)}`);
  const f = PIECES[form];
  const output = shape.output ?? 'logits';
  if (output !== 'logits' && output !== 'hidden') throw new InvalidOptions('output', `logits or hidden, not ${JSON.stringify(output)}`);
  const seqs = shape.sequences ?? 1;
  if (!(Number.isSafeInteger(seqs) && seqs >= 1)) throw new InvalidOptions('sequences', `a whole number of sequences of at least 1, not ${JSON.stringify(seqs)}`);
  if (seqs > 1 && (t !== 1 || form !== 'fused' || output !== 'logits' || shape.allLogits === true)) {
    throw new InvalidOptions('sequences', 'several sequences run in a decode program (tokens 1) of the fused form giving the last logits');
  }
  // Rows of a step: the tokens of one sequence, or one token of each sequence.
  const rows = t * seqs;
  const o = c.options;
  if (form === 'plain' && (o.ropeFreqs || o.longRopeContext !== undefined || o.ropeAttnFactor !== 1 || o.ropeYarn !== undefined || o.ropeFactorValues !== undefined)) throw new InvalidOptions('form', 'the plain form takes rope tables as inputs, which do not carry rope_freqs factors, YaRN or an attention factor; run the fused form');
  if (form === 'plain' && o.slidingWindow !== undefined) throw new InvalidOptions('form', 'the plain form takes one rope table and one mask as inputs, not a sliding window\'s second ones; run the fused form');
  const p = program(`${t === 1 ? `${c.arch}-decode${seqs > 1 ? `-seq${seqs}` : ''}` : `${c.arch}-prefill-${t}`}-ctx${ctx}${shape.allLogits === true ? '-all' : ''}${form === 'plain' ? '-plain' : ''}${cacheType === 'f32' ? '' : `-kv${cacheType}`}${output === 'hidden' ? '-hidden' : ''}`);
  // LongRoPE: the long factors past the original context, else the short ones (both are args, one read).
  const longRope = o.longRopeContext === undefined ? undefined : ctx > o.longRopeContext ? 'rope_factors_long' : 'rope_factors_short';
  const w = new Map<string, Value>();
  for (const [name, b] of weights) w.set(name, p.weight(name, b.dtype, b.shape));
  const W = (name: string) => w.get(name)!;
  // Each sequence's cache args, in cacheShapes' order: the program's own, or its slot's of several.
  const caches = Array.from({ length: seqs }, (_, s) => [...cacheShapes(c, ctx)].map(([name, sh]) => p.state(seqs === 1 ? name : slotStateName(name, s), cacheType, sh)));
  // What is written to the cache (rounded to its dtype) and what attention reads of it (as f32, exactly).
  const stored = (x: Value): Value => (cacheType === 'f32' ? x : p.convert(x, cacheType));
  const read = (x: Value): Value => (cacheType === 'f32' ? x : p.convert(x, 'f32'));
  const ids = p.activation('ids', 'i32', [rows]);
  const allPositions = p.activation('positions', 'i32', [rows]);

  const plain = form === 'plain';
  const rd = o.ropeDims;
  const turn = o.rope === 'neox' ? rope : ropeNormal;
  const g = c.heads / c.kvHeads;
  const perHead = (m: Value) => p.reshape(p.broadcast(m, [c.kvHeads, t, g, ctx], [1, 3]), [c.kvHeads, t * g, ctx]);
  // Sliding-window layers (Gemma 3's local ones): their own rope base, unscaled, and a windowed mask
  // (the causal one itself while the window holds the whole context).
  const swa = o.slidingWindow;
  // One sequence's rope tables, mask and cache position from its `[T]` positions.
  const sequence = (positions: Value) => {
    const tables = plain
      ? { cos: p.activation('rope.cos', 'f32', [t, rd / 2]), sin: p.activation('rope.sin', 'f32', [t, rd / 2]) }
      : ropeTables(p, positions, rd, c.ropeTheta, {
        freqScale: o.ropeFreqScale, attnFactor: o.ropeAttnFactor, ...(o.ropeYarn !== undefined ? { yarn: o.ropeYarn } : {}),
        ...(o.ropeFactorValues !== undefined
          ? { freqs: constantVector(p, longRope === 'rope_factors_long' ? o.ropeFactorValues.long ?? o.ropeFactorValues.short : o.ropeFactorValues.short) }
          : o.ropeFreqs ? { freqs: W('rope_freqs') } : longRope !== undefined ? { freqs: W(longRope) } : {}),
      });
    const mask = plain ? p.activation('mask', 'f32', [t, ctx]) : causalBias(p, positions, ctx);
    const bias = perHead(mask);
    const local = swa === undefined ? undefined : {
      tables: ropeTables(p, positions, rd, swa.ropeBase),
      bias: swa.window >= ctx ? bias : perHead(slidingBias(p, positions, ctx, swa.window)),
    };
    const start = p.reshape(p.slice(positions, [0], [1]), []);
    return { tables, bias, local, start };
  };
  const seqOf = Array.from({ length: seqs }, (_, s) => sequence(seqs === 1 ? allPositions : p.slice(allPositions, [s], [s + 1])));
  const isLocal = (l: number) => swa !== undefined && (swa.period === 0 || l % swa.period < swa.period - 1);
  const qDim = c.heads * c.headDim;
  const kvDim = c.kvHeads * c.headDim;

  let x = p.gather(W('token_embd'), ids, 0);
  if (x.dtype !== 'f32') x = p.convert(x, 'f32');
  // The scales a file declares (MiniCPM's), each only where it is not neutral.
  if (o.embeddingScale !== 1) x = p.mul(x, o.embeddingScale);
  const branch = (y: Value): Value => (o.residualScale === 1 ? y : p.mul(y, o.residualScale));
  for (let l = 0; l < c.layers; l++) {
    const L = (n: LayerTensor) => W(`blk.${l}.${n}`);
    const h = f.norm(p, x, L('attn_norm'), c.rmsEps);
    // q, k and v `[T, n]`: three projections, or one fused one sliced; each plus its bias when the graph has them.
    const fused = o.fusedQkv ? linear(p, h, L('attn_qkv'), qDim + 2 * kvDim) : undefined;
    const project = (name: 'attn_q' | 'attn_k' | 'attn_v', from: number, n: number, heads: number): Value => {
      let y = fused === undefined ? linear(p, h, L(name), n) : p.slice(fused, [0, from], [rows, from + n]);
      if (o.qkvBias) y = p.add(y, p.broadcast(L(`${name}.bias`), [rows, n], [1]));
      return p.reshape(y, [rows, heads, c.headDim]);
    };
    const qkNorm = (y: Value, name: 'attn_q_norm' | 'attn_k_norm') => (o.qkNorm ? f.norm(p, y, L(name), c.rmsEps) : y);
    const q = qkNorm(project('attn_q', 0, qDim, c.heads), 'attn_q_norm');
    const k = qkNorm(project('attn_k', qDim, kvDim, c.kvHeads), 'attn_k_norm');
    const v = project('attn_v', qDim + kvDim, kvDim, c.kvHeads);
    // Each sequence's rope, cache write and attention over its own cache (of several, its row of q, k, v).
    const atts = seqOf.map((sq, s) => {
      const one = (y: Value): Value => (seqs === 1 ? y : p.slice(y, [s, 0, 0], [s + 1, y.shape[1]!, y.shape[2]!]));
      const lt = isLocal(l) ? sq.local! : sq;
      const ropeOf = (y: Value) => ropePartial(p, y, lt.tables, rd, turn);
      const cache = caches[s]!;
      const kc = p.dynamicUpdateSlice(cache[2 * l]!, stored(p.transpose(ropeOf(one(k)), [1, 0, 2])), [0, sq.start, 0]);
      const vc = p.dynamicUpdateSlice(cache[2 * l + 1]!, stored(p.transpose(one(v), [1, 0, 2])), [0, sq.start, 0]);
      p.carry(cache[2 * l]!, kc);
      p.carry(cache[2 * l + 1]!, vc);
      return attention(p, c, f, ropeOf(one(q)), read(kc), read(vc), lt.bias);
    });
    const att = seqs === 1 ? atts[0]! : p.concat(atts, 0);
    const post = (y: Value, name: 'post_attention_norm' | 'post_ffw_norm') => (o.postNorms ? f.norm(p, y, L(name), c.rmsEps) : y);
    x = p.add(x, branch(post(linear(p, att, L('attn_output'), c.hidden), 'post_attention_norm')));
    const h2 = f.norm(p, x, L('ffn_norm'), c.rmsEps);
    if (o.moe !== undefined) {
      x = p.add(x, branch(moeFfn(p, f, h2, L, o.moe, c.hidden)));
      continue;
    }
    let gate: Value;
    let up: Value;
    if (o.fusedGateUp) {
      // One ffn_up of 2 x ffn rows: the gate's, then the up's (llama.cpp's LLM_FFN_SWIGLU without ffn_gate).
      const both = linear(p, h2, L('ffn_up'), 2 * c.intermediate);
      gate = p.slice(both, [0, 0], [rows, c.intermediate]);
      up = p.slice(both, [0, c.intermediate], [rows, 2 * c.intermediate]);
    } else {
      gate = linear(p, h2, L('ffn_gate'), c.intermediate);
      up = linear(p, h2, L('ffn_up'), c.intermediate);
    }
    const act = o.activation === 'silu' ? f.glu(p, gate, up) : geglu(p, gate, up);
    x = p.add(x, branch(post(linear(p, act, L('ffn_down'), c.hidden), 'post_ffw_norm')));
  }
  if (output === 'hidden') {
    // Every row's final-norm hidden state, no lm head: a padded bucket's rows past the ids are the caller's to drop.
    p.results(p.named('hidden').reshape(f.norm(p, x, W('output_norm'), c.rmsEps), [t, c.hidden]));
    const hidden = p.build(shape.limits);
    if (plain) TABLE_INPUTS.set(hidden, { headDim: rd, theta: c.ropeTheta, ctx, freqScale: o.ropeFreqScale });
    return hidden;
  }
  // Only the last token's logits are needed to go on (the lm head is the largest matmul of a step):
  // the row `last` names, so a padded prefill gives its last real token's.
  const last = shape.allLogits === true || t === 1 ? x : p.gather(x, p.activation('last', 'i32', [1]), 0);
  const xn = f.norm(p, last, W('output_norm'), c.rmsEps);
  const head = linear(p, xn, w.get('output') ?? W('token_embd'), c.vocab);
  const logits = o.logitScale === 1 ? head : p.div(head, o.logitScale);
  p.results(shape.allLogits === true ? p.named('logits').reshape(logits, [t, c.vocab]) : seqs > 1 ? p.named('logits').reshape(logits, [seqs, c.vocab]) : p.named('logits').reshape(logits, [c.vocab]));
  const built = p.build(shape.limits);
  if (plain) TABLE_INPUTS.set(built, { headDim: rd, theta: c.ropeTheta, ctx, freqScale: o.ropeFreqScale });
  return built;
}
