import { expect } from 'chai';
import { quantTensor } from '../../src/ir/tensor.js';
import { decodeWeight, encodeQuantTensor } from '../../src/ir/tensorCodec.js';
import { QUANT_DTYPES, storageBytes, type QuantDType } from '../../src/ir/types.js';
import { dequantize, dequantRow } from '../../src/numerics/dequant.js';
import { QUANT_BLOCKS, quantShapeProblem } from '../../src/numerics/quant.js';
import { checkProgram } from '../../src/ops/validate.js';
import { runStep } from '../../src/oracle/evaluate.js';
import { LAYOUT, brain, half, randomBlocks, refDequant } from './quantRef.js';

/** Shapes of whole blocks for each dtype: a row, several rows, a batch of matrices. */
const SHAPES: Readonly<Record<QuantDType, readonly (readonly number[])[]>> = {
  q4_0: [[32], [3, 64], [2, 5, 96]],
  q4_1: [[32], [3, 64], [2, 5, 96]],
  q8_0: [[32], [3, 64], [2, 5, 96]],
  q4_k: [[256], [3, 512], [2, 2, 256]],
  q6_k: [[256], [3, 512], [2, 2, 256]],
  q4nx_q41: [[32, 256], [64, 512], [2, 32, 256]],
};

function convertProgram(dtype: QuantDType, shape: readonly number[]) {
  return checkProgram({
    format: 'program@1', name: 'dequant',
    args: [{ name: 'w', role: 'weight', dtype, shape }],
    eqns: [{ op: 'convert', in: ['w'], out: 'y', attrs: { dtype: 'f32' } }],
    results: ['y'], state: {},
  });
}

describe('numerics/dequant: quantized dtypes against an independent dequantizer', () => {
  it('the test reference decodes halves and bfloat16 like the IEEE formats', () => {
    expect(half(0x3c00)).to.equal(1);
    expect(half(0xc000)).to.equal(-2);
    expect(half(0x0001)).to.equal(2 ** -24);
    expect(half(0x7bff)).to.equal(65504);
    expect(brain(0x3f80)).to.equal(1);
    expect(brain(0xbfc0)).to.equal(-1.5);
  });

  it('has the block sizes and bytes of the layouts', () => {
    for (const d of QUANT_DTYPES) {
      expect(QUANT_BLOCKS[d], d).to.deep.equal(LAYOUT[d]);
      expect(storageBytes(d, [LAYOUT[d].rows, LAYOUT[d].cols]), d).to.equal(LAYOUT[d].bytes);
    }
    expect(storageBytes('q4_0', [7, 64])).to.equal(7 * 2 * 18);
    expect(storageBytes('q4nx_q41', [64, 512])).to.equal(4 * 5120);
  });

  for (const dtype of QUANT_DTYPES) {
    it(`${dtype}: every element of random blocks dequantizes exactly to the reference`, () => {
      SHAPES[dtype].forEach((shape, i) => {
        const bytes = randomBlocks(dtype, shape, 1000 + i);
        const got = dequantize(quantTensor(dtype, shape, bytes));
        const want = refDequant(dtype, shape, bytes);
        expect(got.length).to.equal(want.length);
        const bad = got.findIndex((v, j) => !Object.is(v, want[j]));
        expect(bad, `${dtype} [${shape.join(', ')}] element ${bad}: ${got[bad]} vs ${want[bad]}`).to.equal(-1);
        // Some values must be non-trivial, or the comparison proves little.
        expect(new Set(want).size).to.be.greaterThan(shape.length === 1 ? 8 : 20);
      });
    });

    it(`${dtype}: a row is the row of the whole tensor`, () => {
      const shape = SHAPES[dtype][2]!;
      const bytes = randomBlocks(dtype, shape, 7);
      const t = quantTensor(dtype, shape, bytes);
      const k = shape[shape.length - 1]!;
      const all = refDequant(dtype, shape, bytes);
      const row = new Float64Array(k);
      const rows = all.length / k;
      for (const r of [0, 1, rows - 1]) {
        dequantRow(t, r, row);
        expect(Array.from(row)).to.deep.equal(Array.from(all.subarray(r * k, (r + 1) * k)));
      }
    });

    it(`${dtype}: round-trips through the wire byte for byte and through the oracle's convert`, () => {
      const shape = SHAPES[dtype][1]!;
      const bytes = randomBlocks(dtype, shape, 99);
      const wire = JSON.parse(JSON.stringify(encodeQuantTensor(quantTensor(dtype, shape, bytes)))) as unknown;
      const back = decodeWeight(wire, '/w');
      expect('bytes' in back && Buffer.from(back.bytes).equals(Buffer.from(bytes))).to.equal(true);

      const checked = convertProgram(dtype, shape);
      const want = refDequant(dtype, shape, bytes);
      const env = { weights: { w: quantTensor(dtype, shape, bytes) }, state: {}, activations: {} };
      const f32 = runStep(checked, env).results['y']!;
      expect(f32.dtype).to.equal('f32');
      expect(Array.from(f32.data)).to.deep.equal(Array.from(want, (v) => Math.fround(v)));
      const exact = runStep(checked, env, { fp64: true }).results['y']!;
      expect(Array.from(exact.data)).to.deep.equal(Array.from(want));
    });
  }

  it('refuses a blocked axis that is not a multiple of the block size, naming the axis', () => {
    expect(quantShapeProblem('q4_0', [4, 48])?.axis).to.equal(1);
    expect(quantShapeProblem('q4_k', [128])?.axis).to.equal(0);
    expect(quantShapeProblem('q4nx_q41', [40, 256])?.axis).to.equal(0);
    expect(quantShapeProblem('q4nx_q41', [256])?.axis).to.equal(null);
    expect(quantShapeProblem('q8_0', [])?.axis).to.equal(null);
    expect(quantShapeProblem('q6_k', [3, 0])).to.equal(undefined);
    expect(() => quantTensor('q4_0', [2, 32], new Uint8Array(35))).to.throw(RangeError, /is 36 bytes of blocks, got 35/);
  });
});
