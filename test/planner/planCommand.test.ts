import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planCommand } from '../../src/cli/plan.js';
import type { Io } from '../../src/cli/output.js';
import { UsageError } from '../../src/errors/index.js';
import { programJson, rmsBody } from '../targets/helpers.js';

function capture(): Io & { outs: string[] } {
  const outs: string[] = [];
  return { outs, out: (l) => outs.push(l), err: (l) => outs.push(l) };
}

interface PlanJson {
  program: string; target: string; part: string;
  admitted: { eqn: number; op: string; contract: { error: { kind: string } } | null }[];
  refused: Record<string, unknown>[];
  regions: {
    index: number; eqns: number[]; usage?: { tiles: number };
    tiles?: { eqn: number; tile: [number, number] }[];
    arenas?: { name: string; direction: string; bytes: number; tensors: { value: string; offset: number; bytes: number }[] }[];
  }[];
  contexts: { needed: number; max: number | null };
  numerics: { class: string; tolerance: Record<string, unknown> };
}

const NORM = programJson([['x', 'f32', [4, 64]], ['w', 'f32', [64]]], [
  { op: 'row_kernel', in: ['x', 'w'], out: 'n', body: rmsBody(true) },
  { op: 'exp', in: ['n'], out: 'e' },
  { op: 'reduce_sum', in: ['e'], out: 's', axes: [1] },
], ['s'], 'norm');

const MIXED = programJson([['x', 'f32', [4, 64]], ['w', 'f32', [64, 64]]], [
  { op: 'matmul', in: ['x', 'w'], out: 'h' },
  { op: 'exp', in: ['h'], out: 'e' },
  { op: 'row_kernel', in: ['e'], out: 'r', body: { params: ['x'], steps: [{ op: 'sub', in: ['x', { lit: 1 }], out: 'y' }], results: ['y'] } },
  { op: 'transpose', in: ['r'], out: 't', perm: [1, 0] },
], ['t'], 'mixed');

