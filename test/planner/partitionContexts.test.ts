import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Io } from '../../src/cli/output.js';
import { planCommand } from '../../src/cli/plan.js';
import { segmentFit } from '../../src/compiler/fit.js';
import { ContextLimit } from '../../src/errors/index.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { programToJson } from '../../src/ir/codec.js';
import { decodeInputs } from '../../src/ir/inputsCodec.js';
import type { Program } from '../../src/ir/types.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { planPartitionedJob, runPartitioned } from '../../src/jobs/partitioned.js';
import { buildProgram } from '../../src/model/qwen3/program.js';
import { openModelSource } from '../../src/model/qwen3/source.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { runProgram } from '../../src/oracle/index.js';
import { parseTargetList, partitionProgram, segmentPrograms, type PartitionPlan } from '../../src/planner/partition.js';
import { tempDir } from '../jobs/helpers.js';

/**
 * npu4 segments of `sizes` equations (sub x, then mul 0.5, on f32: npu4 admits them), each two joined by
 * a host `abs` (npu4 refuses it); `hostEnds` puts an abs before the first and after the last too.
 * Every segment reads x again and abs is exact, so the result depends on every segment, not a fixed point.
 */
function alternating(sizes: readonly number[], hostEnds: boolean): Program {
  const p = program('alternating');
  const x = p.activation('x', 'f32', [4, 8]);
  let v = hostEnds ? p.abs(x) : x;
  sizes.forEach((n, k) => {
    if (k > 0) v = p.abs(v);
    for (let j = 0; j < n; j++) v = j % 2 === 0 ? p.sub(v, x) : p.mul(v, 0.5);
  });
  if (hostEnds) v = p.abs(v);
  p.results(v);
  return p.build();
}

const npuSegments = (plan: PartitionPlan) => plan.segments.filter((s) => s.target === 'npu4');

/** Each target's contexts over all its segments, as segmentFit counts them. */
function contextsPerTarget(checked: CheckedProgram, plan: PartitionPlan): Map<string, number> {
  const out = new Map<string, number>();
  for (const sp of segmentPrograms(checked, plan)) {
    const n = segmentFit(sp.segment.target, checkProgram(sp.program)).contexts;
    out.set(sp.segment.target, (out.get(sp.segment.target) ?? 0) + n);
  }
  return out;
}

function capture(): Io & { outs: string[] } {
  const outs: string[] = [];
  return { outs, out: (l) => outs.push(l), err: (l) => outs.push(l) };
}

