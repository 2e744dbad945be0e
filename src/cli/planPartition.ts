/**
 * `plan --target a,b`: the partitioned report (src/planner/partition.ts). Each equation's target and
 * segment and the refusals that passed it on, each segment's regions, contexts and numerics class on
 * its target, the transfers between segments with their bytes, and the equations no target admits.
 * Exit 0 when every equation is placed and every segment fits its device, 1 otherwise.
 */
import { backendOf, type Layout } from '../compiler/index.js';
import { segmentFit } from '../compiler/fit.js';
import type { EngineError } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { Limits } from '../ir/limits.js';
import { checkProgram } from '../ops/validate.js';
import { partitionProgram, segmentPrograms, type EqnPlacement, type TargetRefusal, type Transfer } from '../planner/partition.js';
import { programNumerics } from '../targets/numerics.js';
import type { Target } from '../targets/target.js';
import type { Io } from './output.js';
import { EXIT, errorJson } from './output.js';

interface SegmentReport {
  readonly index: number;
  readonly target: string;
  readonly eqns: readonly number[];
  readonly layout: Layout;
  readonly numericsClass: string;
}

function fields(e: EngineError): string {
  return Object.entries(e.fields()).filter(([k]) => k !== 'eqn').map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`).join(' ');
}

const refusalText = (r: TargetRefusal) => `${r.target} refused: ${r.error.code} ${fields(r.error)}`.trimEnd();
const refusalJson = (r: TargetRefusal) => ({ target: r.target, error: errorJson(r.error).error });
const span = (eqns: readonly number[]) => (eqns.length === 1 ? `eqn ${eqns[0]}` : `eqns ${eqns[0]}-${eqns[eqns.length - 1]}`);

function transferText(t: Transfer): string {
  const what = t.carried === undefined ? t.value : `${t.value} (next ${t.carried}, carried to the next step)`;
  return `  ${what}: segment ${t.from} (${t.fromTarget}) -> segment ${t.to} (${t.toTarget}), ${t.bytes} bytes`;
}

function placementText(p: EqnPlacement): string {
  const where = p.target === undefined ? 'refused by every target' : `${p.target}, segment ${p.segment}`;
  const why = p.refusals.map(refusalText).join('; ');
  return `  eqn ${p.eqn} ${p.op}: ${where}${why === '' ? '' : ` (${why})`}`;
}

/** Plans `checked` over `targets` in order of preference, prints the report and returns the exit code. */
export function planPartitioned(checked: CheckedProgram, targets: readonly Target[], limits: Limits, json: boolean, io: Io): number {
  const plan = partitionProgram(checked, targets, segmentFit);
  const byName = new Map(targets.map((t) => [t.name, t]));
  const limitsHit: EngineError[] = [...plan.limits];
  const segments: SegmentReport[] = segmentPrograms(checked, plan).map((sp) => {
    const target = byName.get(sp.segment.target)!;
    const sub = checkProgram(sp.program, limits);
    const layout = backendOf(target.name).layout(sub, true);
    return { index: sp.segment.index, target: target.name, eqns: sp.segment.eqns, layout, numericsClass: programNumerics(sub, target).numericsClass };
  });
  const ok = plan.refused.length === 0 && limitsHit.length === 0;
  const total = plan.transfers.reduce((n, t) => n + t.bytes, 0);

  if (json) {
    io.out(JSON.stringify({
      program: checked.program.name,
      targets: plan.targets,
      placements: plan.placements.map((p) => ({ eqn: p.eqn, op: p.op, target: p.target ?? null, segment: p.segment ?? null, refusals: p.refusals.map(refusalJson) })),
      segments: segments.map((s) => ({ index: s.index, target: s.target, eqns: s.eqns, regions: s.layout.regions, contexts: s.layout.contexts, numerics: { class: s.numericsClass } })),
      transfers: plan.transfers,
      transferBytes: total,
      refused: plan.refused.map((p) => ({ eqn: p.eqn, op: p.op, refusals: p.refusals.map(refusalJson) })),
      limits: limitsHit.map((e) => errorJson(e).error),
    }));
    return ok ? EXIT.ok : EXIT.refused;
  }

  const head = plan.refused.length > 0
    ? `${plan.refused.length} equation${plan.refused.length === 1 ? '' : 's'} refused by every target`
    : `${segments.length} segment${segments.length === 1 ? '' : 's'}, ${plan.transfers.length} transfer${plan.transfers.length === 1 ? '' : 's'} (${total} bytes)`;
  io.out(`plan: program ${JSON.stringify(checked.program.name)} on ${plan.targets.join(',')}: ${head}`);
  io.out(`equations (${checked.eqns.length}):`);
  for (const p of plan.placements) io.out(placementText(p));
  io.out(`segments (${segments.length})${segments.length === 0 ? ': none until every equation is placed' : ':'}`);
  for (const s of segments) {
    const c = s.layout.contexts;
    io.out(`  segment ${s.index}: ${s.target}, ${span(s.eqns)}, ${s.layout.regions.length} region${s.layout.regions.length === 1 ? '' : 's'}, contexts ${c.needed}${c.max === null ? '' : ` of ${c.max}`}, numerics ${s.numericsClass}`);
  }
  io.out(`transfers (${plan.transfers.length}):`);
  for (const t of plan.transfers) io.out(transferText(t));
  io.out(`refused (${plan.refused.length + limitsHit.length}):`);
  for (const p of plan.refused) io.out(`  eqn ${p.eqn} ${p.op}: ${p.refusals.map(refusalText).join('; ')}`);
  for (const e of limitsHit) io.out(`  ${e.code} ${fields(e)}`);
  return ok ? EXIT.ok : EXIT.refused;
}
