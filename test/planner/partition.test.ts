import { expect } from 'chai';
import { segmentFit } from '../../src/compiler/fit.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planCommand } from '../../src/cli/plan.js';
import type { Io } from '../../src/cli/output.js';
import { UsageError } from '../../src/errors/index.js';
import { parseProgram, programToJson } from '../../src/ir/codec.js';
import { configFromJson } from '../../src/model/qwen3/config.js';
import { buildProgram } from '../../src/model/qwen3/program.js';
import { tinyQwen3Config } from '../../src/model/qwen3/tiny.js';
import { expectedShapes, type BoundWeight } from '../../src/model/qwen3/weights.js';
import { checkProgram } from '../../src/ops/validate.js';
import { parseTargetList, partitionProgram, segmentPrograms } from '../../src/planner/partition.js';
import { CARRY, SMALL } from './partitionFixture.js';

function capture(): Io & { outs: string[] } {
  const outs: string[] = [];
  return { outs, out: (l) => outs.push(l), err: (l) => outs.push(l) };
}

describe('planner: partitioned plans over a list of targets', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'partition-')); });
  after(() => { rmSync(dir, { recursive: true, force: true }); });
  const file = (name: string, p: object) => { const f = join(dir, name); writeFileSync(f, JSON.stringify(p)); return f; };

  it('places the small program equation by equation: target, segment and the refusal that passed it on', () => {
    const checked = checkProgram(parseProgram(SMALL));
    const plan = partitionProgram(checked, parseTargetList('xdna2,host'));
    const rows = plan.placements.map((p) => [p.eqn, p.target, p.segment, p.refusals.map((r) => `${r.target}:${r.error.code}:${String(r.error.fields()['capability'])}`)]);
    expect(rows).to.deep.equal([
      [0, 'xdna2', 0, []],
      [1, 'host', 1, ['xdna2:CapabilityMissing:op.matmul']],
      [2, 'xdna2', 2, []],
      [3, 'xdna2', 2, []],
      [4, 'host', 3, ['xdna2:CapabilityMissing:op.convert']],
    ]);
    expect(plan.segments.map((s) => [s.target, s.eqns])).to.deep.equal([['xdna2', [0]], ['host', [1]], ['xdna2', [2, 3]], ['host', [4]]]);
    expect(plan.transfers.map((t) => [t.value, t.from, t.to, t.bytes])).to.deep.equal([['a', 0, 1, 128], ['b', 1, 2, 128], ['acc2', 2, 3, 128]]);
    expect(plan.refused).to.deep.equal([]);
  });

  it('cuts each segment into a program of its own: received values as activations, a state kept where it is made', () => {
    const checked = checkProgram(parseProgram(SMALL));
    const subs = segmentPrograms(checked, partitionProgram(checked, parseTargetList('xdna2,host')));
    expect(subs.map((s) => [s.program.args.map((a) => `${a.name}:${a.role}`), s.program.results, s.program.state, s.received])).to.deep.equal([
      [['x:activation'], ['a'], {}, []],
      [['a:activation', 'w:weight'], ['b'], {}, ['a']],
      [['b:activation', 'acc:state'], ['c', 'acc2'], { acc: 'acc2' }, ['b']],
      [['acc2:activation'], ['h'], {}, ['acc2']],
    ]);
    for (const s of subs) expect(() => checkProgram(s.program)).to.not.throw();
  });

  it('a state made on another device than the one that reads it is a carried transfer', () => {
    const checked = checkProgram(parseProgram(CARRY));
    const plan = partitionProgram(checked, parseTargetList('xdna2,host'));
    expect(plan.transfers).to.deep.equal([
      { value: 'a', from: 0, to: 1, fromTarget: 'xdna2', toTarget: 'host', bytes: 128 },
      { value: 'acc2', from: 1, to: 0, fromTarget: 'host', toTarget: 'xdna2', bytes: 128, carried: 'acc' },
    ]);
    const subs = segmentPrograms(checked, plan);
    expect(subs.map((s) => [s.received, s.program.state])).to.deep.equal([[['acc'], {}], [['a'], {}]]);
  });

  it('plan --target xdna2,host prints every placement, segment, transfer; --json the same', () => {
    const f = file('small.json', SMALL);
    const io = capture();
    expect(planCommand(f, { target: 'xdna2,host' }, io)).to.equal(0);
    expect(io.outs).to.include.members([
      'plan: program "small" on xdna2,host: 4 segments, 3 transfers (384 bytes)',
      '  eqn 1 matmul: host, segment 1 (xdna2 refused: CapabilityMissing op="matmul" capability="op.matmul")',
      '  segment 2: xdna2, eqns 2-3, 1 region, contexts 1 of 16, numerics Contract',
      '  acc2: segment 2 (xdna2) -> segment 3 (host), 128 bytes',
    ]);
    const jio = capture();
    expect(planCommand(f, { target: 'xdna2,host', json: true }, jio)).to.equal(0);
    const j = JSON.parse(jio.outs[0]!) as { targets: string[]; placements: { target: string; refusals: { target: string; error: { code: string } }[] }[]; segments: { target: string; contexts: { needed: number } }[]; transferBytes: number };
    expect(j.targets).to.deep.equal(['xdna2', 'host']);
    expect(j.placements.map((p) => p.target)).to.deep.equal(['xdna2', 'host', 'xdna2', 'xdna2', 'host']);
    expect(j.placements[4]!.refusals[0]).to.deep.equal({ target: 'xdna2', error: { code: 'CapabilityMissing', eqn: 4, op: 'convert', capability: 'op.convert' } });
    expect(j.segments.map((s) => s.target)).to.deep.equal(['xdna2', 'host', 'xdna2', 'host']);
    expect(j.transferBytes).to.equal(384);
  });

  it('a single target keeps its all-or-refused report, in its own JSON shape', () => {
    const io = capture();
    expect(planCommand(file('single.json', SMALL), { target: 'xdna2', json: true }, io)).to.equal(1);
    const j = JSON.parse(io.outs[0]!) as Record<string, unknown>;
    expect(Object.keys(j)).to.deep.equal(['program', 'target', 'part', 'admitted', 'refused', 'regions', 'contexts', 'numerics']);
    expect((j['refused'] as unknown[]).length).to.equal(2);
  });

  it('refuses the plan when no listed target admits an equation, with each target\'s refusal', () => {
    const p = { ...SMALL, eqns: [...SMALL.eqns, { op: 'all_reduce', in: ['c'], out: 'r', reduce: 'sum' }], results: ['r'] };
    const io = capture();
    expect(planCommand(file('collective.json', p), { target: 'xdna2,host', json: true }, io)).to.equal(1);
    const j = JSON.parse(io.outs[0]!) as { segments: unknown[]; refused: { eqn: number; refusals: { target: string; error: { code: string; capability?: string } }[] }[] };
    expect(j.segments).to.deep.equal([]);
    expect(j.refused.map((r) => [r.eqn, r.refusals.map((x) => x.target)])).to.deep.equal([[5, ['xdna2', 'host']]]);
    expect(j.refused[0]!.refusals.every((x) => x.error.code === 'CapabilityMissing')).to.equal(true);
  });

  it('refuses a target listed twice, or an empty name, as a usage error', () => {
    expect(() => parseTargetList('host,host')).to.throw(UsageError, /listed twice/);
    expect(() => parseTargetList('xdna2,')).to.throw(UsageError, /comma list/);
    expect(() => parseTargetList('xdna2,gpu')).to.throw(UsageError, /unknown target "gpu"/);
  });

  it('the Qwen3 decode program on xdna2,host: every equation placed, every segment and refusal listed', () => {
    const t = tinyQwen3Config();
    const c = configFromJson({
      model_type: 'qwen3', num_hidden_layers: t.layers, hidden_size: t.hidden, intermediate_size: t.intermediate,
      num_attention_heads: t.heads, num_key_value_heads: t.kvHeads, head_dim: t.headDim, vocab_size: t.vocab,
      tie_word_embeddings: true, max_position_embeddings: 4096,
    }, 'config.json');
    // Q8_0 matrices as the tiny model's GGUF binds them; the XDNA2 takes no quantized weight.
    const weights = new Map<string, BoundWeight>();
    for (const [k, shape] of expectedShapes(c, false)) weights.set(k, { dtype: shape.length === 1 ? 'f32' : 'q8_0', shape, file: '/m.gguf', offset: 0, length: 0 });
    const program = programToJson(buildProgram(c, weights, { tokens: 1, ctx: 16 }));
    const checked = checkProgram(parseProgram(program));
    // Planned as `plan` plans it: each device's contexts counted over its segments.
    const plan = partitionProgram(checked, parseTargetList('xdna2,host'), segmentFit);
    expect(plan.refused).to.deep.equal([]);
    expect(plan.limits).to.deep.equal([]);
    expect(plan.placements).to.have.length(checked.eqns.length);
    // Both targets take part, segments alternate, and every host equation carries the NPU's refusal.
    expect(new Set(plan.segments.map((s) => s.target))).to.deep.equal(new Set(['xdna2', 'host']));
    plan.segments.slice(1).forEach((s, k) => expect(s.target).to.not.equal(plan.segments[k]!.target));
    for (const p of plan.placements) expect(p.refusals.length, `eqn ${p.eqn} ${p.op} on ${String(p.target)}`).to.equal(p.target === 'host' ? 1 : 0);
    expect(plan.placements.some((p) => p.op === 'matmul' && p.target === 'host')).to.equal(true);
    expect(plan.placements.some((p) => p.op === 'row_kernel' && p.refusals[0]?.error.code === 'MissingBound')).to.equal(true);
    expect(plan.transfers.every((t) => t.fromTarget !== t.toTarget)).to.equal(true);

    const io = capture();
    expect(planCommand(file('decode.json', program), { target: 'xdna2,host' }, io)).to.equal(0);
    for (const s of plan.segments) expect(io.outs.some((l) => l.startsWith(`  segment ${s.index}: ${s.target}, `)), `segment ${s.index}`).to.equal(true);
    for (const p of plan.placements.filter((x) => x.target === 'host')) {
      expect(io.outs.some((l) => l.startsWith(`  eqn ${p.eqn} ${p.op}: host, segment ${p.segment} (xdna2 refused: ${p.refusals[0]!.error.code}`)), `eqn ${p.eqn}`).to.equal(true);
    }
    expect(io.outs.filter((l) => / -> segment \d+ /.test(l))).to.have.length(plan.transfers.length);
  });
});
