import { expect } from 'chai';
import { InvalidOptions, ResourceLimit } from '../../../src/errors/index.js';
import { tensor } from '../../../src/ir/tensor.js';
import type { Program } from '../../../src/ir/types.js';
import { generateIds, type DecodeRequest, type GenerationContext, type GenerationResult } from '../../../src/model/qwen3/generate.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { HeldCursor, type StepInput, type StepRunner } from '../../../src/model/qwen3/runner.js';
import type { TensorMap } from '../../../src/ir/values.js';
import { argmax, penalize, Sampler } from '../../../src/model/qwen3/sampler.js';
import { tinyQwen3Config } from '../../../src/model/qwen3/tiny.js';
import { configFromGguf } from '../../../src/model/qwen3/config.js';
import { openGguf } from '../../../src/model/gguf/reader.js';
import { loadTokenizer } from '../../../src/model/tokenizer/load.js';
import type { Tokenizer } from '../../../src/model/tokenizer/types.js';
import { modelFixture, SMALL } from './helpers.js';

describe('qwen3 decoding: the sampler', () => {
  it('greedy is the argmax, the lowest id among equals', () => {
    expect(argmax([1, 3, 3, 2])).to.equal(1);
    expect(new Sampler({ repetitionPenalty: 1 }).next([0, 5, 2], [])).to.equal(1);
  });

  it('greedy never picks a NaN logit but where every earlier one is NaN, with or without the penalty', () => {
    expect(argmax([NaN, 1, NaN, 3, 3, NaN])).to.equal(3);
    expect(argmax(Float64Array.from([2, NaN, 5, -Infinity]))).to.equal(2);
    expect(argmax([NaN, NaN])).to.equal(1);
    for (const penalty of [1, 1.1]) expect(new Sampler({ repetitionPenalty: penalty }).next(Float64Array.from([NaN, -1, 4, 4]), [])).to.equal(2);
    // Negative control: a NaN compared as a number (NaN > x is false, so it would stay the best).
    const naive = (x: ArrayLike<number>) => { let b = 0; for (let i = 1; i < x.length; i++) if (x[i]! > x[b]!) b = i; return b; };
    expect(naive([NaN, 1, 3])).to.not.equal(argmax([NaN, 1, 3]));
  });

  it('the default 1.1 penalty divides positive and multiplies negative logits of the last 64 ids, once each', () => {
    const l = [2.2, -1, 1.1, 0.5];
    expect([...penalize(l, [0, 1, 0], 1.1, 64)]).to.deep.equal([2.2 / 1.1, -1 * 1.1, 1.1, 0.5]);
    // Only the window counts: id 0 is 65 ids back.
    expect([...penalize(l, [0, ...Array<number>(64).fill(3)], 1.1, 64)]).to.deep.equal([2.2, -1, 1.1, 0.5 / 1.1]);
    // The penalty turns greedy away from a repeated id; 1 is plain greedy.
    expect(new Sampler().next([1.05, 1.0], [0])).to.equal(1);
    expect(new Sampler({ repetitionPenalty: 1 }).next([1.05, 1.0], [0])).to.equal(0);
  });

  it('sampling follows the seed; top_k 1 and a tiny top_p are greedy', () => {
    const logits = [0.1, 0.5, 0.3, 0.2, 0.4];
    const draw = (seed: number) => { const s = new Sampler({ temperature: 1, seed, repetitionPenalty: 1 }); return Array.from({ length: 40 }, () => s.next(logits, [])); };
    expect(draw(7)).to.deep.equal(draw(7));
    expect(draw(7)).to.not.deep.equal(draw(8));
    expect(new Set(draw(7)).size).to.be.above(2);
    const k1 = new Sampler({ temperature: 1, topK: 1, seed: 3 });
    const p0 = new Sampler({ temperature: 1, topP: 1e-9, seed: 3 });
    for (let i = 0; i < 20; i++) { expect(k1.next(logits, [])).to.equal(1); expect(p0.next(logits, [])).to.equal(1); }
    const k2 = new Sampler({ temperature: 5, topK: 2, seed: 1, repetitionPenalty: 1 });
    for (let i = 0; i < 50; i++) expect([1, 4]).to.include(k2.next(logits, []));
  });

  it('refuses options it cannot take, naming the field', () => {
    expect(() => new Sampler({ temperature: -1 })).to.throw(InvalidOptions, /temperature/);
    expect(() => new Sampler({ topP: 0 })).to.throw(InvalidOptions, /top_p/);
    expect(() => new Sampler({ topK: 1.5 })).to.throw(InvalidOptions, /top_k/);
    expect(() => new Sampler({ repetitionPenalty: 0 })).to.throw(InvalidOptions, /penalty/);
  });
});

