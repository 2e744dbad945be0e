/**
 * The sampler's edges (issue 27 item 11): which ids top_k, top_p and min_p keep when a bound is met
 * exactly or logits tie at the cut, and what the penalties take off. Each case is built so that the
 * answer is known by hand: equal logits weigh exactly 1 each, so "top_p 0.5 of four" is exactly two ids.
 * The ids drawn over many seeded draws are the candidates kept (a high temperature makes every kept id
 * likely enough to show). No model: tiny logit vectors only.
 */
import { expect } from 'chai';
import { InvalidOptions } from '../../../src/errors/index.js';
import { Sampler, type SamplingOptions } from '../../../src/model/qwen3/sampler.js';

/** The set of ids drawn from `logits` in `n` draws of one seeded sampler (no penalty, no history). */
function drawn(logits: number[], o: SamplingOptions, n = 400): number[] {
  const s = new Sampler({ repetitionPenalty: 1, seed: 7, ...o });
  const l = Float64Array.from(logits);
  const seen = new Set<number>();
  for (let i = 0; i < n; i++) seen.add(s.next(l, []));
  return [...seen].sort((a, b) => a - b);
}

describe('sampler slips: the edges of top_k, top_p and min_p', () => {
  it('top_k keeps exactly k ids, the lower ids among a tie at the cut', () => {
    expect(drawn([5, 4, 3, 2, 1, 0], { temperature: 100, topK: 3 })).to.deep.equal([0, 1, 2]);
    expect(drawn([1, 1, 1, 1, 0], { temperature: 100, topK: 2 })).to.deep.equal([0, 1]);
    // Negative control: without top_k every id turns up.
    expect(drawn([5, 4, 3, 2, 1, 0], { temperature: 100 })).to.deep.equal([0, 1, 2, 3, 4, 5]);
  });

  it('top_p stops at the first id whose weight reaches p of the total exactly', () => {
    // Four equal weights: p 0.5 is reached exactly after two, p 0.51 needs a third.
    expect(drawn([0, 0, 0, 0], { temperature: 1, topP: 0.5 })).to.deep.equal([0, 1]);
    expect(drawn([0, 0, 0, 0], { temperature: 1, topP: 0.51 })).to.deep.equal([0, 1, 2]);
    expect(drawn([0, 0, 0, 0], { temperature: 1, topP: 0.5, topK: 4 })).to.deep.equal([0, 1]);
  });

  it('min_p keeps an id exactly at the floor, drops one below it', () => {
    expect(drawn([0, 0, 0, -1], { temperature: 1, minP: 1 })).to.deep.equal([0, 1, 2]);
    expect(drawn([0, 0, -1, -1], { temperature: 1, minP: 0.5 })).to.deep.equal([0, 1]);
  });

  it('refuses top_p 0 and min_p above 1, naming the field', () => {
    expect(() => new Sampler({ topP: 0 })).to.throw(InvalidOptions, 'topP');
    expect(() => new Sampler({ minP: 1.5 })).to.throw(InvalidOptions, 'minP');
    expect(() => new Sampler({ topP: 1, minP: 1 })).to.not.throw();
  });
});

describe('sampler slips: penalties', () => {
  const greedy = (logits: number[], o: SamplingOptions, history: number[]): number =>
    new Sampler({ repetitionPenalty: 1, ...o }).next(Float64Array.from(logits), history, 0);

  it('the repetition penalty makes a negative logit more negative', () => {
    // id 0 at -1 seen: -2 under penalty 2, below id 1's -1.5.
    expect(greedy([-1, -1.5], { repetitionPenalty: 2 }, [0])).to.equal(1);
    expect(greedy([-1, -1.5], { repetitionPenalty: 2 }, [])).to.equal(0);
  });

  it('the presence penalty is taken once however often an id came, the frequency penalty per time', () => {
    // id 0 came 3 times: presence 1 takes 1 (3 - 1 = 2 > 1.5); frequency 1 takes 3 (0 < 1.5).
    expect(greedy([3, 1.5], { presencePenalty: 1 }, [0, 0, 0])).to.equal(0);
    expect(greedy([3, 1.5], { frequencyPenalty: 1 }, [0, 0, 0])).to.equal(1);
  });
});
