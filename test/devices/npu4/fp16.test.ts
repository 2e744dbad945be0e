import { expect } from 'chai';
import { program } from '../../../src/ops/builder.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { tensor } from '../../../src/ir/tensor.js';
import { f16ToBits, roundF16 } from '../../../src/numerics/float16.js';
import { filled, runOnNpu4 } from './helpers.js';
import { npu4Backend } from '../../../src/compiler/openvino/backend.js';
import { wholeProgramWiring } from '../../../src/compiler/wiring.js';
import { Npu4SimDevice } from '../../../src/devices/npu4/simDevice.js';
import { Session } from '../../../src/session/session.js';
import { refusalsOf } from '../../../src/planner/plan.js';
import { npu4Target } from '../../../src/targets/npu4/index.js';

const N = 64;
// A small deterministic generator, so a failure names inputs that come back.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const r = rng(42);
// FP16 values with fractional parts, where a second rounding would show.
const X = filled('f16', [N], () => (r() - 0.5) * 40);
const Y = filled('f16', [N], () => (r() - 0.5) * 40 || 1);
const P = filled('f16', [N], () => r() * 30 + 0.01);

async function binaryOnNpu(op: 'add' | 'sub' | 'mul' | 'div' | 'max' | 'ge') {
  const p = program(op);
  const x = p.activation('x', 'f16', [N]);
  const y = p.activation('y', 'f16', [N]);
  p.results(p.named('z')[op](x, y));
  const [out] = await runOnNpu4(checkProgram(p.build()), {}, [{ x: X, y: Y }]);
  return out!.results['z']!.data;
}

async function unaryOnNpu(op: 'exp' | 'sqrt' | 'neg', input = X) {
  const p = program(op);
  const x = p.activation('x', 'f16', [input.data.length]);
  p.results(p.named('z')[op](x));
  const [out] = await runOnNpu4(checkProgram(p.build()), {}, [{ x: input }]);
  return out!.results['z']!.data;
}

const EXACT = {
  add: (a: number, b: number) => a + b,
  sub: (a: number, b: number) => a - b,
  mul: (a: number, b: number) => a * b,
  div: (a: number, b: number) => a / b,
  max: (a: number, b: number) => Math.max(a, b),
  ge: (a: number, b: number) => (a >= b ? 1 : 0),
} as const;

