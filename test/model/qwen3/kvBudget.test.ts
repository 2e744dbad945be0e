/**
 * The KV budget (kv.ts): a generation reserves its prompt and max tokens in blocks when it starts, is
 * refused with KvCacheFull when they are not free (and admitted when they are), and gives them back
 * the moment it ends, an abort or a consumer's return included. Then a shared prefill (share.ts): n
 * generations of one prompt prefill it once, each answer the bytes of the same request alone.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { Aborted, KvCacheFull } from '../../../src/errors/index.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import type { GenerationResult } from '../../../src/model/qwen3/generate.js';
import { EngineRunner, type CacheCursor } from '../../../src/model/qwen3/runner.js';
import { PromptShare } from '../../../src/model/qwen3/share.js';
import { modelFixture, SMALL } from './helpers.js';

const CTX = 128;
const prompt = (n: number, salt = 0) => Array.from({ length: n }, (_, i) => (i * 89 + 7 + 13 * salt) % 300);
const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean => a.length === b.length && Array.from(a).every((v, i) => Object.is(v, b[i]));
const sameRun = (a: GenerationResult, b: GenerationResult): boolean =>
  same(a.ids, b.ids) && a.text === b.text && a.logits!.length === b.logits!.length && a.logits!.every((l, j) => same(l.data, b.logits![j]!.data));

async function refusal(p: Promise<unknown>): Promise<KvCacheFull> {
  return p.then(() => { throw new Error('not refused'); }, (e: unknown) => {
    expect(e).to.be.instanceOf(KvCacheFull);
    return e as KvCacheFull;
  });
}

/** Counts the prefill steps (more than one token) of the model's generations. */
function countPrefills(model: Qwen3Model): { n: number } {
  const count = { n: 0 };
  const runner = model.runner as EngineRunner;
  const begin = runner.begin.bind(runner);
  runner.begin = async (zero) => {
    const c: CacheCursor = await begin(zero);
    const step = c.step.bind(c);
    c.step = (program, ids, positions) => {
      if (ids.length > 1) count.n++;
      return step(program, ids, positions);
    };
    return c;
  };
  return count;
}

