import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { matrixCommand } from '../../src/cli/matrix.js';
import type { Io } from '../../src/cli/output.js';
import { UsageError } from '../../src/errors/index.js';
import { featureMatrix, featureMatrixDoc, type FeatureMatrix } from '../../src/planner/matrix.js';
import { CPU_TARGET } from '../../src/targets/cpu/index.js';
import { TARGET_NAMES, resolveTarget } from '../../src/targets/index.js';
import { XDNA2_CAPABILITIES, XDNA2_TARGET } from '../../src/targets/xdna2/index.js';

function capture(): Io & { outs: string[] } {
  const outs: string[] = [];
  return { outs, out: (l) => outs.push(l), err: (l) => outs.push(l) };
}

// Tests run from dist*/test/planner/, three levels below the repository root.
const DOC = new URL('../../../docs/FEATURE_MATRIX.md', import.meta.url);

function cell(m: FeatureMatrix, op: string, variant: string, dtype: 'f32' | 'f16' | 'i32') {
  const row = m.rows.find((r) => r.op === op && r.variant === variant);
  if (!row) throw new Error(`no row ${op} / ${variant}`);
  return row.cells[dtype];
}

describe('feature matrix', () => {
  it('docs/FEATURE_MATRIX.md is what the admission tables generate (run node scripts/gen-matrix.mjs)', () => {
    expect(readFileSync(DOC, 'utf8'), 'docs/FEATURE_MATRIX.md is stale: rebuild, then run node scripts/gen-matrix.mjs').to.equal(featureMatrixDoc(TARGET_NAMES.map((n) => resolveTarget(n))));
  });

  it('reads the xdna2 table: op, dtype, axis and literal operand decide each cell', () => {
    const m = featureMatrix(XDNA2_TARGET);
    expect(cell(m, 'add', 'tensor, literal', 'f32')).to.have.property('status', 'admitted');
    expect(cell(m, 'add', 'tensor, named scalar', 'f32')).to.deep.equal({ status: 'refused', refusal: { kind: 'capability', capability: 'elementwise.broadcast' } });
    expect(cell(m, 'exp', 'tensor', 'f16')).to.deep.equal({ status: 'refused', refusal: { kind: 'capability', capability: 'dtype.f16' } });
    expect(cell(m, 'exp', 'tensor', 'i32')).to.have.property('status', 'invalid');
    expect(cell(m, 'reduce_sum', 'other axis', 'f32')).to.deep.equal({ status: 'refused', refusal: { kind: 'capability', capability: 'reduce.axis.non-last' } });
    expect(cell(m, 'gather', 'i32 indices, other axis', 'i32')).to.have.property('status', 'admitted');
    expect(cell(m, 'row_kernel', 'softmax [4, 64]', 'f32')).to.have.nested.property('refusal.kind', 'missing-bound');
  });

  it('every xdna2 capability name is reachable from the table, and the table names no other', () => {
    const seen = new Set<string>();
    for (const r of featureMatrix(XDNA2_TARGET).rows) {
      for (const c of Object.values(r.cells)) if (c.status === 'refused' && c.refusal.kind === 'capability') seen.add(c.refusal.capability);
    }
    expect([...seen].sort()).to.deep.equal([...XDNA2_CAPABILITIES].sort());
  });

  it('the cpu matrix admits everything the format allows but the collective', () => {
    const m = featureMatrix(CPU_TARGET);
    const refused = m.rows.flatMap((r) => Object.values(r.cells).filter((c) => c.status === 'refused').map(() => r.op));
    expect(new Set(refused)).to.deep.equal(new Set(['all_reduce']));
  });

  it('matrixCommand prints md or json, and refuses another format', () => {
    const md = capture();
    expect(matrixCommand({ target: 'xdna2', format: 'md' }, md)).to.equal(0);
    expect(md.outs[0]).to.match(/^## xdna2 \(xdna2:aie2p\)\n\nNumerics: Exact where every equation a result depends on is exact, else Contract[^\n]*\n\n\| op \| variant \| f32 \| f16 \| bf16 \| i32 \| bool \|/);
    const js = capture();
    expect(matrixCommand({ target: 'cpu', format: 'json' }, js)).to.equal(0);
    const doc = JSON.parse(js.outs[0]!) as FeatureMatrix;
    expect(doc.target).to.equal('cpu');
    expect(doc.rows.length).to.equal(featureMatrix(CPU_TARGET).rows.length);
    expect(() => matrixCommand({ target: 'xdna2', format: 'csv' }, capture())).to.throw(UsageError);
  });
});
