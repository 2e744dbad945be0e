import { expect } from 'chai';
import { CPU_TARGET } from '../../src/targets/cpu/index.js';
import { F32_EPS } from '../../src/targets/contract.js';
import { programNumerics } from '../../src/targets/numerics.js';
import { programTolerance } from '../../src/targets/propagate.js';
import { XDNA2_TARGET } from '../../src/targets/xdna2/index.js';

const xdna2ProgramTolerance = (p: Parameters<typeof programTolerance>[0]) => programTolerance(p, XDNA2_TARGET);
import { prog, rmsBody } from './helpers.js';

describe('xdna2 program numerics', () => {
  it('Exact when every equation a result depends on is exact', () => {
    const p = prog([['x', 'f32', [4, 8]], ['i', 'i32', [2]]], [
      { op: 'mul', in: ['x', { lit: 2 }], out: 'a' },
      { op: 'gather', in: ['a', 'i'], out: 'g', axis: 1 },
      { op: 'reduce_max', in: ['g'], out: 'm', axes: [1] },
      { op: 'ge', in: ['x', { lit: 0 }], out: 'pos' },
    ], ['m', 'pos']);
    const n = xdna2ProgramTolerance(p);
    expect(n.numericsClass).to.equal('Exact');
    expect(n.tolerance).to.deep.equal({ m: { kind: 'exact' }, pos: { kind: 'exact' } });
  });

  it('Contract with each result\'s own tolerance: exp alone, then exp through a mul', () => {
    const p = prog([['x', 'f32', [4, 8]], ['w', 'f32', [4, 8]]], [
      { op: 'exp', in: ['x'], out: 'e' },
      { op: 'mul', in: ['e', 'w'], out: 'y' },
      { op: 'neg', in: ['w'], out: 'nw' },
    ], ['e', 'y', 'nw']);
    const n = xdna2ProgramTolerance(p);
    expect(n.numericsClass).to.equal('Contract');
    expect(n.tolerance['e']).to.deep.equal({ kind: 'absrel', abs: 2e-6, rel: 1e-5 });
    // The mul is exact but re-rounds a perturbed product: rel 1e-5 + 2^-23; exp's absolute part is
    // carried unscaled, and the tolerance says which premise that rests on.
    expect(n.tolerance['y']).to.deep.equal({ kind: 'absrel', abs: 2e-6, rel: 1e-5 + F32_EPS });
    expect(n.assumptions['y']!.join('\n')).to.match(/equation 1 \(mul\).*unscaled/);
    expect(n.tolerance['nw']).to.deep.equal({ kind: 'exact' });
  });

  it('a chain of adds: 4 x 2^-23 per add of the result, re-rounded, no cancellation assumed', () => {
    const p = prog([['x', 'f32', [8]], ['b', 'f32', [8]]], [
      { op: 'add', in: ['x', 'b'], out: 's' },
      { op: 'add', in: ['s', 'b'], out: 't' },
    ], ['t']);
    const n = xdna2ProgramTolerance(p);
    expect(n.tolerance['t']).to.deep.equal({ kind: 'absrel', abs: 0, rel: 4 * F32_EPS + F32_EPS + 4 * F32_EPS });
    expect(n.assumptions['t']!.join('\n')).to.match(/not to cancel/);
  });

  it('a row kernel contributes its derived bound', () => {
    const p = prog([['x', 'f32', [4, 64]]], [{ op: 'row_kernel', in: ['x'], out: 'y', body: rmsBody(false) }], ['y']);
    const t = xdna2ProgramTolerance(p).tolerance['y']!;
    expect(t.kind).to.equal('absrel');
    expect(t.kind === 'absrel' && t.rel).to.be.closeTo(8.506e-6, 1e-9);
  });

  it('is Exact on the CPU target whatever the program', () => {
    const p = prog([['x', 'f32', [4, 8]]], [{ op: 'exp', in: ['x'], out: 'e' }, { op: 'sin', in: ['e'], out: 's' }], ['s']);
    expect(programNumerics(p, CPU_TARGET)).to.deep.equal({ numericsClass: 'Exact', tolerance: { s: { kind: 'exact' } }, assumptions: { s: [] } });
  });
});