/** A runner whose logits put each step's scripted id on top (the rest follow a fixed pattern). */
class Scripted implements StepRunner {
  readonly name = 'scripted';
  readonly seen: StepInput[] = [];
  constructor(private readonly vocab: number, private readonly script: readonly number[]) {}
  step(_p: Program, input: StepInput) {
    const id = this.script[this.seen.length] ?? 0;
    this.seen.push(input);
    const data = Array.from({ length: this.vocab }, (_, i) => (i === id ? 10 : (i % 7) / 10));
    return Promise.resolve({ logits: tensor('f32', [this.vocab], data), state: input.state });
  }
  begin(zero: () => TensorMap) { return Promise.resolve(new HeldCursor(this, zero())); }
}

describe('qwen3 decoding: the generation loop', function () {
  this.timeout(60_000);
  const fx = modelFixture();
  let tok: Tokenizer;
  const config = () => { const f = openGguf(fx.gguf('tok.gguf', { layers: 1 })); const c = configFromGguf(f); f.close(); return c; };
  const vocab = tinyQwen3Config().vocab;
  const ctxOf = (runner: StepRunner, ctx = 32): GenerationContext => ({
    config: config(), ctx, prefillChunk: 4, tokenizer: tok, eosIds: [vocab - 1], runner, program: () => ({}) as Program,
  });
  async function run(g: GenerationContext, r: DecodeRequest): Promise<{ pieces: string[]; result: GenerationResult }> {
    const it = generateIds(g, r);
    const pieces: string[] = [];
    for (;;) { const n = await it.next(); if (n.done === true) return { pieces, result: n.value }; pieces.push(n.value.text); }
  }
  before(() => { tok = loadTokenizer(fx.gguf('t.gguf', { layers: 1 })); });

  it('prefills in chunks at consecutive positions, then one decode step per token', async () => {
    const r = new Scripted(vocab, []);
    await run(ctxOf(r), { promptIds: [97, 98, 99, 100, 101, 102], maxTokens: 3, repetitionPenalty: 1 });
    expect(r.seen.map((s) => s.positions)).to.deep.equal([[0, 1, 2, 3], [4, 5], [6], [7]]);
    expect(r.seen[2]!.ids).to.deep.equal([0]);
  });

  it('stops at an end-of-sequence id, which is not part of the ids or the text', async () => {
    const script = [...tok.encode('hi'), vocab - 1, ...tok.encode('xx')];
    const { result } = await run(ctxOf(new Scripted(vocab, script)), { promptIds: [5], maxTokens: 10, repetitionPenalty: 1 });
    expect(result.finishReason).to.equal('eos');
    expect(result.text).to.equal('hi');
    expect(result.ids).to.deep.equal(tok.encode('hi'));
  });

  it('stops before a stop string, never streaming a piece of it', async () => {
    const script = tok.encode('one two STOP three');
    const { pieces, result } = await run(ctxOf(new Scripted(vocab, script)), { promptIds: [5], maxTokens: 30, stop: ['STOP'], repetitionPenalty: 1 });
    expect(result.finishReason).to.equal('stop');
    expect(result.text).to.equal('one two ');
    expect(pieces.join('')).to.equal('one two ');
    expect(pieces.some((p) => p.includes('S'))).to.equal(false);
  });

  it('holds a character split across ids until its last byte', async () => {
    const bytes = [...new TextEncoder().encode('é!')];
    const { pieces, result } = await run(ctxOf(new Scripted(vocab, bytes)), { promptIds: [5], maxTokens: 3, repetitionPenalty: 1 });
    expect(pieces).to.deep.equal(['', 'é', '!']);
    expect(result.text).to.equal('é!');
  });

  it('ends at maxTokens, or at the context\'s last position', async () => {
    const a = await run(ctxOf(new Scripted(vocab, [])), { promptIds: [1, 2], maxTokens: 4 });
    expect([a.result.ids.length, a.result.finishReason]).to.deep.equal([4, 'length']);
    const b = await run(ctxOf(new Scripted(vocab, []), 6), { promptIds: [1, 2], maxTokens: 40 });
    expect([b.result.ids.length, b.result.finishReason]).to.deep.equal([5, 'context']);
  });

  it('refuses an empty prompt, an id outside the vocabulary and a prompt longer than the context', async () => {
    const g = ctxOf(new Scripted(vocab, []), 4);
    const fails = async (r: DecodeRequest) => { try { await run(g, r); } catch (e) { return e; } return undefined; };
    expect(await fails({ promptIds: [] })).to.be.instanceOf(InvalidOptions);
    expect(await fails({ promptIds: [1, vocab] })).to.be.instanceOf(InvalidOptions).with.property('field', 'promptIds/1');
    expect(await fails({ promptIds: [1, 2, 3, 4, 5] })).to.be.instanceOf(ResourceLimit).with.property('what', 'context');
    expect(await fails({ promptIds: [1], maxTokens: -1 })).to.be.instanceOf(InvalidOptions).with.property('field', 'maxTokens');
  });
});