describe('qwen3: the KV budget and shared prefills', function () {
  this.timeout(300_000);
  const fx = modelFixture();
  let path = '';
  let on: Engine;
  before(() => {
    path = fx.gguf('kv.gguf', { ...SMALL, type: 'Q4_0' });
    on = createEngine({ cacheDir: join(fx.dir(), 'cache-q8'), devices: { host: { matmul: 'q8' } } });
  });
  after(async () => { await on.close(); });

  it('refuses a generation the free blocks cannot hold, and admits one they can', async () => {
    // Two blocks of 64 positions.
    const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 2, kvBudget: 128 });
    try {
      expect(model.kvUse()).to.include({ block: 64, total: 2, reserved: 0, free: 2 });
      // 20 prompt tokens and 40 to generate: one block each.
      const a = model.generate({ promptIds: prompt(20), maxTokens: 40, ignoreEos: true });
      await a.next();
      expect(model.kvUse()).to.include({ reserved: 1, free: 1 });
      expect(model.kvUse()!.generations).to.deep.equal([{ blocks: 1, filled: 20 }]);
      // Below the budget: admitted.
      const b = model.generate({ promptIds: prompt(20, 1), maxTokens: 40, ignoreEos: true });
      await b.next();
      expect(model.kvUse()).to.include({ reserved: 2, free: 0 });
      // Past it: refused before any step, naming what it needs and what is free.
      const e = await refusal(model.complete({ promptIds: prompt(5, 2), maxTokens: 4 }));
      expect(e.fields()).to.deep.equal({ needed: 1, free: 0, total: 2, block: 64 });
      expect(model.kvUse()).to.include({ reserved: 2, refused: 1 });
      // One that ends gives its block back: the same request is admitted now.
      await a.return(undefined as never);
      expect(model.kvUse()).to.include({ reserved: 1, free: 1 });
      const c = await model.complete({ promptIds: prompt(5, 2), maxTokens: 4, ignoreEos: true });
      expect(c.ids).to.have.length(4);
      await b.return(undefined as never);
      expect(model.kvUse()).to.include({ reserved: 0, free: 2, admitted: 3, refused: 1 });
    } finally {
      await model.close();
    }
  });

  it('a generation past the whole budget is refused at once; its prompt and max tokens within the context count', async () => {
    const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, kvBudget: 64 });
    try {
      // 30 + 50 positions: two blocks of a budget of one.
      const e = await refusal(model.complete({ promptIds: prompt(30), maxTokens: 50 }));
      expect(e.fields()).to.deep.equal({ needed: 2, free: 1, total: 1, block: 64 });
      // Negative control: 30 + 34 fill one block exactly, and run.
      const ok = await model.complete({ promptIds: prompt(30), maxTokens: 34, ignoreEos: true });
      expect(ok.ids).to.have.length(34);
      expect(model.kvUse()).to.include({ reserved: 0, used: 0, free: 1 });
    } finally {
      await model.close();
    }
    // `true`: ctx for each slot (two blocks of 64 for each of the 4 slots).
    const slots = await loadModel(path, { engine: on, target: 'host', ctx: CTX, kvBudget: true });
    try {
      expect(slots.kvUse()).to.include({ total: 8, block: 64 });
    } finally {
      await slots.close();
    }
    // None by default.
    const none = await loadModel(path, { engine: on, target: 'host', ctx: CTX });
    try { expect(none.kvUse()).to.equal(undefined); } finally { await none.close(); }
  });

  it('an aborted generation gives its blocks back by the time its abort shows; a paused one keeps them', async () => {
    const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 2, kvBudget: 256 });
    try {
      const stop = new AbortController();
      const aborted = model.generate({ promptIds: prompt(20), maxTokens: 100, ignoreEos: true }, { signal: stop.signal });
      const paused = model.generate({ promptIds: prompt(20, 1), maxTokens: 40, ignoreEos: true });
      await aborted.next();
      await aborted.next();
      await paused.next();
      // Both hold theirs: two blocks (120 positions) and one.
      expect(model.kvUse()).to.include({ reserved: 3, free: 1 });
      stop.abort();
      await aborted.next().then(() => { throw new Error('not aborted'); }, (e: unknown) => expect(e).to.be.instanceOf(Aborted));
      // Freed by then (not after its cache closes), while the paused one, asking for nothing, keeps its block.
      expect(model.kvUse()).to.include({ reserved: 1, free: 3 });
      expect(model.kvUse()!.generations).to.deep.equal([{ blocks: 1, filled: 20 }]);
      await paused.return(undefined as never);
      expect(model.kvUse()).to.include({ reserved: 0, free: 4 });
    } finally {
      await model.close();
    }
  });

  describe('n generations of one prompt share its prefill', () => {
    // A prompt of three prefill chunks of 16 (so its prefill is three steps), sampled.
    const ids = prompt(40, 5);
    const request = (seed: number) => ({ promptIds: ids, maxTokens: 6, temperature: 0.9, seed, repetitionPenalty: 1, ignoreEos: true, logits: true });
    let alone: GenerationResult[] = [];
    before(async () => {
      const one = await loadModel(path, { engine: on, target: 'host', ctx: CTX, prefillChunk: 16, parallel: 1 });
      try {
        alone = [await one.complete(request(7)), await one.complete(request(8)), await one.complete(request(9))];
      } finally {
        await one.close();
      }
      // The seeds give different answers, so an answer taken from another choice would show.
      expect(new Set(alone.map((r) => r.ids.join(','))).size).to.equal(3);
    });

    it('running at once: one prefill for three, each the bytes of its request alone', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, prefillChunk: 16, kvBudget: true });
      try {
        const prefills = countPrefills(model);
        const share = new PromptShare();
        const got = await Promise.all([7, 8, 9].map((seed) => model.complete(request(seed), { share })));
        got.forEach((g, j) => expect(sameRun(g, alone[j]!), `choice ${j}`).to.equal(true));
        expect(prefills.n, 'prefill steps').to.equal(3);
        expect(share).to.include({ prefills: 1, reuses: 2 });
        expect(got.map((g) => g.sharedTokens ?? 0).sort()).to.deep.equal([0, 40, 40]);
        expect(model.kvUse()).to.include({ reserved: 0 });
      } finally {
        await model.close();
      }
    });

    it('one after another (as a stream sends them): one prefill, the same bytes; negative control: no share prefills each', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, prefillChunk: 16 });
      try {
        const prefills = countPrefills(model);
        const share = new PromptShare();
        const got: GenerationResult[] = [];
        for (const seed of [7, 8]) got.push(await model.complete(request(seed), { share }));
        got.forEach((g, j) => expect(sameRun(g, alone[j]!), `choice ${j}`).to.equal(true));
        expect(prefills.n, 'prefill steps with a share').to.equal(3);
        prefills.n = 0;
        for (const seed of [7, 8]) await model.complete(request(seed));
        expect(prefills.n, 'prefill steps without one').to.equal(6);
        // A share is for one prompt: another prompt given it prefills its own.
        const other = await model.complete({ ...request(7), promptIds: prompt(40, 6) }, { share });
        expect(other.sharedTokens ?? 0).to.equal(0);
        expect(prefills.n).to.equal(9);
        // Negative control: the answer is made from the copy. The other prompt's prefill given as this
        // prompt's gives other bytes than this request alone.
        const theirs = new PromptShare();
        await model.complete({ ...request(7), promptIds: prompt(40, 6) }, { share: theirs });
        const { shared } = await theirs.take(prompt(40, 6));
        const forged = new PromptShare();
        await forged.take(ids);
        forged.give({ ...shared!, ids });
        const wrong = await model.complete(request(8), { share: forged });
        expect(wrong.sharedTokens).to.equal(40);
        expect(sameRun(wrong, alone[1]!)).to.equal(false);
      } finally {
        await model.close();
      }
    });
  });
});
