/**
 * Decoding several sequences in one step (program.ts, ProgramShape.sequences; batch.ts): each row of a
 * batch step is bit-identical to the same sequence decoded alone by the single decode program, on host
 * (q8 class and exact) and on the fp64 reference; a row that reads a neighbour's cache or position does
 * not match (the negative controls). Then the model's scheduler: four concurrent greedy generations of
 * different prompt lengths, joining at different steps, each give the bytes they give alone.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { programToJson } from '../../../src/ir/codec.js';
import type { Tensor } from '../../../src/ir/tensor.js';
import type { TensorMap } from '../../../src/ir/values.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import { prefillTokens, zeroCache } from '../../../src/model/qwen3/generate.js';
import { Aborted, InvalidOptions } from '../../../src/errors/index.js';
import { buildProgram, cacheShapes, slotStateName, stepActivations } from '../../../src/model/qwen3/program.js';
import { weightInputs, type StepRunner } from '../../../src/model/qwen3/runner.js';
import type { GenerationResult } from '../../../src/model/qwen3/generate.js';
import { modelFixture, SMALL } from './helpers.js';

const CTX = 64;
const SEQS = 4;
const STEPS = 4;
// Four prompts of different lengths (so different positions in one step).
const PROMPTS = [5, 11, 2, 17].map((n, s) => Array.from({ length: n }, (_, i) => (i * 97 + 13 + 31 * s) % 300));

const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean => a.length === b.length && Array.from(a).every((v, i) => Object.is(v, b[i]));

/** Each prompt alone, greedy: its ids and every step's logits. */
async function alone(model: Qwen3Model): Promise<GenerationResult[]> {
  const out: GenerationResult[] = [];
  for (const promptIds of PROMPTS) out.push(await model.complete({ promptIds, maxTokens: STEPS + 1, repetitionPenalty: 1, ignoreEos: true, logits: true }));
  return out;
}

/** Each prompt's cache after its prefill (one step of a prefill program from a zeroed cache), as tensors. */
async function prefilled(model: Qwen3Model, runner: StepRunner): Promise<TensorMap[]> {
  const out: TensorMap[] = [];
  for (const ids of PROMPTS) {
    const r = await runner.step(model.prefillProgram(prefillTokens(ids.length, CTX, model.fittingChunk())), { ids, positions: ids.map((_, k) => k), state: zeroCache(model.config, CTX, model.cacheType) });
    out.push(r.state);
  }
  return out;
}

/** The caches as one state of a program of SEQS sequences, slot `s` holding `caches[order[s]]`. */
function slotted(model: Qwen3Model, caches: readonly TensorMap[], order: readonly number[]): Record<string, Tensor> {
  const m: Record<string, Tensor> = {};
  for (let s = 0; s < SEQS; s++) for (const name of cacheShapes(model.config, CTX).keys()) m[slotStateName(name, s)] = caches[order[s]!]![name]!;
  return m;
}

/**
 * Decodes the alone runs' tokens as batch steps (every row one sequence, at its own position): each
 * step's logits by row. `positions` picks each row's position source (the negative control's swap).
 */
type Rows = number[][][]; // [step][row][vocab]

