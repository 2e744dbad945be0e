/**
 * YaRN rope scaling (`<arch>.rope.scaling.type = yarn`) against llama.cpp (node-llama-cpp 3.21.1):
 * tiny random qwen3 (neox rope) and llama (normal rope) files declaring YaRN by a factor of 4 over an
 * original context of 256, with rope base 10000 so that YaRN's ramp spans frequencies 0 to 13 of 32
 * (ggml's correction dims), teacher-forced over 320 ids, so that 64 positions lie past the original
 * context. Every position's centered logits at cosine >= 0.999 (f32, f16; 0.99 quantized), the scale
 * within 1% (5%), llama.cpp's clear argmax, as test/model/arch/llamacpp.test.ts. The negative controls
 * run the F32 file with YaRN ignored (plain rope: it must fail at the positions past the original
 * context), with linear scaling for YaRN (neither ramp nor attention factor) and with YaRN's ramp alone
 * dropped (its attention factor kept). ARCH_DEBUG=1 prints the figures.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import type { GraphOptions } from '../../../src/model/arch/types.js';
import type { QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import { zeroCache } from '../../../src/model/qwen3/generate.js';
import { Qwen3Model } from '../../../src/model/qwen3/model.js';
import { openModelSource } from '../../../src/model/qwen3/source.js';
import type { TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import { tinyGgufBytes } from '../qwen3/helpers.js';
import { loadLlamaCpp, type Llama, centered } from '../../llamaCpp.js';
import { figures, llamaCppLogits, type Figures, type TheirLogits } from './compare.js';

const ORIG = 256;
const FACTOR = 4;
const CTX = 320;
/** 320 printable byte ids (a fixed LCG), so that the last 64 positions lie past the original context. */
const IDS = ((): number[] => {
  let s = 12345;
  return Array.from({ length: CTX }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return 32 + (s % 95);
  });
})();

const FILE: TinyQwen3Options = { yarn: FACTOR, yarnContext: ORIG, contextLength: ORIG * FACTOR, ropeTheta: 10_000 };
const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0'] as const satisfies readonly QuantType[];
const CONTROLS: readonly { what: string; flip: Partial<GraphOptions> }[] = [
  { what: 'YaRN ignored (plain rope)', flip: { ropeYarn: undefined, ropeFreqScale: 1 } },
  { what: 'linear scaling for YaRN', flip: { ropeYarn: undefined } },
  { what: 'YaRN\'s ramp dropped (its attention factor kept)', flip: { ropeYarn: { origContext: ORIG, betaFast: 32, betaSlow: 1, extFactor: 0 }, ropeAttnFactor: 1 + 0.1 * Math.log(FACTOR) } },
];


describe('YaRN rope scaling against llama.cpp (node-llama-cpp 3.21.1)', function () {
  this.timeout(600_000);
  let dir = '';
  let engine: Engine | undefined;
  let llama: Llama | undefined;
  const theirs = new Map<string, TheirLogits>();

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'yarn-'));
    llama = await loadLlamaCpp(this);
  });
  after(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const file = (arch: string, type: QuantType): string => {
    const path = join(dir, `${arch}-${type}.gguf`);
    writeFileSync(path, tinyGgufBytes({ arch, type, layers: 2, std: 0.05, seed: 3, ...FILE }));
    return path;
  };

  async function llamaCpp(path: string, vocab: number): Promise<TheirLogits> {
    const hit = theirs.get(path);
    if (hit !== undefined) return hit;
    const r = await llamaCppLogits(llama!, path, IDS, vocab, CTX + 64);
    theirs.set(path, r);
    return r;
  }

  async function ours(path: string, flip: Partial<GraphOptions>): Promise<{ logits: number[][]; vocab: number }> {
    const source = openModelSource(path);
    expect(source.config.options.ropeYarn, 'the file read as YaRN').to.deep.equal({ origContext: ORIG, betaFast: 32, betaSlow: 1, extFactor: 1 });
    const options = { ...source.config.options, ...flip };
    engine ??= createEngine({ cacheDir: join(dir, 'cache'), devices: { host: { matmul: 'q8' } } });
    const model = Qwen3Model.create({ ...source, config: { ...source.config, options } }, { engine, target: 'host', ctx: CTX });
    try {
      const r = await model.runner.step(model.program(IDS.length, true), { ids: IDS, positions: IDS.map((_, i) => i), state: zeroCache(model.config, CTX) });
      const v = model.config.vocab;
      return { vocab: v, logits: IDS.map((_, k) => centered(r.logits.data.slice(k * v, (k + 1) * v))) };
    } finally {
      await model.close();
    }
  }

  async function compare(path: string, flip: Partial<GraphOptions> = {}): Promise<Figures> {
    const mine = await ours(path, flip);
    const ref = await llamaCpp(path, mine.vocab);
    const f = figures(mine.logits, ref, ORIG);
    if (process.env['ARCH_DEBUG']) console.log(path, JSON.stringify(flip), f);
    return f;
  }

  for (const arch of ['qwen3', 'llama']) {
    for (const type of TYPES) {
      const quantized = type === 'Q8_0' || type === 'Q4_0';
      it(`${arch} ${type} with YaRN: every position's logits at cosine >= ${quantized ? 0.99 : 0.999}, scale within ${quantized ? 5 : 1}%, llama.cpp's clear argmax`, async () => {
        const f = await compare(file(arch, type));
        expect(f.minCos, 'least cosine').to.be.at.least(quantized ? 0.99 : 0.999);
        expect(Math.abs(f.worstScale - 1), `scale ${f.worstScale}`).to.be.at.most(quantized ? 0.05 : 0.01);
        expect(f.decisive, 'positions with a clear margin').to.be.at.least(10);
        expect(f.argmaxMisses, 'argmax where llama.cpp is clear').to.equal(0);
      });
    }
    for (const control of CONTROLS) {
      it(`${arch} negative control: ${control.what} fails the comparison past the original context`, async () => {
        const f = await compare(join(dir, `${arch}-F32.gguf`), control.flip);
        expect(f.minCosPast < 0.99 || Math.abs(f.worstScale - 1) > 0.05, `cosine ${f.minCosPast} past ${ORIG}, scale ${f.worstScale}`).to.equal(true);
      });
    }
  }
});
