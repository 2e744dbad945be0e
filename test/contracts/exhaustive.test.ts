/**
 * Exhaustive sweeps as a user meets them: every input of a range swept natively and judged against the
 * op's contract, with the counts, the worst input, the share in the domain and the failing inputs
 * right; negative controls (a core off by a few ulps on one binade) found and reported with that
 * binade; a broken native port or a broken reference caught by the cross-check; binary ops against
 * fixed values; the NPU4 over every FP16 input; and the CLI's refusals. The full 2^32 sweeps of the seven
 * unary ops take a minute each and belong to `npm run bench` (bench/sweep.ts); here the ranges are a
 * few binades, plus 2^25 patterns of neg; a fault on one binade is swept with the binade on each side of it
 * (the neighbours it must not leak into).
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { contractsCommand } from '../../src/cli/contracts.js';
import type { ExhaustiveOptions, ExhaustiveReport } from '../../src/contracts/exhaustive.js';
import { runExhaustive } from '../../src/contracts/exhaustive.js';
import { withKernelFault } from '../../src/contracts/faultyDevice.js';
import { SWEEP_ADDON_FILE } from '../../src/contracts/nativeSweep.js';
import { NATIVE_BUILD_DIR } from '../../src/devices/native.js';
import { Npu4SimDevice } from '../../src/devices/npu4/simDevice.js';
import { bitsOf } from '../../src/devices/xdna2/f32.js';
import { UsageError } from '../../src/errors/index.js';

const built = existsSync(join(NATIVE_BUILD_DIR, SWEEP_ADDON_FILE));
const p = (x: number) => bitsOf(x) >>> 0;
/** The patterns of the binades [2^lo, 2^hi) of one sign. */
const binades = (lo: number, hi: number, sign = 1) => ({ from: p(sign * 2 ** lo), to: p(sign * 2 ** hi) });

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

async function rejects(f: () => Promise<unknown>): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const sweep = (o: Omit<ExhaustiveOptions, 'target'> & { target?: 'xdna2' | 'npu4' }): Promise<ExhaustiveReport> => runExhaustive({ target: 'xdna2', ...o });