describe('qwen3 decoding: repeatability through the engine', function () {
  this.timeout(120_000);
  const fx = modelFixture();

  it('the same greedy request after different earlier requests gives byte-identical text', async () => {
    const model = await loadModel(fx.gguf('rep.gguf', { ...SMALL, type: 'Q4_K' }), { engine: fx.engine(), ctx: 32 });
    const request = { prompt: 'the cat sat', maxTokens: 6 };
    const first = await model.complete(request);
    await model.complete({ prompt: 'another story entirely', maxTokens: 5 });
    await model.complete({ promptIds: [9, 9, 9, 9, 9, 9, 9, 9, 9, 9], maxTokens: 3, temperature: 1, seed: 4 });
    const again = await model.complete(request);
    expect(Buffer.from(again.text)).to.deep.equal(Buffer.from(first.text));
    expect(again.ids).to.deep.equal(first.ids);
    expect(first.ids).to.have.length(6);
    const sampled = { prompt: 'the cat sat', maxTokens: 6, temperature: 0.8, topP: 0.9, seed: 11 };
    expect((await model.complete(sampled)).ids).to.deep.equal((await model.complete(sampled)).ids);
  });

  it('a request with two prompts, or text for a model without a tokenizer, is refused', async () => {
    const model = await loadModel(fx.gguf('two.gguf', { ...SMALL, vocab: 64 }), { engine: fx.engine(), ctx: 16 });
    const fails = async (r: Parameters<typeof model.complete>[0]) => { try { await model.complete(r); } catch (e) { return e; } return undefined; };
    expect(await fails({ prompt: 'a', promptIds: [1] })).to.be.instanceOf(InvalidOptions).with.property('field', 'prompt');
    // A 64-token vocabulary has no byte tokens: its GGUF tokenizer cannot encode text.
    expect(await fails({ prompt: 'hello' })).to.be.instanceOf(InvalidOptions).with.property('reason').that.matches(/tokenizer cannot be used.*give promptIds/);
    expect((await model.complete({ promptIds: [1, 2], maxTokens: 2 })).ids).to.have.length(2);
  });
});
