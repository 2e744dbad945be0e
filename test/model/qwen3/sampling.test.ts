/** The sampler's OpenAI options: presence and frequency penalties over generated ids, logit bias, min_p; log probabilities. */
import { expect } from 'chai';
import { InvalidOptions } from '../../../src/errors/index.js';
import { logprobsOf } from '../../../src/model/qwen3/generate.js';
import { penalize, Sampler } from '../../../src/model/qwen3/sampler.js';

const plain = { repetitionPenalty: 1 } as const;

describe('qwen3 decoding: the OpenAI sampling options', () => {
  it('presence and frequency penalties count the generated ids only, as OpenAI defines them', () => {
    const l = [0, 1.5, 1];
    // The prompt (ids before generatedFrom) is not counted: three 1s in the prompt leave 1 on top.
    expect(new Sampler({ ...plain, presencePenalty: 1 }).next(l, [1, 1, 1], 3)).to.equal(1);
    // Generated once: 1.5 - 1 < 1.
    expect(new Sampler({ ...plain, presencePenalty: 1 }).next(l, [1, 1, 1, 1], 3)).to.equal(2);
    // Frequency: twice 0.3 is 0.6 (1.5 - 0.6 < 1); twice 0.2 is 0.4 (1.1 > 1).
    expect(new Sampler({ ...plain, frequencyPenalty: 0.3 }).next(l, [1, 1], 0)).to.equal(2);
    expect(new Sampler({ ...plain, frequencyPenalty: 0.2 }).next(l, [1, 1], 0)).to.equal(1);
    // A negative penalty favours the repeated id.
    expect(new Sampler({ ...plain, presencePenalty: -1 }).next([0, 1, 1.5], [1], 0)).to.equal(1);
  });

  it('logit bias is added to the logits: +100 forces an id, -100 forbids it, also when sampling', () => {
    const l = [3, 1, 0, -2];
    expect(new Sampler({ ...plain, logitBias: { 3: 100 } }).next(l, [])).to.equal(3);
    expect(new Sampler({ ...plain, logitBias: { 0: -100 } }).next(l, [])).to.equal(1);
    for (let seed = 0; seed < 50; seed++) {
      expect(new Sampler({ temperature: 2, seed, logitBias: { 2: 100 } }).next(l, [])).to.equal(2);
      expect(new Sampler({ temperature: 2, seed, logitBias: { 0: -100, 1: -100 } }).next(l, [])).to.be.oneOf([2, 3]);
    }
    expect(() => new Sampler({ logitBias: { 1: 101 } })).to.throw(InvalidOptions).with.property('field', 'logitBias/1');
  });

  it('min_p keeps the ids at least that fraction as likely as the most likely one', () => {
    // Probabilities at temperature 1: e^0 : e^-1 : e^-3 = 1 : 0.37 : 0.05.
    const l = [0, -1, -3];
    const drawn = new Set<number>();
    for (let seed = 0; seed < 300; seed++) drawn.add(new Sampler({ temperature: 1, seed, minP: 0.2 }).next(l, []));
    expect([...drawn].sort()).to.deep.equal([0, 1]);
    // Negative control: without min_p the third id is drawn too.
    const all = new Set<number>();
    for (let seed = 0; seed < 300; seed++) all.add(new Sampler({ temperature: 1, seed }).next(l, []));
    expect([...all].sort()).to.deep.equal([0, 1, 2]);
  });

  it('log probabilities are the log-softmax, the top ones highest first', () => {
    const l = [1, 3, 2, 3];
    const p = logprobsOf(null, l, 2, 3);
    const norm = Math.log(Math.exp(1) + 2 * Math.exp(3) + Math.exp(2));
    expect(p.logprob).to.be.closeTo(2 - norm, 1e-12);
    expect(p.top.map((t) => t.id)).to.deep.equal([1, 3, 2]);
    expect(p.top[0]!.logprob).to.be.closeTo(3 - norm, 1e-12);
    expect(logprobsOf(null, l, 0, 0).top).to.deep.equal([]);
  });

  it('one sampler over many steps chooses as a fresh sampler does at each step (its kept array carries nothing over)', () => {
    // Step 1 puts a large logit at id 0; step 2's own logits put id 2 on top.
    const steps: [number[], number[]][] = [[[5, 0, 0], []], [[0, 1, 2], [0]], [[0, 3, 2.9], [0, 2]], [[1, 1, 1], [0, 2, 1]]];
    for (const o of [{ repetitionPenalty: 1.1 }, { repetitionPenalty: 1.3, logitBias: { 1: 0.5 } }, { repetitionPenalty: 1.1, presencePenalty: 0.5 }]) {
      const kept = new Sampler(o);
      for (const [l, history] of steps) {
        const fresh = new Sampler(o);
        expect(kept.next(l, history)).to.equal(fresh.next(l, history));
        expect([...(kept.last as Float64Array)]).to.deep.equal([...(fresh.last as Float64Array)]);
      }
    }
    // penalize into a used array gives the fresh copy's values...
    const used = Float64Array.from([5 / 1.1, 0, 0]);
    expect([...penalize([0, 1, 2], [0], 1.1, 64, used)]).to.deep.equal([...penalize([0, 1, 2], [0], 1.1, 64)]);
    // ...where the old contents, had they stayed (the penalty applied over them), would have chosen id 0: a check that can fail.
    const stale = Float64Array.from([5, 0, 0]);
    stale[0] = stale[0]! / 1.1;
    expect(stale.indexOf(Math.max(...stale))).to.equal(0);
    // A wrong length is not written into: a new array.
    const short = new Float64Array(2);
    expect(penalize([0, 1, 2], [], 1.1, 64, short)).to.not.equal(short);
  });
});