describe('qwen3: several sequences decoded in one step', function () {
  this.timeout(300_000);
  const fx = modelFixture();
  const engines: Engine[] = [];
  after(async () => { for (const e of engines) await e.close(); });
  // One engine per matmul class for the tests that load a model and close it (the scheduler's has its own),
  // and one Q8_0 file for the tests that read the same one.
  const shared = new Map<string, Engine>();
  const engine = (matmul: 'q8' | 'exact', own = false): Engine => {
    const hit = own ? undefined : shared.get(matmul);
    if (hit !== undefined) return hit;
    const e = createEngine({ cacheDir: join(fx.dir(), `cache-${matmul}`), devices: { host: { matmul } } });
    engines.push(e);
    if (!own) shared.set(matmul, e);
    return e;
  };
  let q8File: string | undefined;
  const q8Gguf = (): string => (q8File ??= fx.gguf('q8.gguf', { ...SMALL, type: 'Q8_0' }));

  async function batchOnHost(model: Qwen3Model, on: Engine, caches: readonly TensorMap[], runs: readonly GenerationResult[], order: readonly number[], swapPositions = false): Promise<Rows> {
    const program = buildProgram(model.config, model.source.weights, { tokens: 1, ctx: CTX, sequences: SEQS, cacheType: model.cacheType });
    const session = await on.openSession({ program: programToJson(program), target: 'host', inputs: weightInputs(model.source.weights), zeroState: true });
    try {
      await session.loadState(slotted(model, caches, order));
      const rows: Rows = [];
      for (let j = 0; j < STEPS; j++) {
        const ids = order.map((q) => runs[q]!.ids[j]!);
        const positions = order.map((q) => PROMPTS[swapPositions ? order[(order.indexOf(q) + 1) % SEQS]! : q]!.length + j);
        const out = await session.step(stepActivations(program, ids, positions));
        const l = out.results['logits']!;
        expect(l.shape).to.deep.equal([SEQS, model.config.vocab]);
        rows.push(order.map((_, s) => Array.from(l.data.subarray(s * model.config.vocab, (s + 1) * model.config.vocab))));
      }
      return rows;
    } finally {
      await session.close();
    }
  }

  // Whether every row of every step equals the alone run's logits of the same sequence at the same step.
  const matches = (rows: Rows, runs: readonly GenerationResult[], order: readonly number[]): boolean =>
    rows.every((step, j) => step.every((row, s) => same(row, runs[order[s]!]!.logits![j + 1]!.data)));

  for (const [matmul, cacheType] of [['q8', 'f32'], ['exact', 'f32'], ['q8', 'f16']] as const) {
    it(`host, ${matmul} class, ${cacheType} cache: each row is bit-identical to its sequence decoded alone; a neighbour's cache or position is not`, async () => {
      const path = q8Gguf();
      const on = engine(matmul);
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 1, cacheType });
      try {
        const runs = await alone(model);
        // The greedy answers differ between the prompts, so a row given another's bits would show.
        expect(new Set(runs.map((r) => r.ids.join(','))).size).to.equal(SEQS);
        const caches = await prefilled(model, model.runner);
        const order = [2, 0, 3, 1];
        expect(matches(await batchOnHost(model, on, caches, runs, order), runs, order), 'rows vs alone').to.equal(true);
        // Negative controls: slots holding a neighbour's cache, and rows at a neighbour's position.
        const shifted = [0, 3, 1, 2];
        expect(matches(await batchOnHost(model, on, caches.map((_, i) => caches[(i + 1) % SEQS]!), runs, order), runs, order), 'neighbour cache').to.equal(false);
        expect(matches(await batchOnHost(model, on, caches, runs, shifted, true), runs, shifted), 'neighbour position').to.equal(false);
      } finally {
        await model.close();
      }
    });
  }

  it('fp64 reference: each row is bit-identical to its sequence decoded alone; a neighbour\'s position is not', async () => {
    const path = q8Gguf();
    const loaded = await loadModel(path, { engine: engine('q8'), target: 'host', ctx: CTX, parallel: 1 });
    try {
      const model = loaded.reference();
      const runs = await alone(model);
      const caches = await prefilled(model, model.runner);
      const program = buildProgram(model.config, model.source.weights, { tokens: 1, ctx: CTX, sequences: SEQS });
      const order = [1, 3, 0, 2];
      const decode = async (swap: boolean): Promise<Rows> => {
        let state: TensorMap = slotted(model, caches, order);
        const rows: Rows = [];
        for (let j = 0; j < STEPS; j++) {
          const ids = order.map((q) => runs[q]!.ids[j]!);
          const positions = order.map((q, s) => PROMPTS[swap ? order[(s + 1) % SEQS]! : q]!.length + j);
          const out = await model.runner.step(program, { ids, positions, state });
          state = out.state;
          rows.push(order.map((_, s) => Array.from(out.logits.data.subarray(s * model.config.vocab, (s + 1) * model.config.vocab))));
        }
        return rows;
      };
      expect(matches(await decode(false), runs, order), 'rows vs alone').to.equal(true);
      expect(matches(await decode(true), runs, order), 'neighbour position').to.equal(false);
    } finally {
      await loaded.close();
    }
  });

  it('refuses several sequences outside a fused decode program giving logits', async () => {
    const model = await loadModel(q8Gguf(), { engine: engine('q8'), target: 'host', ctx: CTX, parallel: 1 });
    try {
      for (const bad of [{ tokens: 2 }, { tokens: 1, form: 'plain' as const }, { tokens: 1, output: 'hidden' as const }, { tokens: 1, sequences: 0 }]) {
        expect(() => buildProgram(model.config, model.source.weights, { ctx: CTX, sequences: 2, ...bad }), JSON.stringify(bad)).to.throw(InvalidOptions).with.property('field', 'sequences');
      }
    } finally {
      await model.close();
    }
  });

  describe('the scheduler: generate calls running at once decode together', () => {
    // Five generations on four slots: different prompt lengths and lengths of answer, joining at different
    // steps (the fifth waits for the first slot freed).
    const MAX = [6, 7, 9, 5, 4];
    const prompts = [...PROMPTS, PROMPTS[1]!.slice(0, 7)];
    const request = (i: number) => ({ promptIds: prompts[i]!, maxTokens: MAX[i]!, repetitionPenalty: 1, ignoreEos: true, logits: true });
    let path = '';
    let on: Engine;
    let solo: GenerationResult[] = [];
    before(async () => {
      path = fx.gguf('sched.gguf', { ...SMALL, type: 'Q4_0' });
      on = engine('q8', true);
      const one = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 1 });
      try {
        solo = [];
        for (let i = 0; i < prompts.length; i++) solo.push(await one.complete(request(i)));
      } finally {
        await one.close();
      }
    });
    const sameRun = (a: GenerationResult, b: GenerationResult): boolean =>
      same(a.ids, b.ids) && a.text === b.text && a.logits!.length === b.logits!.length && a.logits!.every((l, j) => same(l.data, b.logits![j]!.data));

    it('each gives the bytes it gives alone (ids, text, every logit), the steps shared', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX });
      expect(model.parallel).to.equal(4);
      try {
        // A promise per generation and token count, resolved when it has yielded that many tokens.
        const waits = prompts.map(() => new Map<number, () => void>());
        const reached = (i: number, n: number) => new Promise<void>((r) => waits[i]!.set(n, r));
        let busiest = 0;
        const run = async (i: number, after: Promise<void>): Promise<GenerationResult> => {
          await after;
          const it = model.generate(request(i));
          let n = 0;
          for (;;) {
            const x = await it.next();
            if (x.done === true) return x.value;
            n++;
            busiest = Math.max(busiest, model.batchUse()?.busy ?? 0);
            waits[i]!.get(n)?.();
          }
        };
        const got = await Promise.all([
          run(0, Promise.resolve()), run(1, reached(0, 1)), run(2, reached(0, 2)), run(3, reached(1, 2)), run(4, reached(2, 1)),
        ]);
        got.forEach((g, i) => expect(sameRun(g, solo[i]!), `generation ${i}`).to.equal(true));
        // A kept row holds its own vocab of values, not the whole step's rows (a step's rows are views of one result).
        for (const g of got) for (const l of g.logits!) expect(l.data.buffer.byteLength, 'a kept row\'s bytes').to.equal(model.config.vocab * 8);
        // The answers differ from one another, so a row handed to the wrong generation would show.
        expect(new Set(solo.map((r) => r.ids.join(','))).size).to.equal(prompts.length);
        const use = model.batchUse()!;
        expect(busiest, 'slots held at once').to.equal(4);
        expect(use.busy).to.equal(0);
        // Every decode step a row of a batch step, but those the first ran alone, before the second joined.
        expect(use.rows + use.aloneSteps, 'decode rows').to.equal(MAX.reduce((a, b) => a + b - 1, 0));
        expect(use.steps, 'batch steps').to.be.below(use.rows);
      } finally {
        await model.close();
      }
    });

    it('four generations at once, then four more: the second four open no session (the first four\'s kept for them) and give the same bytes', async () => {
      // Sessions opened on the engine, counted (each is a new zeroed cache of its own).
      const opened = { n: 0 };
      const counting = new Proxy(on, { get: (t, k) => (k === 'openSession' ? (...a: Parameters<Engine['openSession']>) => { opened.n++; return t.openSession(...a); } : Reflect.get(t, k) as unknown) });
      const rounds = async (parallel: number): Promise<number> => {
        const model = await loadModel(path, { engine: counting, target: 'host', ctx: CTX, parallel });
        try {
          const first = await Promise.all([0, 1, 2, 3].map((i) => model.complete(request(i))));
          first.forEach((g, i) => expect(sameRun(g, solo[i]!), `first round, generation ${i}`).to.equal(true));
          const before = opened.n;
          const second = await Promise.all([0, 1, 2, 3].map((i) => model.complete(request(i))));
          second.forEach((g, i) => expect(sameRun(g, solo[i]!), `second round, generation ${i}`).to.equal(true));
          return opened.n - before;
        } finally {
          await model.close();
        }
      };
      expect(await rounds(4), 'sessions opened by the second round, parallel 4').to.equal(0);
      // Negative control: with 2 slots, 4 sessions are kept of the 8 that four generations give back, so
      // the second four open some anew.
      expect(await rounds(2), 'sessions opened by the second round, parallel 2').to.be.above(0);
    });

    it('a generation alone decodes by itself (no batch step pays for empty slots), its bytes the same; one joining moves it into the batch', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX });
      try {
        expect(sameRun(await model.complete(request(2)), solo[2]!), 'alone').to.equal(true);
        expect(model.batchUse()).to.include({ steps: 0, rows: 0, aloneSteps: MAX[2]! - 1, busy: 0 });
        // Two at once: the first alone until the second wants a slot, then both rows of batch steps.
        const first = model.generate(request(2));
        await first.next();
        await first.next();
        const both = await Promise.all([model.complete(request(0)), (async () => {
          for (;;) { const n = await first.next(); if (n.done === true) return n.value; }
        })()]);
        expect(sameRun(both[0], solo[0]!), 'the second').to.equal(true);
        expect(sameRun(both[1], solo[2]!), 'the first, moved into the batch').to.equal(true);
        const use = model.batchUse()!;
        expect(use.steps, 'batch steps').to.be.above(0);
        expect(use.rows + use.aloneSteps).to.equal(2 * (MAX[2]! - 1) + MAX[0]! - 1);
      } finally {
        await model.close();
      }
    });

    it('a generation whose consumer stops pulling does not hold up the batch; both keep their bytes', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 2 });
      try {
        const paused = model.generate(request(2));
        const first = [(await paused.next()).value, (await paused.next()).value] as { id: number }[];
        // While it holds its slot and asks for nothing, another runs to its end (steps run without it).
        expect(sameRun(await model.complete(request(0)), solo[0]!)).to.equal(true);
        const ids = first.map((t) => t.id);
        let end: GenerationResult;
        for (;;) {
          const n = await paused.next();
          if (n.done === true) { end = n.value; break; }
          ids.push(n.value.id);
        }
        expect(ids).to.deep.equal(solo[2]!.ids);
        expect(sameRun(end, solo[2]!), 'the paused one').to.equal(true);
      } finally {
        await model.close();
      }
    });

    it('a generation aborted while it waits for a slot leaves the line at once; those in the slots keep their bytes', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 2 });
      try {
        // Two generations hold both slots (their second token is a batch step's), their consumers paused then.
        const held = [model.generate(request(0)), model.generate(request(1))];
        const firsts = await Promise.all(held.map(async (g) => [(await g.next()).value, (await g.next()).value] as { id: number }[]));
        const stop = new AbortController();
        const third = model.generate(request(2), { signal: stop.signal });
        // Its first token comes from its prefill; its second needs a slot.
        await third.next();
        const waited = third.next();
        while (model.batchUse()!.waiting < 1) await new Promise((r) => setTimeout(r, 5));
        stop.abort();
        await waited.then(() => { throw new Error('not aborted'); }, (e: unknown) => expect(e).to.be.instanceOf(Aborted));
        expect(model.batchUse()).to.include({ waiting: 0, busy: 2 });
        for (const [k, g] of held.entries()) {
          const ids = firsts[k]!.map((t) => t.id);
          for (;;) {
            const n = await g.next();
            if (n.done === true) { expect(sameRun(n.value, solo[k]!), `generation ${k}`).to.equal(true); break; }
            ids.push(n.value.id);
          }
          expect(ids).to.deep.equal(solo[k]!.ids);
        }
      } finally {
        await model.close();
      }
    });

    it('an aborted generation frees its slot; the others keep their bytes, a later one runs', async () => {
      const model = await loadModel(path, { engine: on, target: 'host', ctx: CTX, parallel: 2 });
      try {
        const stop = new AbortController();
        const aborted = (async () => {
          const it = model.generate(request(2), { signal: stop.signal });
          await it.next();
          await it.next();
          stop.abort();
          return it.next();
        })();
        const other = model.complete(request(0));
        await aborted.then(() => { throw new Error('not aborted'); }, (e: unknown) => expect(e).to.be.instanceOf(Aborted));
        expect(sameRun(await other, solo[0]!)).to.equal(true);
        expect(sameRun(await model.complete(request(3)), solo[3]!), 'after the abort').to.equal(true);
        expect(model.batchUse()!.busy).to.equal(0);
      } finally {
        await model.close();
      }
    });
  });
});