describe('planner: a partition keeps every target within its hardware contexts over all its segments', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: Engine | undefined;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'partition-contexts-')); });
  after(() => { rmSync(dir, { recursive: true, force: true }); });
  afterEach(async () => { await engine?.close(); engine = undefined; });

  // 18 npu4 segments of 2 equations but three of 1 (the 4th, 10th and 15th), 17 host segments between them.
  const SIZES = Array.from({ length: 18 }, (_, k) => (k === 3 || k === 9 || k === 14 ? 1 : 2));

  it('passes the smallest npu4 segments (the later on a tie) to the host, each equation with its ContextLimit', async () => {
    const prog = alternating(SIZES, false);
    const checked = checkProgram(prog);
    const targets = parseTargetList('npu4,host');
    const naive = npuSegments(partitionProgram(checked, targets));
    expect(naive).to.have.length(18);
    const plan = partitionProgram(checked, targets, segmentFit);
    expect(plan.limits).to.deep.equal([]);
    expect(npuSegments(plan)).to.have.length(16);
    // Two of the three one-equation segments went on: the 10th and the 15th; the 4th stayed.
    const moved = [...naive[9]!.eqns, ...naive[14]!.eqns];
    expect(plan.placements.filter((p) => p.refusals.some((r) => r.error instanceof ContextLimit)).map((p) => p.eqn)).to.deep.equal(moved);
    for (const eqn of moved) {
      const p = plan.placements[eqn]!;
      expect(p.target).to.equal('host');
      expect(p.refusals.map((r) => [r.target, r.error.code, r.error.fields()])).to.deep.equal([['npu4', 'ContextLimit', { needed: 18, max: 16, target: 'npu4' }]]);
    }
    expect(plan.placements[naive[3]!.eqns[0]!]!.target).to.equal('npu4');
    // Each moved segment sat between two host segments, which merged: 15 host segments.
    expect(plan.segments.filter((s) => s.target === 'host')).to.have.length(15);
    for (const [t, n] of contextsPerTarget(checked, plan)) expect(n, t).to.be.at.most(16);

    const f = join(dir, 'alternating.json');
    writeFileSync(f, JSON.stringify(programToJson(prog)));
    const io = capture();
    expect(planCommand(f, { target: 'npu4,host', json: true }, io)).to.equal(0);
    const j = JSON.parse(io.outs[0]!) as { placements: { eqn: number; target: string; refusals: { target: string; error: unknown }[] }[]; limits: unknown[] };
    expect(j.limits).to.deep.equal([]);
    expect(j.placements[moved[0]!]!.refusals).to.deep.equal([{ target: 'npu4', error: { code: 'ContextLimit', needed: 18, max: 16, target: 'npu4' } }]);
    const tio = capture();
    expect(planCommand(f, { target: 'npu4,host' }, tio)).to.equal(0);
    expect(tio.outs).to.include(`  eqn ${moved[0]} sub: host, segment ${plan.placements[moved[0]!]!.segment} (npu4 refused: ContextLimit needed=18 max=16 target="npu4")`);

    // The plan runs: 16 npu4 and 15 host sessions open, and the result is the oracle's within FP16 storage.
    const tmp = tempDir();
    try {
      engine = createEngine({ cacheDir: tmp.dir, workers: 1 });
      const data = Array.from({ length: 32 }, (_, i) => Math.sin(i * 0.7 + 1));
      const inputs = { x: [{ dtype: 'f32', shape: [4, 8], data }] };
      const r = await runPartitioned(engine, { program: programToJson(prog), target: 'npu4,host', inputs });
      expect(r.segments.filter((s) => s.target === 'npu4')).to.have.length(16);
      const want = runProgram(checked, decodeInputs(inputs, checked))[0]!.results[prog.results[0]!]!.data;
      const got = r.results[prog.results[0]!]!.data;
      let diff = 0;
      let norm = 0;
      for (let i = 0; i < want.length; i++) { diff += (got[i]! - want[i]!) ** 2; norm += want[i]! ** 2; }
      // Each npu4 segment stores its values in FP16 (rel 2^-11 each); abs is exact and every mul 0.5
      // halves the error carried in, so the whole chain stays within one segment's contract (1e-2).
      expect(norm).to.be.greaterThan(0);
      expect(Math.sqrt(diff / norm)).to.be.at.most(1e-2);
    } finally {
      tmp.remove();
    }
  });

  for (const type of ['F16', 'Q8_0'] as const) {
    it(`the tiny Qwen3 prefill program (${type}) on npu4,host: every target within 16 contexts, no limits`, () => {
      const f = join(dir, `qwen3-${type}.gguf`);
      writeFileSync(f, tinyQwen3Gguf({ layers: 2, std: 0.05, seed: 3, type }));
      const src = openModelSource(f);
      const checked = checkProgram(buildProgram(src.config, src.weights, { tokens: 7, ctx: 32 }));
      // Placed by admission alone, npu4 would open more sessions than it has contexts.
      expect(npuSegments(partitionProgram(checked, parseTargetList('npu4,host'))).length).to.be.greaterThan(16);
      const plan = partitionProgram(checked, parseTargetList('npu4,host'), segmentFit);
      expect(plan.refused).to.deep.equal([]);
      expect(plan.limits).to.deep.equal([]);
      const per = contextsPerTarget(checked, plan);
      expect([...per.keys()].sort()).to.deep.equal(['host', 'npu4']);
      for (const [t, n] of per) expect(n, t).to.be.at.most(16);
      expect(() => planPartitionedJob(checked, 'npu4,host')).to.not.throw();
    });
  }

  it('the last target past its contexts takes the smallest segments between two of its own, which merge', () => {
    // On xdna2,npu4: 17 npu4 segments (a reshape there and back, which the XDNA2 refuses) around 16
    // xdna2 ones (sub x, then mul 0.5 but one of a single sub), which npu4 admits too.
    const p = program('last-over');
    const x = p.activation('x', 'f32', [4, 8]);
    const there = (v: ReturnType<typeof p.sub>) => p.reshape(p.reshape(v, [32]), [4, 8]);
    let v = there(x);
    for (let k = 0; k < 16; k++) {
      v = p.sub(v, x);
      if (k !== 6) v = p.mul(v, 0.5);
      v = there(v);
    }
    p.results(v);
    const checked = checkProgram(p.build());
    const targets = parseTargetList('xdna2,npu4');
    const naive = partitionProgram(checked, targets);
    expect(naive.segments.filter((s) => s.target === 'npu4')).to.have.length(17);
    const plan = partitionProgram(checked, targets, segmentFit);
    expect(plan.limits).to.deep.equal([]);
    for (const [t, n] of contextsPerTarget(checked, plan)) expect(n, t).to.be.at.most(16);
    // The one-equation xdna2 segment went to npu4, merging the two around it; its refusal names npu4's count.
    const single = naive.segments.filter((s) => s.target === 'xdna2').find((s) => s.eqns.length === 1)!;
    const moved = plan.placements.filter((q) => q.refusals.some((r) => r.error instanceof ContextLimit));
    expect(moved.map((q) => q.eqn)).to.deep.equal(single.eqns);
    expect(moved[0]!.target).to.equal('npu4');
    expect(moved[0]!.refusals.map((r) => [r.target, r.error.fields()])).to.deep.equal([['xdna2', { needed: 17, max: 16, target: 'npu4' }]]);
    expect(plan.segments.filter((s) => s.target === 'npu4')).to.have.length(16);
    expect(() => planPartitionedJob(checked, 'xdna2,npu4')).to.not.throw();
  });

  it('a target past its contexts whose segments no other target takes refuses the plan: ContextLimit naming it', () => {
    // npu4 segments that move rank-5 data (the host refuses data movement past rank 4), 17 of them between host abs.
    const p = program('rank5-chain');
    const x = p.activation('x', 'f32', [4, 8]);
    let v = p.abs(x);
    for (let k = 0; k < 17; k++) v = p.abs(p.reshape(p.transpose(p.reshape(v, [2, 2, 2, 2, 2]), [4, 3, 2, 1, 0]), [4, 8]));
    p.results(v);
    const prog = p.build();
    const checked = checkProgram(prog);
    const plan = partitionProgram(checked, parseTargetList('npu4,host'), segmentFit);
    expect(plan.limits.map((e) => [e.code, e.fields()])).to.deep.equal([['ContextLimit', { needed: 17, max: 16, target: 'npu4' }]]);
    const e = (() => { try { planPartitionedJob(checked, 'npu4,host'); return undefined; } catch (x) { return x; } })();
    expect(e).to.be.instanceOf(ContextLimit);
    expect(e).to.include({ code: 'ContextLimit', needed: 17, max: 16, target: 'npu4' });

    const f = join(dir, 'overflow.json');
    writeFileSync(f, JSON.stringify(programToJson(prog)));
    const io = capture();
    expect(planCommand(f, { target: 'npu4,host' }, io)).to.equal(1);
    expect(io.outs).to.include('  ContextLimit needed=17 max=16 target="npu4"');
  });
});
