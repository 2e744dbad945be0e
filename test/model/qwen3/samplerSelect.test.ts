/**
 * The sampler's truncations without a sort of the vocabulary: top_k, top_p and min_p pick the same
 * token as the full sort by logit they replace (written out here as the reference), for the same draw,
 * on vocabularies of Qwen3's size with ties; plain temperature sampling draws each id at its probability.
 */
import { expect } from 'chai';
import { mulberry32 } from '../../../src/numerics/random.js';
import { Sampler, topIds } from '../../../src/model/qwen3/sampler.js';

/** The ids by logit, highest first (lower id first among equals): sorted once per logits array, which several draws share. */
const sorted = new WeakMap<Float64Array, number[]>();
function byLogit(l: Float64Array): number[] {
  let ids = sorted.get(l);
  if (ids === undefined) sorted.set(l, ids = Array.from(l.keys()).sort((a, b) => l[b]! - l[a]! || a - b));
  return ids;
}

/** The full sort the sampler did before: candidates by logit (lower id first among equals), then k, p, min_p. */
function reference(l: Float64Array, o: { temperature: number; topK: number; topP: number; minP: number }, u: number): number {
  let ids = byLogit(l);
  if (o.topK > 0) ids = ids.slice(0, o.topK);
  const top = l[ids[0]!]!;
  const w = ids.map((i) => Math.exp((l[i]! - top) / o.temperature));
  const total = w.reduce((s, x) => s + x, 0);
  if (o.topP < 1) {
    let acc = 0; let keep = 0;
    while (keep < ids.length && acc < o.topP * total) acc += w[keep++]!;
    ids = ids.slice(0, Math.max(1, keep)); w.length = ids.length;
  }
  if (o.minP > 0) {
    let keep = 1;
    while (keep < ids.length && w[keep]! >= o.minP * w[0]!) keep++;
    ids = ids.slice(0, keep); w.length = keep;
  }
  let r = u * w.reduce((s, x) => s + x, 0);
  for (let k = 0; k < ids.length; k++) { r -= w[k]!; if (r < 0) return ids[k]!; }
  return ids[ids.length - 1]!;
}

/** Logits like a model's: a few clear leaders over a long tail, rounded so that ties occur. */
function logits(n: number, seed: number, spread: number): Float64Array {
  const r = mulberry32(seed);
  const l = new Float64Array(n);
  for (let i = 0; i < n; i++) l[i] = Math.round((r() * r() * r()) * spread * 8) / 8;
  return l;
}

describe('qwen3 decoding: sampling truncations by selection', () => {
  it('topIds gives the m largest in sort order, ties by the lower id, for m across the vocabulary', () => {
    const l = logits(5000, 1, 20);
    const sorted = Array.from(l.keys()).sort((a, b) => l[b]! - l[a]! || a - b);
    for (const m of [1, 2, 63, 64, 65, 500, 4999, 5000, 9000]) expect(topIds(l, m), `m ${m}`).to.deep.equal(sorted.slice(0, m));
  });

  it('top_k, top_p and min_p pick the token the full sort picks, on a Qwen3-sized vocabulary', () => {
    const cases = [
      { temperature: 0.8, topK: 40, topP: 1, minP: 0 },
      { temperature: 0.7, topK: 0, topP: 0.9, minP: 0 },
      { temperature: 1, topK: 0, topP: 0.999, minP: 0 },
      { temperature: 1.3, topK: 20, topP: 0.95, minP: 0 },
      { temperature: 1, topK: 0, topP: 1, minP: 0.05 },
      { temperature: 2, topK: 0, topP: 1, minP: 0.001 },
      { temperature: 0.9, topK: 100, topP: 0.8, minP: 0.1 },
    ];
    let disagree = 0;
    for (const [c, o] of cases.entries()) {
      for (let seed = 0; seed < 4; seed++) {
        // A flat spread (the top_p prefix runs long) and a peaked one.
        const l = logits(151936, 100 * c + seed, seed % 2 === 0 ? 6 : 30);
        const s = new Sampler({ ...o, seed, repetitionPenalty: 1 });
        const u = mulberry32(seed)();
        if (s.next(l, []) !== reference(l, o, u)) disagree++;
      }
    }
    expect(disagree).to.equal(0);
  });

  it('a wrong truncation disagrees with the reference (negative control)', () => {
    const l = logits(151936, 7, 6);
    const o = { temperature: 1, topK: 0, topP: 0.9, minP: 0 };
    let differ = 0;
    for (let seed = 0; seed < 20; seed++) {
      const u = mulberry32(seed)();
      if (reference(l, { ...o, topP: 0.5 }, u) !== reference(l, o, u)) differ++;
      expect(new Sampler({ ...o, seed, repetitionPenalty: 1 }).next(l, [])).to.equal(reference(l, o, u));
    }
    expect(differ).to.be.greaterThan(0);
  });

  it('plain temperature sampling draws each id at its probability', () => {
    // Probabilities at temperature 1: 1 : e^-1 : e^-2 : e^-3 over their sum.
    const l = new Float64Array([0, -1, -2, -3]);
    const z = [0, -1, -2, -3].reduce((s, x) => s + Math.exp(x), 0);
    const counts = [0, 0, 0, 0];
    const draws = 4000;
    for (let seed = 0; seed < draws; seed++) counts[new Sampler({ temperature: 1, seed, repetitionPenalty: 1 }).next(l, [])]!++;
    for (let i = 0; i < 4; i++) {
      const p = Math.exp(-i) / z;
      // Five standard deviations of a binomial count: the seeds are fixed, so this is not a flaky bound.
      expect(Math.abs(counts[i]! - p * draws), `id ${i}`).to.be.below(5 * Math.sqrt(draws * p * (1 - p)));
    }
  });
});
