/**
 * The prefix cache (src/model/qwen3/prefix.ts) on host: a prompt that starts with a prefix an earlier
 * generation filled starts from those positions and prefills only the rest, and its tokens and logits
 * are the bytes of a cold run (the model with no prefix cache), whatever the prompt's length and
 * where the cut falls against the prefill chunks: in the q8 class (batch-invariant: cut at any block,
 * decode-filled positions kept too) and in the exact class (cut only where a cold prefill starts a
 * chunk). The controls: positions loaded one off, and the exact class cut at a block inside a chunk,
 * give other bytes.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import { generateIds, type GenerationContext, type GenerationResult } from '../../../src/model/qwen3/generate.js';
import { PrefixCache, type PrefixCut } from '../../../src/model/qwen3/prefix.js';
import { InvalidOptions } from '../../../src/errors/index.js';
import { modelFixture, SMALL } from './helpers.js';

const BASE = Array.from({ length: 120 }, (_, i) => (i * 97 + 13) % 300);
const OTHER = Array.from({ length: 40 }, (_, i) => (i * 31 + 7) % 300);
const CHUNK = 32;
const BLOCK = 8;

interface Run { readonly ids: number[]; readonly logits: Float64Array[]; readonly cached: number }

describe('qwen3 on host: the prefix cache gives the bytes of a cold run', function () {
  this.timeout(300_000);
  const fx = modelFixture();
  const engines: Engine[] = [];
  const models: Qwen3Model[] = [];
  after(async () => {
    for (const m of models) await m.close();
    for (const e of engines) await e.close();
  });

  // One engine per matmul class and one file per type, shared by the tests (each model is its own, with its own caches).
  const engineOf = new Map<string, Engine>();
  const files = new Map<string, string>();
  async function model(matmul: 'q8' | 'exact', prefixCache: false | { bytes: number; block: number } = { bytes: 1 << 30, block: BLOCK }, cacheType: 'f32' | 'f16' = 'f32'): Promise<Qwen3Model> {
    let e = engineOf.get(matmul);
    if (e === undefined) {
      e = createEngine({ cacheDir: join(fx.dir(), `cache-${matmul}`), devices: { host: { matmul } } });
      engineOf.set(matmul, e);
      engines.push(e);
    }
    // The exact class on Q8_0 weights, whose matmul sums in another order below 12 rows than from 12 (docs/HOST.md).
    const type = matmul === 'q8' ? 'Q4_0' : 'Q8_0';
    if (!files.has(type)) files.set(type, fx.gguf(`${type}.gguf`, { ...SMALL, type }));
    const m = await loadModel(files.get(type)!, { engine: e, target: 'host', ctx: 256, prefillChunk: CHUNK, prefixCache, cacheType });
    models.push(m);
    return m;
  }

  // A generation context of `m` with this prefix cache (a test's own, to set its cut).
  function contextOf(m: Qwen3Model, cache: PrefixCache | undefined): GenerationContext {
    return {
      config: m.config, ctx: m.ctx, cacheType: m.cacheType, prefillChunk: m.fittingChunk(), tokenizer: m.tokenizer, eosIds: m.eosIds,
      runner: m.runner, program: (n) => (n > 1 ? m.prefillProgram(n) : m.program(n)), ...(cache !== undefined ? { prefixCache: cache } : {}),
    };
  }
  function cacheOf(m: Qwen3Model, cut: PrefixCut, bytes = 1 << 30): PrefixCache {
    const own = m.prefixCache!;
    return new PrefixCache(bytes, BLOCK, cut, m.fittingChunk(), own.axes, own.positionBytes);
  }

  async function run(g: GenerationContext, promptIds: readonly number[], maxTokens = 4): Promise<Run> {
    const it = generateIds(g, { promptIds, maxTokens, repetitionPenalty: 1, ignoreEos: true, logits: true });
    let n = await it.next();
    while (n.done !== true) n = await it.next();
    const r: GenerationResult = n.value;
    return { ids: r.ids, logits: r.logits!.map((t) => Float64Array.from(t.data)), cached: r.cachedTokens ?? 0 };
  }
  const same = (a: Run, b: Run): boolean => a.ids.join() === b.ids.join() && a.logits.length === b.logits.length
    && a.logits.every((x, i) => x.length === b.logits[i]!.length && x.every((v, j) => Object.is(v, b.logits[i]![j])));

  // Prompts that share prefixes of many lengths with BASE, across the chunks (32) and the blocks (8).
  const PROMPTS = [
    BASE.slice(0, 100),
    BASE.slice(0, 101),
    [...BASE.slice(0, 33), ...OTHER],
    [...BASE.slice(0, 64), ...OTHER.slice(0, 1)],
    [...BASE.slice(0, 65), ...OTHER.slice(0, 30)],
    BASE.slice(0, 9),
    BASE,
  ];

  it('q8 class (cut at any block): every prompt gives the cold bytes, from a cached prefix', async () => {
    const m = await model('q8', { bytes: 1 << 30, block: BLOCK });
    expect(m.prefixCache!.cut).to.equal('block');
    const cold = contextOf(m, undefined);
    const warm = contextOf(m, cacheOf(m, 'block'));
    await run(warm, BASE.slice(0, 89));
    for (const p of PROMPTS) {
      const w = await run(warm, p);
      expect(w.cached, `${p.length} tokens`).to.be.greaterThan(0);
      expect(w.cached % BLOCK).to.equal(0);
      expect(w.cached).to.be.lessThan(p.length);
      expect(same(w, await run(cold, p)), `prompt of ${p.length} from ${w.cached}`).to.equal(true);
    }
  });

  it('an f16 KV cache: its positions are kept as f16 (half the bytes), and every prompt gives the cold bytes', async () => {
    const m = await model('q8', { bytes: 1 << 30, block: BLOCK }, 'f16');
    const f32 = await model('q8');
    expect(m.prefixCache!.positionBytes * 2).to.equal(f32.prefixCache!.positionBytes);
    const cold = contextOf(m, undefined);
    const warm = contextOf(m, cacheOf(m, 'block'));
    await run(warm, BASE.slice(0, 90));
    for (const p of PROMPTS.slice(0, 4)) {
      const w = await run(warm, p);
      expect(w.cached, `${p.length} tokens`).to.be.greaterThan(0);
      expect(same(w, await run(cold, p)), `prompt of ${p.length} from ${w.cached}`).to.equal(true);
    }
  });

  it('q8 class: positions filled by decode steps are kept, and a longer conversation starts past them', async () => {
    const m = await model('q8');
    const g = contextOf(m, cacheOf(m, 'block'));
    const first = await run(g, BASE.slice(0, 40), 20);
    const next = [...BASE.slice(0, 40), ...first.ids, ...OTHER.slice(0, 5)];
    const w = await run(g, next);
    // 40 prompt positions and 19 decoded ones were filled: 56 of them in whole blocks.
    expect(w.cached).to.equal(56);
    expect(same(w, await run(contextOf(m, undefined), next))).to.equal(true);
  });

  it('exact class (cut where a cold prefill starts a chunk): every prompt gives the cold bytes', async () => {
    const m = await model('exact', { bytes: 1 << 30, block: BLOCK });
    expect(m.prefixCache!.cut).to.equal('chunk');
    const cold = contextOf(m, undefined);
    const warm = contextOf(m, cacheOf(m, 'chunk'));
    await run(warm, BASE);
    for (const p of PROMPTS) {
      const w = await run(warm, p);
      expect(w.cached % CHUNK, `${p.length} tokens`).to.equal(0);
      if (p.length > CHUNK) expect(w.cached).to.be.greaterThan(0);
      expect(same(w, await run(cold, p)), `prompt of ${p.length} from ${w.cached}`).to.equal(true);
    }
  });

  it('negative control: positions loaded one position off give other bytes', async () => {
    const m = await model('q8');
    const cache = cacheOf(m, 'block');
    const g = contextOf(m, cache);
    await run(g, BASE);
    const lookup = cache.lookup.bind(cache);
    cache.lookup = (ids) => {
      const hit = lookup(ids);
      return { positions: hit.positions, pieces: hit.pieces.map((p) => ({ ...p, from: p.from + 1 })) };
    };
    const w = await run(g, BASE.slice(0, 100));
    expect(w.cached).to.equal(96);
    expect(same(w, await run(contextOf(m, undefined), BASE.slice(0, 100)))).to.equal(false);
  });

  it('negative control: the exact class cut at a block inside a chunk gives other bytes', async () => {
    const m = await model('exact');
    const g = contextOf(m, cacheOf(m, 'block'));
    await run(g, BASE);
    // Cut at 88, inside the cold run's chunk [64, 89): the last token runs in a decode step of its own.
    const w = await run(g, BASE.slice(0, 89));
    expect(w.cached).to.equal(88);
    expect(same(w, await run(contextOf(m, undefined), BASE.slice(0, 89)))).to.equal(false);
  });

  it('counts its hits and reused tokens, holds whole blocks within its budget, and lets the least recently used go', async () => {
    const m = await model('q8', { bytes: 1 << 30, block: BLOCK });
    const blockBytes = m.prefixCache!.blockBytes;
    // 4 blocks of room.
    const cache = cacheOf(m, 'block', 4 * blockBytes);
    const g = contextOf(m, cache);
    await run(g, BASE.slice(0, 30), 1);
    let s = cache.stats();
    expect(s).to.include({ lookups: 1, hits: 0, reusedTokens: 0, blocks: 3, bytes: 3 * blockBytes });
    const again = await run(g, BASE.slice(0, 30), 1);
    expect(again.cached).to.equal(24);
    s = cache.stats();
    expect(s).to.include({ lookups: 2, hits: 1, promptTokens: 60, reusedTokens: 24, blocks: 3 });
    // Another prompt's blocks: room for 4 at most, the first prompt's least recently used let go.
    await run(g, OTHER.slice(0, 35), 1);
    s = cache.stats();
    expect(s.blocks).to.equal(4);
    expect(s.bytes).to.equal(4 * blockBytes);
    expect(s.evicted).to.equal(3);
    expect((await run(g, OTHER.slice(0, 35), 1)).cached).to.equal(32);
    expect((await run(g, BASE.slice(0, 30), 1)).cached).to.equal(0);
  });

  it('the model\'s own cache: a repeated request reuses its prompt with the same answer; prefixCache: false keeps none', async () => {
    const m = await model('q8', { bytes: 1 << 30, block: 64 });
    const r1 = await m.complete({ promptIds: BASE, maxTokens: 3, ignoreEos: true });
    const r2 = await m.complete({ promptIds: BASE, maxTokens: 3, ignoreEos: true });
    expect(r1.cachedTokens).to.equal(0);
    expect(r2.cachedTokens).to.equal(64);
    expect(r2.ids).to.deep.equal(r1.ids);
    expect(m.prefixCache!.stats()).to.include({ hits: 1, blocks: 1, bytes: 64 * m.prefixCache!.positionBytes });
    const off = await model('q8', false);
    expect(off.prefixCache).to.equal(undefined);
    await off.complete({ promptIds: BASE, maxTokens: 1 });
    expect((await off.complete({ promptIds: BASE, maxTokens: 1 })).cachedTokens).to.equal(0);
    const bad = await loadModel(fx.gguf('bad.gguf', { ...SMALL, type: 'Q4_0' }), { target: 'host', prefixCache: { bytes: -1 } }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(InvalidOptions);
    expect((bad as InvalidOptions).message).to.match(/prefixCache\/bytes/);
  });
});