describe('devices/npu4: FP16 arithmetic', () => {
  for (const op of ['add', 'sub', 'mul', 'div', 'max', 'ge'] as const) {
    it(`${op} rounds its result once to FP16: roundF16 of the f64 result, bit for bit`, async () => {
      const got = await binaryOnNpu(op);
      for (let i = 0; i < N; i++) {
        const want = roundF16(EXACT[op](X.data[i]!, Y.data[i]!));
        expect(f16ToBits(got[i]!), `${op}(${X.data[i]}, ${Y.data[i]})`).to.equal(f16ToBits(want));
      }
    });
  }

  it('sqrt is roundF16 of the f64 square root; exp is within one FP16 ulp of it', async () => {
    const sq = await unaryOnNpu('sqrt', P);
    const ex = await unaryOnNpu('exp', filled('f16', [N], (i) => (i - N / 2) / 6));
    for (let i = 0; i < N; i++) {
      expect(sq[i], `sqrt(${P.data[i]})`).to.equal(roundF16(Math.sqrt(P.data[i]!)));
      const x = roundF16((i - N / 2) / 6);
      expect(Math.abs(f16ToBits(ex[i]!) - f16ToBits(roundF16(Math.exp(x)))), `exp(${x})`).to.be.at.most(1);
    }
  });

  it('neg flips the sign, and the NPU\'s neg of +0 is +0', async () => {
    const got = await unaryOnNpu('neg', tensor('f16', [4], [0, 1.5, -2.25, 65504]));
    expect(Object.is(got[0], 0), 'neg(+0) is +0').to.equal(true);
    expect([...got.slice(1)]).to.deep.equal([-1.5, 2.25, -65504]);
  });

  it('a chain rounds after every op, not once at the end', async () => {
    const p = program('chain');
    const x = p.activation('x', 'f16', [N]);
    const y = p.activation('y', 'f16', [N]);
    p.results(p.named('z').mul(p.named('s').add(x, y), y));
    const [out] = await runOnNpu4(checkProgram(p.build()), {}, [{ x: X, y: Y }]);
    let differs = 0;
    for (let i = 0; i < N; i++) {
      const [a, b] = [X.data[i]!, Y.data[i]!];
      const perOp = roundF16(roundF16(a + b) * b);
      expect(out!.results['z']!.data[i]).to.equal(perOp);
      if (perOp !== roundF16((a + b) * b)) differs++;
    }
    expect(differs, 'the inputs reach cases where one rounding would differ').to.be.greaterThan(0);
  });

  it('a row sum accumulates in f32 and rounds once to FP16 (documented choice)', async () => {
    const p = program('rowsum');
    const x = p.activation('x', 'f16', [2, 9]);
    p.results(p.named('s').reduceSum(x, [1]));
    // 2048 + 1 rounds back to 2048 in FP16 every time; in an f32 accumulator the ones add up.
    const rows = [2048, 1, 1, 1, 1, 1, 1, 1, 1, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
    const [out] = await runOnNpu4(checkProgram(p.build()), {}, [{ x: filled('f16', [2, 9], (i) => rows[i]!) }]);
    const second = rows.slice(9).map(roundF16).reduce((acc, v) => Math.fround(acc + v), 0);
    expect([...out!.results['s']!.data]).to.deep.equal([2056, roundF16(second)]);
  });

  it('a matmul accumulates exact FP16 products in f32 and rounds once', async () => {
    const p = program('mm');
    const a = p.activation('a', 'f16', [2, 3]);
    const b = p.activation('b', 'f16', [3, 2]);
    p.results(p.named('c').matmul(a, b));
    const A = filled('f16', [2, 3], (i) => X.data[i]!);
    const B = filled('f16', [3, 2], (i) => Y.data[i]!);
    const [out] = await runOnNpu4(checkProgram(p.build()), {}, [{ a: A, b: B }]);
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 2; j++) {
        let acc = 0;
        for (let k = 0; k < 3; k++) acc = Math.fround(acc + A.data[i * 3 + k]! * B.data[k * 2 + j]!);
        expect(out!.results['c']!.data[i * 2 + j]).to.equal(roundF16(acc));
      }
    }
  });

  it('narrows F32 operands on the device itself: an un-narrowed F32 add of 1 + 2^-11 and 2^-11 is exactly 1', async () => {
    // Without the narrowing contract the target refuses F32 arithmetic; compiling past that refusal
    // hands the device an F32 graph, whose operands it narrows to FP16 as the driver does.
    const target = npu4Target({ contract: null });
    const p = program('f32-add');
    const x = p.activation('x', 'f32', [3]);
    const y = p.activation('y', 'f32', [3]);
    p.results(p.named('z').add(x, y));
    const checked = checkProgram(p.build());
    expect(refusalsOf(checked, target).map((e) => e.code)).to.deep.equal(['MissingContract']);
    const bytes = npu4Backend(target).compile(checked, { target: 'npu4', part: target.part, regions: [{ eqns: [0] }] }, 0);
    const dev = new Npu4SimDevice();
    try {
      const loaded = await dev.load({ target: 'npu4', bytes });
      const s = Session.open(dev, [{ loaded, wiring: wholeProgramWiring(checked) }], { weights: {}, state: {}, activations: ['x', 'y'], stateNext: {}, results: ['z'] });
      const out = await s.replay({
        x: tensor('f32', [3], [1 + 2 ** -11, 3, 2 ** -11]),
        y: tensor('f32', [3], [2 ** -11, 2 ** -11, 2 ** -11]),
      }, ['z'], 10_000);
      s.close();
      // 1 + 2^-11 narrows to 1 (a tie, to even); 1 + 2^-11 rounds to 1 again. In F32 it would be 1 + 2^-10.
      expect([...out.results['z']!.data]).to.deep.equal([1, 3, 2 ** -10]);
    } finally {
      dev.drop();
    }
  });
});