describe('plan command', () => {
  let dir: string;
  const file = (name: string, v: object) => { const p = join(dir, name); writeFileSync(p, JSON.stringify(v)); return p; };
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'npuo-plan-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('xdna2 --json: admitted equations with contracts, regions from the region planner, contexts, numerics', () => {
    const io = capture();
    expect(planCommand(file('norm.json', NORM), { target: 'xdna2', json: true }, io)).to.equal(0);
    const doc = JSON.parse(io.outs[0]!) as PlanJson;
    expect([doc.program, doc.target, doc.part]).to.deep.equal(['norm', 'xdna2', 'xdna2:aie2p']);
    expect(doc.admitted.map((a) => [a.eqn, a.op, a.contract?.error.kind])).to.deep.equal([[0, 'row_kernel', 'rel'], [1, 'exp', 'absrel'], [2, 'reduce_sum', 'sum-magnitude']]);
    expect(doc.refused).to.deep.equal([]);
    expect(doc.regions.map((r) => r.eqns)).to.deep.equal([[0, 1, 2]]);
    expect(doc.regions[0]!.usage?.tiles).to.equal(3);
    // One compute tile per equation, all distinct; every host tensor at its own arena offset.
    const tiles = doc.regions[0]!.tiles!.map((t) => t.tile.join(','));
    expect(doc.regions[0]!.tiles!.map((t) => t.eqn)).to.deep.equal([0, 1, 2]);
    expect(new Set(tiles).size).to.equal(3);
    for (const a of doc.regions[0]!.arenas!) {
      const spans = a.tensors.map((t) => [t.offset, t.offset + t.bytes] as const).sort((x, y) => x[0] - y[0]);
      spans.forEach(([lo, hi], i) => {
        expect(hi).to.be.at.most(a.bytes);
        if (i > 0) expect(lo).to.be.at.least(spans[i - 1]![1]);
      });
    }
    expect(doc.regions[0]!.arenas!.flatMap((a) => a.tensors.map((t) => t.value))).to.include.members(['x']);
    expect(doc.contexts).to.deep.equal({ needed: 1, max: 16 });
    expect(doc.numerics.class).to.equal('Contract');
    expect(doc.numerics.tolerance['s']).to.have.property('kind', 'absrel');
  });

  it('xdna2: every refusal at once with its code and fields, exit 1; no regions', () => {
    const io = capture();
    expect(planCommand(file('mixed.json', MIXED), { target: 'xdna2', json: true }, io)).to.equal(1);
    const doc = JSON.parse(io.outs[0]!) as PlanJson;
    expect(doc.refused).to.deep.equal([
      { code: 'CapabilityMissing', eqn: 0, op: 'matmul', capability: 'op.matmul' },
      { code: 'MissingBound', eqn: 2, step: 0, bound: 'sub: no bound for a difference that may cancel' },
      { code: 'CapabilityMissing', eqn: 3, op: 'transpose', capability: 'movement.transpose' },
    ]);
    expect(doc.admitted.map((a) => a.op)).to.deep.equal(['exp']);
    expect(doc.regions).to.deep.equal([]);
  });

  it('xdna2 text: one line per admitted and refused equation, then regions, contexts and numerics', () => {
    const io = capture();
    expect(planCommand(file('mixed.json', MIXED), { target: 'xdna2' }, io)).to.equal(1);
    const text = io.outs.join('\n');
    expect(io.outs[0]).to.equal('plan: program "mixed" on xdna2 (xdna2:aie2p): 3 refusals');
    expect(text).to.contain('  eqn 1 exp: abs 2e-6 + rel 1e-5; operands in [-87, 88]');
    expect(text).to.contain('  eqn 0 matmul: CapabilityMissing op="matmul" capability="op.matmul"');
    expect(text).to.contain('  eqn 2 row_kernel: MissingBound step=0 bound="sub: no bound for a difference that may cancel"');
    expect(text).to.match(/contexts: 0 of 16/);
    const ok = capture();
    expect(planCommand(file('norm.json', NORM), { target: 'xdna2' }, ok)).to.equal(0);
    expect(ok.outs.join('\n')).to.match(/region 0: eqns 0-2, 3 tiles, streams \d+ in \/ \d+ out/);
  });

  it('more regions than hardware contexts is a ContextLimit', () => {
    const eqns = Array.from({ length: 17 * 32 + 1 }, (_, k) => ({ op: 'neg', in: [k === 0 ? 'x' : `v${k - 1}`], out: `v${k}` }));
    const io = capture();
    expect(planCommand(file('long.json', programJson([['x', 'f32', [4]]], eqns, [`v${eqns.length - 1}`])), { target: 'xdna2', json: true }, io)).to.equal(1);
    const doc = JSON.parse(io.outs[0]!) as PlanJson;
    expect(doc.regions.length).to.be.greaterThan(16);
    expect(doc.refused).to.deep.equal([{ code: 'ContextLimit', needed: doc.regions.length, max: 16 }]);
  });

  it('cpu: everything admitted, one region, class Exact', () => {
    const io = capture();
    expect(planCommand(file('mixed.json', MIXED), { target: 'cpu', json: true }, io)).to.equal(0);
    const doc = JSON.parse(io.outs[0]!) as PlanJson;
    expect(doc.refused).to.deep.equal([]);
    expect(doc.admitted.every((a) => a.contract === null)).to.equal(true);
    expect(doc.regions).to.deep.equal([{ index: 0, eqns: [0, 1, 2, 3] }]);
    expect(doc.contexts).to.deep.equal({ needed: 1, max: null });
    expect(doc.numerics).to.deep.equal({ class: 'Exact', tolerance: { t: { kind: 'exact' } }, assumptions: { t: [] } });
  });

  it('npu4: the numerics class and tolerances are the target\'s NarrowStorage, as a verified run uses them', () => {
    const prog = programJson([['x', 'f32', [4, 8]], ['k', 'f16', [4, 8]]], [
      { op: 'add', in: ['x', 'x'], out: 'y' },
      { op: 'reshape', in: ['k'], out: 'r', shape: [32] },
    ], ['y', 'r'], 'narrow');
    const io = capture();
    expect(planCommand(file('narrow.json', prog), { target: 'npu4', json: true }, io)).to.equal(0);
    const doc = JSON.parse(io.outs[0]!) as PlanJson;
    expect(doc.numerics.class).to.equal('NarrowStorage');
    expect(doc.numerics.tolerance).to.deep.equal({ y: { kind: 'normwise', rel: 0.01 }, r: { kind: 'normwise', rel: 0.01 } });
    const text = capture();
    expect(planCommand(file('narrow.json', prog), { target: 'npu4' }, text)).to.equal(0);
    expect(text.outs).to.include('numerics: NarrowStorage');
    expect(text.outs).to.include('  eqn 0 add: in FP16 storage (NarrowStorage: each float result within normwise 0.01 of the oracle\'s)');
    expect(text.outs.join('\n')).to.not.contain('the oracle itself');
  });

  it('an unknown target is a UsageError', () => {
    expect(() => planCommand(file('norm.json', NORM), { target: 'tpu' }, capture())).to.throw(UsageError);
  });
});
