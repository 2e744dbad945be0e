/**
 * One source for the kernel ABI: the addon reports its own numbering (the C++ tables, one X-macro
 * each: src/native/host/list.h, ops.h, wtypes.cc), and it must be the compiler's (kernelList.ts) op
 * for op, field for field; the loader refuses a build whose numbering differs. ENCODE writes every
 * field where KERNEL_FIELDS (and so the addon) says it is.
 */
import { expect } from 'chai';
import {
  abiMismatches, encodeKernels, KERNEL_FIELDS, KERNEL_OPS, type HostAbi, type KernelCall, type KernelOp,
} from '../../../src/compiler/host/kernelList.js';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { NATIVE_BUILD_DIR } from '../../../src/devices/native.js';
import { skipWith } from '../../skip.js';

// A sample of every op's fields: each number distinct, the named ones (fn, dtype, from, to) and the
// arrays set to something other than their first or default value.
function sample(op: KernelOp): KernelCall {
  const fields: Record<string, unknown> = Object.fromEntries(KERNEL_FIELDS[op].map((f, i) => [f, 100 + i]));
  if (op === 'unary' || op === 'unary_t') fields.fn = 'exp';
  if (op.startsWith('binary')) Object.assign(fields, { fn: 'mul', aScalar: true, bScalar: false });
  if ('dtype' in fields) fields.dtype = 'bf16';
  if (op === 'convert') Object.assign(fields, { from: 'f16', to: 'bf16' });
  if (op === 'reduce_t') fields.max = true;
  if (op === 'iota') fields.i32 = true;
  if (op === 'attention' || op === 'attention_f16') fields.kRows = true;
  // The rank and the padded extents and strides are written from the arrays, not given.
  // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- dropping the fields the pattern names
  for (const f of Object.keys(fields)) if (/^(rank|[du]\d|[xy]s\d)$/.test(f)) delete fields[f];
  if (op === 'update') Object.assign(fields, { dims: [5, 6, 7], update: [1, 2, 3] });
  if (op === 'copy_strided') Object.assign(fields, { dims: [5, 6, 7], xStrides: [42, 7, 1], yStrides: [1, 5, 30] });
  return { op, eqn: 9, ...fields } as KernelCall;
}

describe('host kernels: one ABI for the compiler and the addon', () => {
  it('every op encodes as many words as the addon reads, each plain field where its name says', () => {
    for (const op of KERNEL_OPS) {
      const s = sample(op) as unknown as Record<string, unknown>;
      const words = Array.from(encodeKernels([sample(op)]));
      expect(words.slice(0, 2), op).to.deep.equal([KERNEL_OPS.indexOf(op), 9]);
      expect(words.length - 2, `${op}'s word count`).to.equal(KERNEL_FIELDS[op].length);
      KERNEL_FIELDS[op].forEach((f, i) => {
        if (typeof s[f] === 'number') expect(words[2 + i], `${op}.${f}`).to.equal(s[f]);
      });
    }
  });

  describe('with the addon', function () {
    let abi: HostAbi;
    // The addon itself, not the loader: the loader refuses a build that differs (so the host tests
    // would all skip), and this is the test that must then fail, saying where.
    before(function () {
      const path = join(NATIVE_BUILD_DIR, 'host_kernels.node');
      if (!existsSync(path)) skipWith(this, `no ${path} in this build`);
      abi = (createRequire(import.meta.url)(path) as { abi(): HostAbi }).abi();
    });

    it('numbers ops, fields, unary and binary ops, dtypes and weight types as the compiler does', () => {
      expect(abiMismatches(abi)).to.deep.equal([]);
      expect(abi.kernels.length).to.equal(KERNEL_OPS.length);
    });

    it('negative control: a build with two ops swapped, a field renamed or a reordered table is found out', () => {
      const swapped = { ...abi, kernels: [abi.kernels[1]!, abi.kernels[0]!, ...abi.kernels.slice(2)] };
      expect(abiMismatches(swapped).join('\n')).to.match(/^kernel ops: the addon has \[matmul, matmul_w,/);
      const renamed = { ...abi, kernels: abi.kernels.map((k) => (k.name === 'rope' ? { ...k, fields: k.fields.map((f) => (f === 'rd' ? 'rot' : f)) } : k)) };
      expect(abiMismatches(renamed)).to.have.length(1).and.to.match(/rope's fields/);
      expect(abiMismatches({ ...abi, unary: [...abi.unary].reverse() })).to.have.length(1);
      expect(abiMismatches({ ...abi, dtypes: abi.dtypes.slice(1) })).to.have.length(1);
      expect(abiMismatches({ ...abi, weights: [...abi.weights.slice(1), abi.weights[0]!] })).to.have.length(1);
    });
  });
});
