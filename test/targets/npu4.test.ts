import { expect } from 'chai';
import type { EngineError } from '../../src/errors/index.js';
import { lit, program } from '../../src/ops/builder.js';
import type { ProgramBuilder, Value } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import type { DType } from '../../src/ir/types.js';
import { planProgram, refusalsOf } from '../../src/planner/plan.js';
import { NPU4_CONTRACT, NPU4_TARGET, npu4Target } from '../../src/targets/npu4/index.js';
import type { Target } from '../../src/targets/target.js';

const NO_CONTRACT = npu4Target({ contract: null });

/** The refusals (as wire errors) of a one-result program built by `f` over an arg `x` of `dtype`. */
function refusals(target: Target, dtype: DType, f: (p: ProgramBuilder, x: Value) => Value, shape: number[] = [2, 4]) {
  const p = program('t');
  const x = p.activation('x', dtype, shape);
  p.results(f(p, x));
  return refusalsOf(checkProgram(p.build()), target).map((e: EngineError) => e.toWire());
}

function only(target: Target, dtype: DType, f: (p: ProgramBuilder, x: Value) => Value) {
  const r = refusals(target, dtype, f);
  expect(r, JSON.stringify(r)).to.have.length(1);
  return r[0]!;
}

describe('targets/npu4', () => {
  it('names the device and part, and records the contract', () => {
    expect(NPU4_TARGET).to.include({ name: 'npu4', device: 'npu4', part: 'npu4:lunarlake' });
    expect(NPU4_TARGET.contract).to.deep.equal({ normwise: NPU4_CONTRACT.normwise, maxMagnitude: 65504 });
    expect(NO_CONTRACT.contract).to.equal(null);
  });

  it('admits every op the seed lists, in F16 and in F32 under the contract', () => {
    for (const dtype of ['f16', 'f32'] as const) {
      const p = program('all');
      const x = p.activation('x', dtype, [2, 4]);
      const w = p.weight('w', dtype, [4, 3]);
      const i = p.activation('i', 'i32', [2]);
      const kv = p.state('kv', dtype, [4, 3]);
      const a = p.div(p.max(p.mul(p.sub(p.add(x, x), x), 2), x), x);
      const e = p.sqrt(p.exp(p.neg(a)));
      p.ge(e, 0);
      const m = p.matmul(e, w);
      const r = p.add(p.reduceSum(m, [1]), p.reduceMax(m, [1]));
      const g = p.gather(w, i, 0);
      const t = p.reshape(p.transpose(g, [1, 0]), [6]);
      const b = p.broadcast(r, [2, 3], [0]);
      const c = p.concat([p.slice(m, [0, 0], [2, 3], [1, 2]), b], 1);
      const io = p.convert(p.iota([2, 3], 1, dtype), 'f16');
      const kv2 = p.dynamicUpdateSlice(kv, p.convert(p.slice(c, [0, 0], [1, 3]), dtype), [1, 0]);
      p.results(t, io, kv2, p.convert(p.convert(x, 'f16'), 'f32'));
      p.carry(kv, kv2);
      const checked = checkProgram(p.build());
      expect(refusalsOf(checked, NPU4_TARGET), dtype).to.deep.equal([]);
      expect(planProgram(checked, NPU4_TARGET).regions).to.have.length(1);
      if (dtype === 'f16') expect(refusalsOf(checked, NO_CONTRACT)).to.deep.equal([]);
    }
  });

  it('refuses log, recip and every other unary op with a capability naming it', () => {
    for (const op of ['log', 'recip', 'tanh', 'erf', 'rsqrt', 'abs', 'logistic', 'sin', 'cos'] as const) {
      const w = only(NPU4_TARGET, 'f16', (p, x) => p[op](x));
      expect(w).to.deep.include({ code: 'CapabilityMissing', eqn: 0, op, capability: `unary.${op}` });
    }
    expect(only(NPU4_TARGET, 'f16', (p, x) => p.min(x, x))).to.deep.include({ code: 'CapabilityMissing', capability: 'binary.min' });
  });

  it('refuses BF16 arithmetic always, and BF16 data movement', () => {
    for (const target of [NPU4_TARGET, NO_CONTRACT]) {
      expect(only(target, 'bf16', (p, x) => p.add(x, x))).to.deep.include({ code: 'CapabilityMissing', op: 'add', capability: 'arith.bf16' });
      expect(only(target, 'bf16', (p, x) => p.exp(x))).to.deep.include({ code: 'CapabilityMissing', capability: 'arith.bf16' });
    }
    expect(only(NPU4_TARGET, 'bf16', (p, x) => p.reshape(x, [8]))).to.deep.include({ code: 'CapabilityMissing', capability: 'movement.bf16' });
  });

  it('refuses F32 arithmetic without a contract as MissingContract, and admits F32 data movement', () => {
    for (const f of [(p: ProgramBuilder, x: Value) => p.mul(x, x), (p: ProgramBuilder, x: Value) => p.reduceSum(x, [1]), (p: ProgramBuilder, x: Value) => p.exp(x)]) {
      const w = only(NO_CONTRACT, 'f32', f);
      expect(w).to.deep.include({ code: 'MissingContract', eqn: 0 });
      expect(refusals(NPU4_TARGET, 'f32', f)).to.deep.equal([]);
    }
    expect(refusals(NO_CONTRACT, 'f32', (p, x) => p.transpose(x, [1, 0]))).to.deep.equal([]);
    expect(refusals(NO_CONTRACT, 'f32', (p, x) => p.convert(x, 'f16'))).to.deep.equal([]);
  });

  it('refuses integer arithmetic (FP16 holds integers exactly only up to 2048)', () => {
    expect(only(NPU4_TARGET, 'i32', (p, x) => p.add(x, x))).to.deep.include({ code: 'CapabilityMissing', capability: 'arith.integer' });
    expect(refusals(NPU4_TARGET, 'i32', (p, x) => p.reshape(x, [8]))).to.deep.equal([]);
  });

  it('refuses converts through BF16 or an integer, and an integer converted to a float as IntegerToFloat', () => {
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.convert(x, 'bf16'))).to.deep.include({ code: 'CapabilityMissing', op: 'convert', capability: 'convert.bf16' });
    expect(only(NPU4_TARGET, 'bf16', (p, x) => p.convert(x, 'f16'))).to.deep.include({ capability: 'convert.bf16' });
    expect(only(NPU4_TARGET, 'f16', (p, x) => p.convert(x, 'i32'))).to.deep.include({ code: 'CapabilityMissing', capability: 'convert.integer' });
    for (const to of ['f32', 'f16'] as const) {
      expect(only(NPU4_TARGET, 'i32', (p, x) => p.convert(x, to))).to.deep.equal({
        code: 'IntegerToFloat', eqn: 0, message: 'equation 0: an integer converted to a float is refused on an FP16 target',
      });
    }
    expect(refusals(NPU4_TARGET, 'f16', (p, x) => p.convert(p.ge(x, 0), 'f16'))).to.deep.equal([]);
  });

  it('refuses a multiplicative literal beyond 65504 as NarrowingRange, with its value', () => {
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.mul(x, 1e5))).to.deep.include({ code: 'NarrowingRange', eqn: 0, value: 100000 });
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.div(x, -70000))).to.deep.include({ code: 'NarrowingRange', value: -70000 });
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.max(x, 1e9))).to.deep.include({ code: 'NarrowingRange', value: 1e9 });
    expect(refusals(NPU4_TARGET, 'f32', (p, x) => p.mul(x, 65504))).to.deep.equal([]);
  });

  it('admits an additive F32 literal beyond 65504 under the contract (it saturates), never without', () => {
    expect(refusals(NPU4_TARGET, 'f32', (p, x) => p.add(x, -1e9))).to.deep.equal([]);
    expect(refusals(NPU4_TARGET, 'f32', (p, x) => p.sub(x, 3e38))).to.deep.equal([]);
    // An F16 literal is no narrowing: one FP16 rounds to 65504 is past the range and nothing saturates it.
    expect(only(NPU4_TARGET, 'f16', (p, x) => p.add(x, lit(65510, 'f16')))).to.deep.include({ code: 'NarrowingRange', value: 65510 });
    expect(only(NO_CONTRACT, 'f16', (p, x) => p.sub(x, lit(-65510, 'f16')))).to.deep.include({ code: 'NarrowingRange', value: -65510 });
    // One that rounds to infinity in f16 is not an f16 value at all: validation refuses it on every target.
    expect(() => refusals(NPU4_TARGET, 'f16', (p, x) => p.add(x, lit(1e5, 'f16')))).to.throw(/\/eqns\/0\/in\/1\/lit: a f16 literal: 100000 rounds to infinity/);
  });

  it('refuses a multiplied literal between 65504 and 65520 (FP16 would round it to 65504) as NarrowingRange', () => {
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.mul(x, 65505))).to.deep.include({ code: 'NarrowingRange', eqn: 0, value: 65505 });
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.mul(x, -65519))).to.deep.include({ code: 'NarrowingRange', value: -65519 });
    expect(refusals(NPU4_TARGET, 'f32', (p, x) => p.mul(x, -65504))).to.deep.equal([]);
  });

  it('admits an infinite literal (FP16 holds it) and refuses a NaN literal', () => {
    for (const f of [(p: ProgramBuilder, x: Value) => p.max(x, -Infinity), (p: ProgramBuilder, x: Value) => p.add(x, Infinity), (p: ProgramBuilder, x: Value) => p.mul(x, -Infinity)]) {
      expect(refusals(NPU4_TARGET, 'f32', f)).to.deep.equal([]);
    }
    expect(only(NPU4_TARGET, 'f32', (p, x) => p.add(x, NaN))).to.deep.include({ code: 'NarrowingRange', eqn: 0, value: 'nan' });
    expect(only(NPU4_TARGET, 'f16', (p, x) => p.mul(x, NaN))).to.deep.include({ code: 'NarrowingRange', value: 'nan' });
  });

  it('refuses collectives and row kernels', () => {
    expect(only(NPU4_TARGET, 'f16', (p, x) => p.allReduce(x))).to.deep.include({ code: 'CapabilityMissing', op: 'all_reduce', capability: 'collective.all_reduce' });
    const r = only(NPU4_TARGET, 'f16', (p, x) => p.rowKernel([x], (b, v) => b.mul(v, v))[0]!);
    expect(r).to.deep.include({ code: 'CapabilityMissing', op: 'row_kernel', capability: 'row_kernel' });
  });

  it('planProgram throws the first refusal as its typed error', () => {
    const p = program('t');
    const x = p.activation('x', 'f32', [4]);
    p.results(p.log(p.exp(x)));
    expect(() => planProgram(checkProgram(p.build()), NO_CONTRACT)).to.throw().with.property('code', 'MissingContract');
  });
});