describe('exhaustive contract sweeps', function () {
  this.timeout(120_000);

  describe('refusals', () => {
    it('refuses an op that is not elementwise, naming the ones it sweeps', async () => {
      const e = await rejects(() => sweep({ op: 'reduce_sum' }));
      expect(e).to.be.instanceOf(UsageError);
      expect((e as UsageError).message).to.include('exp').and.include('reduce_sum');
    });
    it('refuses --fixed on a unary op and a range past 2^32', async () => {
      expect(await rejects(() => sweep({ op: 'exp', fixed: 3 }))).to.be.instanceOf(UsageError);
      expect(await rejects(() => sweep({ op: 'exp', range: { from: 0, to: 2 ** 32 + 1 } }))).to.be.instanceOf(UsageError);
      expect(await rejects(() => sweep({ op: 'exp', range: { from: 10, to: 5 } }))).to.be.instanceOf(UsageError);
    });
    it('the CLI refuses --exhaustive without --op, with --bulk, and --fixed without --exhaustive', async () => {
      for (const o of [{ exhaustive: true }, { exhaustive: true, op: 'exp', bulk: 10 }, { op: 'add', fixed: 3 }]) {
        const t = io();
        expect(await rejects(() => contractsCommand({ target: 'xdna2', ...o }, t.io))).to.be.instanceOf(UsageError);
      }
    });
  });

  describe('npu4: every FP16 input through the simulated device', () => {
    for (const [op, inDomain] of [['neg', 63488], ['sqrt', 31745], ['exp', null]] as const) {
      it(`${op} passes over all 65536 FP16 patterns`, async () => {
        const r = await sweep({ target: 'npu4', op });
        expect(r.inputs).to.equal('f16');
        expect(r.elements).to.equal(65536);
        // neg: every finite value; sqrt: +-0 and the finite positives; exp: about [-12, 11.09], where the
        // result stays within ±65504 and above FP16's subnormals.
        if (inDomain !== null) expect(r.inDomain).to.equal(inDomain);
        else expect(r.inDomain).to.be.within(40_000, 50_000);
        expect(r.failures).to.equal(0);
        expect(r.worst!.ratio).to.be.below(1);
        expect(r.pass).to.equal(true);
      });
    }

    it('a wrong kernel, 5% off on one binade of inputs, is found in that binade alone', async () => {
      // Output i is the FP16 pattern i, so the binade [2, 4) is exponent field 16 of the index.
      const device = () => withKernelFault(new Npu4SimDevice({ name: 'npu4-wrong' }), {
        graph: 'npu4-sweep-sqrt', fault: (x, i) => (((i >> 10) & 0x1f) === 16 && i < 0x8000 ? x * 1.05 : x),
      });
      const r = await sweep({ target: 'npu4', op: 'sqrt', device });
      expect(r.pass).to.equal(false);
      expect(r.failures).to.equal(1024);
      expect(r.binades.map((b) => b.range)).to.deep.equal(['[2^1, 2^2)']);
      expect(r.failing[0]!.bits).to.equal('0x4000');
    });

    it('the CLI prints the report as JSON and exits 0', async () => {
      const t = io();
      expect(await contractsCommand({ target: 'npu4', op: 'neg', exhaustive: true, json: true }, t.io)).to.equal(0);
      const doc = JSON.parse(t.out.join('\n')) as { pass: boolean; report: ExhaustiveReport };
      expect(doc.pass).to.equal(true);
      expect(doc.report.elements).to.equal(65536);
      expect(t.err).to.deep.equal([]);
    });
  });

  describe('xdna2: natively', () => {
    before(function () {
      if (!built) this.skip(); // no xdna2_sweep.node in this build: `npm run build:native`
    });

    it('neg passes over 2^25 patterns, the subnormals outside its domain', async () => {
      // +0, every positive subnormal and the three binades above them: 2^28 checked nothing more.
      const r = await sweep({ op: 'neg', range: { from: 0, to: 2 ** 25 } });
      expect(r.elements).to.equal(2 ** 25);
      // finite-normal-result: +0 is in, the 2^23 - 1 positive subnormals are not.
      expect(r.inDomain).to.equal(2 ** 25 - (2 ** 23 - 1));
      expect(r.share).to.equal(r.inDomain / r.elements);
      expect(r.failures).to.equal(0);
      expect(r.failing).to.deep.equal([]);
      expect(r.crossCheck!.samples).to.be.greaterThan(0);
      expect(r.crossCheck!.coreMismatches).to.equal(0);
      expect(r.pass).to.equal(true);
    });

    it("exp's domain ends at 88: of the patterns from 80 to 96 only those up to 88 count", async () => {
      const r = await sweep({ op: 'exp', range: { from: p(80), to: p(96) } });
      expect(r.inDomain).to.equal(p(88) - p(80) + 1);
      expect(r.pass).to.equal(true);
    });

    for (const op of ['exp', 'log', 'tanh', 'erf', 'sqrt', 'recip'] as const) {
      it(`${op} passes over the binades [2^-1, 2^1) of both signs, its worst input named`, async () => {
        for (const sign of [1, -1]) {
          const r = await sweep({ op, range: binades(-1, 1, sign) });
          expect(r.failures, JSON.stringify(r.failing.slice(0, 2))).to.equal(0);
          expect(r.crossCheck!.coreMismatches).to.equal(0);
          expect(r.crossCheck!.referenceDisagreements).to.equal(0);
          if ((op === 'log' || op === 'sqrt') && sign < 0) {
            expect(r.inDomain).to.equal(0); // positive-normal: nothing negative is promised
            expect(r.pass).to.equal(false);
            continue;
          }
          expect(r.inDomain).to.equal(r.elements);
          expect(r.worst!.ratio).to.be.below(1);
          expect(Math.abs(r.worst!.input)).to.be.within(0.5, 2);
          expect(r.pass).to.equal(true);
        }
      });
    }

    it('a recip 2 ulps off on [2^5, 2^6) fails there and nowhere else, the first thousand listed', async () => {
      const fault = { exponent: 5, ulps: 2 };
      const r = await sweep({ op: 'recip', range: binades(4, 7), fault });
      expect(r.pass).to.equal(false);
      expect(r.failures).to.equal(2 ** 23);
      expect(r.binades).to.deep.equal([{ sign: '+', exponent: 5, range: '[2^5, 2^6)', failures: 2 ** 23 }]);
      expect(r.failing).to.have.length(1000);
      expect(r.failing[0]!.bits).to.equal('0x42000000');
      expect(r.failing[0]!.input).to.equal(32);
      expect(r.worst!.ratio).to.equal(Infinity);
      // A broken core, native and TypeScript alike: the port itself is sound.
      expect(r.crossCheck!.coreMismatches).to.equal(0);
      const neg = await sweep({ op: 'recip', range: binades(4, 7, -1), fault });
      expect(neg.binades.map((b) => b.range)).to.deep.equal(['(-2^6, -2^5]']);
    });

    it('a sqrt 4 ulps off on [2^10, 2^11) breaks its rel 4e-7 there only', async () => {
      const r = await sweep({ op: 'sqrt', range: binades(9, 12), fault: { exponent: 10, ulps: 4 } });
      expect(r.pass).to.equal(false);
      expect(r.binades.map((b) => b.exponent)).to.deep.equal([10]);
      expect(r.failures).to.be.within(1, 2 ** 23);
      expect(r.worst!.input).to.be.within(2 ** 10, 2 ** 11);
    });

    it('an exp 200 ulps off on [2^1, 2^2) is past its bound there; a few ulps are within it', async () => {
      // rel 1e-5 is 84 to 168 units of an f32 result: 200 break it everywhere, 3 nowhere.
      const far = await sweep({ op: 'exp', range: binades(0, 3), fault: { exponent: 1, ulps: 200 } });
      expect(far.binades.map((b) => b.range)).to.deep.equal(['[2^1, 2^2)']);
      expect(far.failures).to.equal(2 ** 23);
      const near = await sweep({ op: 'exp', range: binades(0, 3), fault: { exponent: 1, ulps: 3 } });
      expect(near.pass).to.equal(true);
    });

    it('the cross-check catches a native port that differs from the TypeScript core', async () => {
      const r = await sweep({ op: 'tanh', range: binades(0, 1), fault: { exponent: 0, ulps: 1, in: 'native-core' } });
      expect(r.crossCheck!.coreMismatches).to.equal(r.crossCheck!.samples);
      expect(r.crossCheck!.examples[0]).to.include('the native core gives');
      expect(r.pass).to.equal(false);
    });

    it('the cross-check reports libm and the TypeScript oracle disagreeing, and does not pass', async () => {
      const r = await sweep({ op: 'erf', range: binades(-1, 0), fault: { exponent: -1, ulps: 64, in: 'reference' } });
      expect(r.failures).to.equal(0); // 64 f64 units are nothing against the bound
      expect(r.crossCheck!.referenceDisagreements).to.equal(r.crossCheck!.samples);
      expect(r.crossCheck!.examples[0]).to.include('the native reference is').and.include('64 f64 ulps apart');
      expect(r.pass).to.equal(false);
    });

    it('reports the same whatever the threads, the chunks and the lane routines', async () => {
      // Two binades, the faulty one and a sound one: 4 chunks of 2^22, 32 of 2^19.
      const o = { op: 'tanh', range: binades(-1, 1), fault: { exponent: 0, ulps: 170 } } as const;
      const strip = (r: ExhaustiveReport) => ({ ...r, ms: 0, inputsPerSecond: 0, notes: [], crossCheck: null });
      const one = await sweep({ ...o, threads: 1, chunk: 2 ** 22 });
      expect(one.failures).to.be.greaterThan(0);
      const four = await sweep({ ...o, threads: 4, chunk: 2 ** 19 });
      expect(strip(four)).to.deep.equal(strip(one));
      const generic = await sweep({ ...o, generic: true });
      expect(strip(generic)).to.deep.equal(strip(one));
    });

    it('binary ops: one operand over binades against fixed values of the other', async () => {
      const add = await sweep({ op: 'add', range: binades(-1, 2), fixed: [1, -1, 2 ** -30, 3] });
      expect(add.elements).to.equal(4 * 3 * 2 ** 23);
      expect(add.fixed).to.deep.equal([1, -1, 2 ** -30, 3]);
      expect(add.pass).to.equal(true);
      for (const op of ['sub', 'mul', 'div', 'max', 'ge'] as const) {
        const r = await sweep({ op, operand: 'b', range: binades(0, 1), fixed: 3 });
        expect(r.operand).to.equal('b');
        expect(r.fixed).to.have.length(3);
        expect(r.failures, `${op}: ${JSON.stringify(r.failing.slice(0, 2))}`).to.equal(0);
        expect(r.crossCheck!.coreMismatches).to.equal(0);
      }
    });

    it('an adder 5 ulps off on [1, 2) breaks add against a tiny fixed operand, per fixed value', async () => {
      // 2 x 2^-23 of the larger operand is 2 to 4 units on [1, 2): 5 break it everywhere.
      const r = await sweep({ op: 'add', range: binades(0, 1), fixed: [2 ** -30], fault: { exponent: 0, ulps: 5 } });
      expect(r.failures).to.equal(2 ** 23);
      expect(r.byFixed).to.deep.equal([{ other: 2 ** -30, failures: 2 ** 23 }]);
      expect(r.failing[0]!.other).to.equal(2 ** -30);
    });
  });
});
