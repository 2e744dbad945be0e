import { expect } from 'chai';
import { OP_NAMES } from '../../src/ops/rule.js';
import { OPS, inferEqn, literalDtypeOf } from '../../src/ops/table.js';
import { refuses, ty } from './helpers.js';

describe('ops/table', () => {
  it('has exactly one row per op name', () => {
    expect(Object.keys(OPS).sort()).to.deep.equal([...OP_NAMES].sort());
  });

  it('marks exactly the elementwise arithmetic, unary and reduce ops as row steps', () => {
    const steps = OP_NAMES.filter((op) => OPS[op].rowStep).sort();
    expect(steps).to.deep.equal([
      'abs', 'add', 'cos', 'div', 'erf', 'exp', 'log', 'logistic', 'max', 'min', 'mul', 'neg', 'recip',
      'reduce_max', 'reduce_sum', 'rsqrt', 'sin', 'sqrt', 'sub', 'tanh',
    ]);
  });

  it('gives untyped literals the other operand\'s dtype, and i32 for positions', () => {
    expect(literalDtypeOf('add', 1, [ty('f16', [4]), undefined])).to.equal('f16');
    expect(literalDtypeOf('ge', 0, [undefined, ty('i32', [4])])).to.equal('i32');
    expect(literalDtypeOf('add', 0, [undefined, undefined])).to.equal(undefined);
    expect(literalDtypeOf('exp', 0, [undefined])).to.equal(undefined);
    expect(literalDtypeOf('dynamic_update_slice', 2, [ty('f32', [4]), ty('f32', [1]), undefined])).to.equal('i32');
    expect(literalDtypeOf('dynamic_update_slice', 1, [ty('bf16', []), undefined, undefined])).to.equal('bf16');
    expect(literalDtypeOf('gather', 1, [ty('f32', [4]), undefined])).to.equal('i32');
    expect(literalDtypeOf('matmul', 1, [ty('f32', [4, 4]), undefined])).to.equal(undefined);
  });

  it('checks operand counts and attribute kinds before the op\'s own rule', () => {
    const e = refuses('matmul', [ty('f32', [2, 2])], {}, '/in');
    expect(e.reason).to.equal('matmul takes 2 operands, got 1');
    refuses('transpose', [ty('f32', [2])], { perm: [0.5] }, '/perm');
    refuses('gather', [ty('f32', [2]), ty('i32', [1])], { axis: '0' }, '/axis');
    refuses('row_kernel', [ty('f32', [2])], {}, '/body');
    // An optional attribute may be left out.
    expect(inferEqn('slice', [ty('f32', [4])], { start: [1], limit: [3] })).to.deep.equal([{ dtype: 'f32', shape: [2] }]);
  });
});
