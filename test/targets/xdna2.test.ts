import { expect } from 'chai';
import { CapabilityMissing, MissingBound } from '../../src/errors/index.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { refusalsOf } from '../../src/planner/plan.js';
import { F32_EPS } from '../../src/targets/contract.js';
import { XDNA2_BOUNDS, XDNA2_CONTRACTS, XDNA2_TARGET } from '../../src/targets/xdna2/index.js';
import type { Admission } from '../../src/targets/target.js';
import { prog, rmsBody, single } from './helpers.js';

/** The admission of the program's only (or `k`th) equation. */
function admission(c: CheckedProgram, k = 0): Admission {
  const e = c.eqns[k]!;
  return XDNA2_TARGET.admission[e.op](e);
}

/** The wire forms of every refusal of the program on xdna2. */
function refusals(c: CheckedProgram) {
  return refusalsOf(c, XDNA2_TARGET).map((e) => e.toWire()).map(({ message: _m, ...rest }) => rest);
}

function capability(c: CheckedProgram): string | undefined {
  const a = admission(c);
  return !a.admitted && a.refusal.kind === 'capability' ? a.refusal.capability : undefined;
}

describe('xdna2 target', () => {
  it('is named, and carries the measured bounds', () => {
    expect([XDNA2_TARGET.name, XDNA2_TARGET.device, XDNA2_TARGET.part]).to.deep.equal(['xdna2', 'xdna2', 'xdna2:aie2p']);
    expect(XDNA2_BOUNDS).to.deep.equal({ tiles: 32, streamsIn: 16, streamsOut: 16, streamsPerTile: 2, tileLocalBytes: 64512, contexts: 16 });
  });

  describe('admits each verified op with its contract', () => {
    const finiteNormal = { kind: 'finite-normal-result' };
    const transcendental = { kind: 'absrel', abs: 2e-6, rel: 1e-5 };
    const cases: [string, object, object][] = [
      ['add', { kind: 'larger-operand', rel: 2 * F32_EPS }, finiteNormal],
      ['sub', { kind: 'larger-operand', rel: 2 * F32_EPS }, finiteNormal],
      ['mul', { kind: 'exact' }, finiteNormal],
      ['div', { kind: 'exact' }, finiteNormal],
      ['ge', { kind: 'exact' }, finiteNormal],
      ['max', { kind: 'exact' }, { kind: 'not-nan' }],
    ];
    for (const [op, error, domain] of cases) {
      it(`${op} of two F32 tensors and of a tensor and a literal`, () => {
        for (const rhs of ['b', { lit: 0.5 }]) {
          const a = admission(single({ op, in: ['x', rhs], out: 'y' }));
          expect(a.admitted).to.equal(true);
          expect(a.admitted && a.contract).to.deep.include({ error, domain });
        }
      });
    }
    const unary: [string, object, object][] = [
      ['neg', { kind: 'exact' }, finiteNormal],
      ['recip', { kind: 'exact' }, finiteNormal],
      ['exp', transcendental, { kind: 'interval', lo: -87, hi: 88 }],
      ['log', transcendental, { kind: 'positive-normal' }],
      ['tanh', transcendental, { kind: 'finite' }],
      ['erf', transcendental, { kind: 'finite' }],
      ['sqrt', { kind: 'rel', rel: 4e-7 }, { kind: 'positive-normal' }],
    ];
    for (const [op, error, domain] of unary) {
      it(`${op} of an F32 tensor`, () => {
        const a = admission(single({ op, in: ['x'], out: 'y' }));
        expect(a.admitted && a.contract).to.deep.include({ error, domain });
      });
    }
    it('last-axis reduce_sum within 2 x cols x 2^-23 of the magnitudes, reduce_max exact', () => {
      const s = admission(single({ op: 'reduce_sum', in: ['x'], out: 'y', axes: [1] }));
      expect(s.admitted && s.contract?.error).to.deep.equal({ kind: 'sum-magnitude', perTerm: 2 * F32_EPS });
      const m = admission(single({ op: 'reduce_max', in: ['x'], out: 'y', axes: [2] }, 'f32', [2, 3, 8]));
      expect(m.admitted && m.contract?.error).to.deep.equal({ kind: 'exact' });
    });
    it('gather of F32 and I32 elements along any axis, bit exact over every input', () => {
      for (const dtype of ['f32', 'i32']) {
        for (const axis of [0, 1]) {
          const c = prog([['x', dtype, [4, 8]], ['i', 'i32', [3]]], [{ op: 'gather', in: ['x', 'i'], out: 'y', axis }], ['y']);
          expect(admission(c)).to.deep.equal({ admitted: true, contract: XDNA2_CONTRACTS.gather });
        }
      }
    });
    it('a row kernel with a derived bound: RMSNorm, with and without a weight', () => {
      for (const w of [false, true]) {
        const c = prog([['x', 'f32', [4, 64]], ['w', 'f32', [64]]], [{ op: 'row_kernel', in: w ? ['x', 'w'] : ['x'], out: 'y', body: rmsBody(w) }], ['y']);
        const a = admission(c);
        expect(a.admitted && a.contract?.error.kind).to.equal('rel');
        const rel = a.admitted && a.contract?.error.kind === 'rel' ? a.contract.error.rel : NaN;
        expect(Math.abs(rel - 8.5e-6) / 8.5e-6).to.be.below(0.02);
      }
    });
  });

  describe('refuses everything else with a stable capability', () => {
    it('matmul (and so attention): op.matmul', () => {
      const c = prog([['q', 'f32', [4, 8]], ['k', 'f32', [8, 4]]], [{ op: 'matmul', in: ['q', 'k'], out: 's' }], ['s']);
      expect(refusals(c)).to.deep.equal([{ code: 'CapabilityMissing', eqn: 0, op: 'matmul', capability: 'op.matmul' }]);
    });
    it('attention primitives: both matmuls and the softmax broadcasts are refused, the pointwise pieces admitted', () => {
      const c = prog([['q', 'f32', [4, 8]], ['k', 'f32', [8, 4]], ['v', 'f32', [4, 8]]], [
        { op: 'matmul', in: ['q', 'k'], out: 's' },
        { op: 'reduce_max', in: ['s'], out: 'm', axes: [1] },
        { op: 'broadcast', in: ['m'], out: 'mb', shape: [4, 4], dims: [0] },
        { op: 'sub', in: ['s', 'mb'], out: 'z' },
        { op: 'exp', in: ['z'], out: 'e' },
        { op: 'reduce_sum', in: ['e'], out: 'l', axes: [1] },
        { op: 'broadcast', in: ['l'], out: 'lb', shape: [4, 4], dims: [0] },
        { op: 'div', in: ['e', 'lb'], out: 'p' },
        { op: 'matmul', in: ['p', 'v'], out: 'o' },
      ], ['o']);
      expect(refusals(c).map((r) => [r['eqn'], r['capability']])).to.deep.equal([
        [0, 'op.matmul'], [2, 'movement.broadcast'], [6, 'movement.broadcast'], [8, 'op.matmul'],
      ]);
    });
    it('collectives: collective.all_reduce', () => {
      expect(capability(single({ op: 'all_reduce', in: ['x'], out: 'y', reduce: 'sum' }))).to.equal('collective.all_reduce');
    });
    it('reductions over another axis, or of another dtype', () => {
      expect(capability(single({ op: 'reduce_sum', in: ['x'], out: 'y', axes: [0] }))).to.equal('reduce.axis.non-last');
      expect(capability(single({ op: 'reduce_max', in: ['x'], out: 'y', axes: [0, 1] }))).to.equal('reduce.axis.non-last');
      expect(capability(single({ op: 'reduce_sum', in: ['x'], out: 'y', axes: [1] }, 'f16'))).to.equal('dtype.f16');
      expect(capability(single({ op: 'reduce_max', in: ['x'], out: 'y', axes: [1] }, 'i32'))).to.equal('dtype.i32');
    });
    it('data movement other than gather', () => {
      const cases: [object, string][] = [
        [{ op: 'transpose', in: ['x'], out: 'y', perm: [1, 0] }, 'movement.transpose'],
        [{ op: 'reshape', in: ['x'], out: 'y', shape: [256] }, 'movement.reshape'],
        [{ op: 'slice', in: ['x'], out: 'y', start: [0, 0], limit: [1, 64] }, 'movement.slice'],
        [{ op: 'concat', in: ['x', 'b'], out: 'y', axis: 0 }, 'movement.concat'],
        [{ op: 'broadcast', in: ['x'], out: 'y', shape: [2, 4, 64], dims: [1, 2] }, 'movement.broadcast'],
        [{ op: 'dynamic_update_slice', in: ['x', 'b', { lit: 0 }, { lit: 0 }], out: 'y' }, 'movement.dynamic_update_slice'],
      ];
      for (const [eqn, cap] of cases) expect(capability(single(eqn)), cap).to.equal(cap);
      expect(capability(prog([], [{ op: 'iota', in: [], out: 'y', shape: [8], dimension: 0, dtype: 'f32' }], ['y']))).to.equal('op.iota');
      expect(capability(single({ op: 'convert', in: ['x'], out: 'y', dtype: 'f16' }))).to.equal('op.convert');
    });
    it('other unary ops and min', () => {
      for (const op of ['sin', 'cos', 'rsqrt', 'abs', 'logistic']) expect(capability(single({ op, in: ['x'], out: 'y' }))).to.equal(`unary.${op}`);
      expect(capability(single({ op: 'min', in: ['x', 'b'], out: 'y' }))).to.equal('binary.min');
    });
    it('other element types, and a named scalar broadcast against a tensor', () => {
      expect(capability(single({ op: 'add', in: ['x', 'b'], out: 'y' }, 'bf16'))).to.equal('dtype.bf16');
      expect(capability(single({ op: 'exp', in: ['x'], out: 'y' }, 'f16'))).to.equal('dtype.f16');
      expect(capability(single({ op: 'neg', in: ['x'], out: 'y' }, 'i32'))).to.equal('dtype.i32');
      expect(capability(prog([['x', 'bool', [4]], ['i', 'i32', [2]]], [{ op: 'gather', in: ['x', 'i'], out: 'y', axis: 0 }], ['y']))).to.equal('dtype.bool');
      expect(capability(single({ op: 'mul', in: ['x', 's'], out: 'y' }, 'f32', [4, 64], [['s', 'f32', []]]))).to.equal('elementwise.broadcast');
    });
  });

  describe('row kernels without a derived bound are MissingBound naming the step', () => {
    const rk = (body: object, ins = ['x']) => prog([['x', 'f32', [4, 64]], ['m', 'f32', [4, 64]]], [{ op: 'row_kernel', in: ins, out: 'y', body }], ['y']);
    it('LayerNorm: its mean is a signed sum (step 0)', () => {
      const body = { params: ['x'], steps: [
        { op: 'reduce_sum', in: ['x'], out: 's' }, { op: 'div', in: ['s', { lit: 64 }], out: 'mean' },
        { op: 'sub', in: ['x', 'mean'], out: 'xc' }, { op: 'mul', in: ['xc', 'xc'], out: 'sq' },
        { op: 'reduce_sum', in: ['sq'], out: 'ss' }, { op: 'div', in: ['ss', { lit: 64 }], out: 'v' },
        { op: 'add', in: ['v', { lit: 1e-5 }], out: 've' }, { op: 'sqrt', in: ['ve'], out: 'sd' }, { op: 'div', in: ['xc', 'sd'], out: 'y' },
      ], results: ['y'] };
      expect(refusals(rk(body))).to.deep.equal([{ code: 'MissingBound', eqn: 0, step: 0, bound: 'reduce_sum: no bound for a sum of terms that are not provably non-negative (it may cancel)' }]);
    });
    it('LayerNorm given its mean: the centring sub (step 0)', () => {
      const body = { params: ['x', 'm'], steps: [
        { op: 'sub', in: ['x', 'm'], out: 'xc' }, { op: 'mul', in: ['xc', 'xc'], out: 'sq' }, { op: 'reduce_sum', in: ['sq'], out: 'ss' },
        { op: 'add', in: ['ss', { lit: 1e-5 }], out: 've' }, { op: 'sqrt', in: ['ve'], out: 'sd' }, { op: 'div', in: ['xc', 'sd'], out: 'y' },
      ], results: ['y'] };
      const [r] = refusalsOf(rk(body, ['x', 'm']), XDNA2_TARGET);
      expect(r).to.be.instanceOf(MissingBound);
      expect(r!.toWire()).to.deep.include({ code: 'MissingBound', eqn: 0, step: 0, bound: 'sub: no bound for a difference that may cancel' });
    });
    it('softmax: the max-subtraction (step 1), and exp inside a row kernel', () => {
      const softmax = { params: ['x'], steps: [
        { op: 'reduce_max', in: ['x'], out: 'm' }, { op: 'sub', in: ['x', 'm'], out: 'z' }, { op: 'exp', in: ['z'], out: 'e' },
        { op: 'reduce_sum', in: ['e'], out: 's' }, { op: 'div', in: ['e', 's'], out: 'y' },
      ], results: ['y'] };
      expect(refusals(rk(softmax))).to.deep.equal([{ code: 'MissingBound', eqn: 0, step: 1, bound: 'sub: no bound for a difference that may cancel' }]);
      const expFirst = { params: ['x'], steps: [{ op: 'exp', in: ['x'], out: 'e' }, { op: 'reduce_sum', in: ['e'], out: 's' }, { op: 'div', in: ['e', 's'], out: 'y' }], results: ['y'] };
      expect(refusals(rk(expFirst))[0]).to.deep.include({ code: 'MissingBound', step: 0, bound: 'exp: no relative bound inside a row kernel (its contract has an absolute part)' });
    });
    it('a row kernel over F16 is a dtype capability, not a bound', () => {
      const c = prog([['x', 'f16', [4, 64]]], [{ op: 'row_kernel', in: ['x'], out: 'y', body: rmsBody(false) }], ['y']);
      expect(capability(c)).to.equal('dtype.f16');
    });
  });

  it('lists every refusal of a program at once, in equation order, as typed errors', () => {
    const c = prog([['x', 'f32', [4, 64]], ['w', 'f32', [64, 64]]], [
      { op: 'exp', in: ['x'], out: 'e' },
      { op: 'matmul', in: ['e', 'w'], out: 'h' },
      { op: 'sin', in: ['h'], out: 's' },
      { op: 'reduce_sum', in: ['s'], out: 'c', axes: [0] },
      { op: 'row_kernel', in: ['e'], out: 'r', body: { params: ['x'], steps: [{ op: 'sub', in: ['x', { lit: 1 }], out: 'y' }], results: ['y'] } },
      { op: 'all_reduce', in: ['r'], out: 'g', reduce: 'sum' },
    ], ['c', 'g']);
    const all = refusalsOf(c, XDNA2_TARGET);
    expect(all.map((e) => e.constructor)).to.deep.equal([CapabilityMissing, CapabilityMissing, CapabilityMissing, MissingBound, CapabilityMissing]);
    expect(refusals(c)).to.deep.equal([
      { code: 'CapabilityMissing', eqn: 1, op: 'matmul', capability: 'op.matmul' },
      { code: 'CapabilityMissing', eqn: 2, op: 'sin', capability: 'unary.sin' },
      { code: 'CapabilityMissing', eqn: 3, op: 'reduce_sum', capability: 'reduce.axis.non-last' },
      { code: 'MissingBound', eqn: 4, step: 0, bound: 'sub: no bound for a difference that may cancel' },
      { code: 'CapabilityMissing', eqn: 5, op: 'all_reduce', capability: 'collective.all_reduce' },
    ]);
  });
});
