import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel, type Qwen3Model } from '../../src/model/qwen3/model.js';
import { logProbability } from '../../src/model/qwen3/score.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import { loadTokenizer } from '../../src/model/tokenizer/load.js';
import { cliHere } from './inProcess.js';

interface ScoreDoc { logits: number[][]; logprobs: number[]; perplexity: number }

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

describe('cli: score', function () {
  this.timeout(180_000);
  let dir = '';
  let gguf = '';
  let engine: Engine;
  let model: Qwen3Model;
  const run = (...args: string[]) => cliHere(args, { env: { NPU_OFFLOAD_CACHE_DIR: join(dir, 'cache') } });
  // 12 ids of the tiny model's vocabulary (320).
  const IDS = [104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 300];
  // `score --ids IDS --ctx 32 --json`, run once and read by the tests that check its document (each its own part).
  let scored: ReturnType<typeof run> | undefined;
  const scoreJson = () => (scored ??= run('score', gguf, '--ids', IDS.join(','), '--ctx', '32', '--json'));
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'score-cli-'));
    gguf = join(dir, 'm.gguf');
    writeFileSync(gguf, tinyQwen3Gguf({ layers: 2, std: 0.05, seed: 3, type: 'Q8_0' }));
    // The class the CLI's model runs in on host (q8 activations), so its numbers and these are the same computation.
    engine = createEngine({ cacheDir: join(dir, 'cache'), devices: { host: { matmul: 'q8' } } });
    model = await loadModel(gguf, { engine, ctx: 32, target: 'host' });
  });
  after(async () => {
    await model.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--json: one logits row per position, the log-probabilities of ids[1..] under them, and their perplexity', async () => {
    const r = await scoreJson();
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as ScoreDoc;
    expect(Object.keys(doc)).to.deep.equal(['logits', 'logprobs', 'perplexity']);
    expect(doc.logits).to.have.length(IDS.length);
    for (const row of doc.logits) expect(row).to.have.length(320);
    expect(doc.logprobs).to.have.length(IDS.length - 1);
    doc.logprobs.forEach((lp, t) => {
      expect(lp).to.be.below(0);
      expect(lp, `position ${t}`).to.be.closeTo(logProbability(doc.logits[t]!, IDS[t + 1]!), 1e-9);
    });
    const fromLogits = Math.exp(-IDS.slice(1).reduce((s, id, t) => s + logProbability(doc.logits[t]!, id), 0) / (IDS.length - 1));
    expect(doc.perplexity).to.be.closeTo(fromLogits, 1e-9 * fromLogits);
    // Negative control: the ids scored one place off give another perplexity.
    const shifted = Math.exp(-IDS.slice(2).reduce((s, id, t) => s + logProbability(doc.logits[t]!, id), 0) / (IDS.length - 2));
    expect(Math.abs(shifted - doc.perplexity)).to.be.above(1e-3);
  });

  it('row t is the model\'s logits after ids[0..t], as complete() gives them; not those after one id more', async () => {
    const doc = JSON.parse((await scoreJson()).out) as ScoreDoc;
    const lib = await model.score(IDS);
    for (const t of [0, 3, 7, IDS.length - 1]) {
      const after = await model.complete({ promptIds: IDS.slice(0, t + 1), maxTokens: 1, logits: true, repetitionPenalty: 1, ignoreEos: true });
      const want = after.logits![0]!.data;
      const scale = Math.max(...Array.from(want, Math.abs));
      expect(maxDiff(doc.logits[t]!, want), `row ${t} against complete()`).to.be.at.most(1e-3 * scale);
      expect(maxDiff(lib.logits[t]!, doc.logits[t]!), `row ${t}: model.score and the CLI`).to.equal(0);
      if (t + 1 < IDS.length) expect(maxDiff(doc.logits[t + 1]!, want), `row ${t + 1} is not after ids[0..${t}]`).to.be.above(1e-2 * scale);
    }
  });

  it('without --json, a one-line summary with the perplexity', async () => {
    const json = JSON.parse((await scoreJson()).out) as ScoreDoc;
    const r = await run('score', gguf, '--ids', IDS.join(','), '--ctx', '32');
    expect(r.status, r.err).to.equal(0);
    expect(r.out.trim()).to.equal(`12 ids, 11 scored: perplexity ${json.perplexity.toFixed(4)}, mean log-probability ${(json.logprobs.reduce((s, x) => s + x, 0) / 11).toFixed(4)} (engine:host)`);
  });

  it('--text scores windows of --ctx as llama-perplexity does: the second half of each, the rest dropped', async () => {
    const text = 'the cat sat on the mat and the dog sat on the log; '.repeat(4);
    const file = join(dir, 'text.txt');
    writeFileSync(file, text);
    const window = 16;
    const r = await run('score', gguf, '--text', file, '--ctx', String(window), '--json');
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as { logprobs: number[]; perplexity: number; tokens: number; windows: number; window: number };
    const tokens = loadTokenizer(gguf).encode(text);
    expect(doc.tokens).to.equal(tokens.length);
    expect(doc.windows).to.equal(Math.floor(tokens.length / window));
    expect(doc.window).to.equal(window);
    const first = window / 2;
    expect(doc.logprobs).to.have.length(doc.windows * (window - 1 - first));
    // Each window's counted log-probabilities are its own scoring's, from position ctx/2 on.
    const want: number[] = [];
    const firstHalf: number[] = [];
    for (let w = 0; w < doc.windows; w++) {
      const s = await model.score(tokens.slice(w * window, (w + 1) * window));
      want.push(...s.logprobs.slice(first, window - 1));
      firstHalf.push(...s.logprobs.slice(0, window - 1 - first));
    }
    expect(maxDiff(doc.logprobs, want)).to.be.at.most(1e-6);
    expect(doc.perplexity).to.be.closeTo(Math.exp(-want.reduce((s, x) => s + x, 0) / want.length), 1e-6);
    // Negative control: the first halves are other numbers.
    expect(maxDiff(doc.logprobs, firstHalf)).to.be.above(1e-3);
    const shortFile = join(dir, 'short.txt');
    writeFileSync(shortFile, 'the cat sat on the mat');
    const short = await run('score', gguf, '--text', shortFile, '--ctx', '16');
    expect(short.status).to.not.equal(0);
    expect(short.err).to.match(/--text.*tokens: scoring in windows of 16 needs at least 32/);
  });

  it('bad input is a typed error naming the flag: not whole ids, ids outside the vocabulary, fewer than 2, more than --ctx', async () => {
    const cases: [string[], RegExp][] = [
      [['--ids', '1,x,3'], /--ids takes whole token ids .*"x" is not one/],
      [['--ids', '1,2.5'], /--ids takes whole token ids .*"2\.5" is not one/],
      [['--ids', '1,320'], /--ids\/1.*token id 320 is outside the vocabulary \(0 to 319\)/],
      [['--ids', '1,-2'], /--ids\/1.*token id -2 is outside the vocabulary/],
      [['--ids', '7'], /--ids.*1 ids: scoring needs at least 2/],
      [['--ids', Array.from({ length: 33 }, (_, i) => i).join(',')], /--ids.*context 33 is past the limit 32/],
      [[], /--ids.*give exactly one of --ids and --text/],
      [['--ids', '1,2', '--text', gguf], /--ids.*give exactly one of --ids and --text/],
    ];
    for (const [args, re] of cases) {
      const r = await run('score', gguf, ...args, '--ctx', '32');
      expect(r.status, args.join(' ')).to.not.equal(0);
      expect(r.err, args.join(' ')).to.match(re);
    }
    // The positive control of the same shapes: 2 ids and 32 ids are fine.
    expect((await run('score', gguf, '--ids', '1,319', '--ctx', '32')).status).to.equal(0);
    expect((await run('score', gguf, '--ids', Array.from({ length: 32 }, (_, i) => i).join(','), '--ctx', '32')).status).to.equal(0);
  });
});
