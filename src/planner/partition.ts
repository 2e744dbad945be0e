/**
 * Partitioned planning over a list of targets in order of preference (`xdna2,host`): each equation goes
 * to the first target whose admission table admits it, consecutive equations of one target form a
 * segment, and every value one segment defines and a later one reads crosses between them as a
 * transfer. An equation no listed target admits refuses the plan, with each target's refusal of it.
 * With a fit (the compiler's), an equation its segment's device cannot lay out goes on to the next
 * target, and so do a target's smallest segments when all of its segments together need more hardware
 * contexts than it has (src/planner/contexts.ts).
 * A list of one target is not partitioned: planProgram's all-or-refused rule is the one that holds.
 */
import type { EngineError } from '../errors/index.js';
import { UsageError } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { Arg, Eqn, Program } from '../ir/types.js';
import { eqnOuts, isLiteral, storageBytes } from '../ir/types.js';
import { NO_LIMITS } from '../ir/limits.js';
import { checkProgram } from '../ops/validate.js';
import { resolveTarget } from '../targets/index.js';
import type { Target, TargetName } from '../targets/target.js';
import { admissionOf } from '../targets/target.js';
import { checkContexts } from './contexts.js';
import { refusalError } from './plan.js';

/** Why an earlier target in the list did not take an equation. */
export interface TargetRefusal {
  readonly target: TargetName;
  readonly error: EngineError;
}

/** Where one equation went, and the refusals of every target listed before it. */
export interface EqnPlacement {
  readonly eqn: number;
  readonly op: string;
  /** Undefined when no listed target admits it. */
  readonly target?: TargetName;
  readonly segment?: number;
  readonly refusals: readonly TargetRefusal[];
}

/** A run of consecutive equations on one target: one session on its device. */
interface Segment {
  readonly index: number;
  readonly target: TargetName;
  /** Indices of the program's equations, ascending and contiguous. */
  readonly eqns: readonly number[];
}

/**
 * A value crossing between segments. `carried`: a state's next value, produced by one segment and
 * read as that state by another at the next step (so it crosses once per step, after the step).
 */
export interface Transfer {
  readonly value: string;
  readonly from: number;
  readonly to: number;
  readonly fromTarget: TargetName;
  readonly toTarget: TargetName;
  readonly bytes: number;
  readonly carried?: string;
}

export interface PartitionPlan {
  readonly targets: readonly TargetName[];
  readonly placements: readonly EqnPlacement[];
  /** Empty when an equation is refused by every target. */
  readonly segments: readonly Segment[];
  readonly transfers: readonly Transfer[];
  /** The equations no listed target admits, each with every target's refusal. */
  readonly refused: readonly EqnPlacement[];
  /** Bounds no equation can be moved for: a segment's ContextLimit, or a target's segments' together. */
  readonly limits: readonly EngineError[];
}

/** The targets of a `--target` value: one name, or a comma list in order of preference. */
export function parseTargetList(spec: string): Target[] {
  const names = spec.split(',').map((s) => s.trim());
  if (names.some((n) => n === '')) throw new UsageError(`--target takes a target or a comma list of targets, not ${JSON.stringify(spec)}`);
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw new UsageError(`target ${JSON.stringify(n)} is listed twice in ${JSON.stringify(spec)}`);
    seen.add(n);
  }
  return names.map((n) => resolveTarget(n));
}

/**
 * Whether a segment's program fits its target's device (its regions, its contexts), and the hardware
 * contexts its artifacts take there: the compiler's answer, handed in because the planner sits below
 * the compiler. An error naming an equation (a RegionLimit's `eqn`, an index into the segment's
 * program) passes that equation on to the next target.
 */
export type SegmentFit = (target: TargetName, segment: CheckedProgram) => SegmentFitAnswer;

/** What SegmentFit answers: the bound the segment passes, if any, and the contexts it needs. */
export interface SegmentFitAnswer {
  readonly error?: EngineError;
  readonly contexts: number;
}

/**
 * Plans every equation on the first target that admits it (and, with `fits`, whose device it fits,
 * its segments' contexts together within the target's: src/planner/contexts.ts); see the file's doc.
 */
export function partitionProgram(checked: CheckedProgram, targets: readonly Target[], fits?: SegmentFit): PartitionPlan {
  const passed = new Map<number, TargetRefusal[]>();
  const pass = (eqn: number, r: TargetRefusal) => passed.set(eqn, [...(passed.get(eqn) ?? []), r]);
  // Each round passes at least one equation on to a later target, so rounds are bounded. A round
  // passes on every segment's unfit equation at once (segments are laid out independently), so a big
  // program takes a few rounds, not one per equation.
  for (let round = 0; round <= checked.eqns.length * targets.length; round++) {
    const plan = placeAll(checked, targets, passed);
    if (fits === undefined || plan.refused.length > 0) return plan;
    const needed: number[] = [];
    let moved = false;
    for (const sp of segmentPrograms(checked, plan)) {
      // A segment of a program checked already: its values are the program's, not past its limits again.
      const fit: SegmentFitAnswer = fits(sp.segment.target, checkProgram(sp.program, NO_LIMITS));
      needed.push(fit.contexts);
      const err: EngineError | undefined = fit.error;
      if (err === undefined) continue;
      const local = (err.fields() as { eqn?: unknown }).eqn;
      if (typeof local !== 'number' || sp.segment.eqns[local] === undefined) return { ...plan, limits: [...plan.limits, err] };
      pass(sp.segment.eqns[local], { target: sp.segment.target, error: err });
      moved = true;
    }
    if (moved) continue;
    const verdict = checkContexts(checked, targets, plan.segments, needed, passed);
    if (verdict.kind === 'fits') return plan;
    if (verdict.kind === 'limit') return { ...plan, limits: [...plan.limits, verdict.error] };
    for (const m of verdict.moves) pass(m.eqn, m.refusal);
  }
  throw new RangeError('partitioning did not settle');
}

function placeAll(checked: CheckedProgram, targets: readonly Target[], passed: ReadonlyMap<number, readonly TargetRefusal[]>): PartitionPlan {
  const placements: EqnPlacement[] = [];
  const segments: { index: number; target: TargetName; eqns: number[] }[] = [];
  const refused: EqnPlacement[] = [];
  for (const e of checked.eqns) {
    const refusals: TargetRefusal[] = [];
    const fitRefusals = passed.get(e.index) ?? [];
    let chosen: TargetName | undefined;
    for (const t of targets) {
      const a = admissionOf(t, e);
      const unfit = fitRefusals.find((r) => r.target === t.name);
      if (a.admitted && unfit === undefined) { chosen = t.name; break; }
      refusals.push(a.admitted ? unfit! : { target: t.name, error: refusalError(e, a.refusal) });
    }
    if (chosen === undefined) {
      const p = { eqn: e.index, op: e.op, refusals };
      placements.push(p);
      refused.push(p);
      continue;
    }
    let seg = segments[segments.length - 1];
    if (seg?.target !== chosen) {
      seg = { index: segments.length, target: chosen, eqns: [] };
      segments.push(seg);
    }
    seg.eqns.push(e.index);
    placements.push({ eqn: e.index, op: e.op, target: chosen, segment: seg.index, refusals });
  }
  const names = targets.map((t) => t.name);
  if (refused.length > 0) return { targets: names, placements, segments: [], transfers: [], refused, limits: [] };
  return { targets: names, placements, segments, transfers: transfersOf(checked, segments), refused, limits: [] };
}

/** The segment that defines each equation output. */
function definers(checked: CheckedProgram, segments: readonly Segment[]): Map<string, number> {
  const at = new Map<string, number>();
  for (const s of segments) for (const i of s.eqns) for (const o of eqnOuts(checked.eqns[i]!.eqn)) at.set(o, s.index);
  return at;
}

function readsOf(e: Eqn): string[] {
  return e.in.filter((o): o is string => !isLiteral(o));
}

function transfersOf(checked: CheckedProgram, segments: readonly Segment[]): Transfer[] {
  const def = definers(checked, segments);
  const out: Transfer[] = [];
  const seen = new Set<string>();
  const bytesOf = (v: string) => {
    const t = checked.types.get(v)!;
    return storageBytes(t.dtype, t.shape);
  };
  const add = (value: string, from: number, to: number, carried?: string) => {
    const k = `${value}\u0000${to}\u0000${carried ?? ''}`;
    // A value between two segments of one target never crosses devices (the runner hands it on as it is).
    if (segments[from]!.target === segments[to]!.target || seen.has(k)) return;
    seen.add(k);
    out.push({ value, from, to, fromTarget: segments[from]!.target, toTarget: segments[to]!.target, bytes: bytesOf(value), ...(carried !== undefined ? { carried } : {}) });
  };
  for (const s of segments) {
    for (const i of s.eqns) for (const v of readsOf(checked.eqns[i]!.eqn)) {
      const from = def.get(v);
      if (from !== undefined) add(v, from, s.index);
    }
  }
  // A state whose next value one segment makes and another reads crosses back for the next step.
  for (const [st, next] of Object.entries(checked.program.state)) {
    const from = def.get(next);
    if (from === undefined) continue;
    for (const s of segments) {
      if (s.eqns.some((i) => readsOf(checked.eqns[i]!.eqn).includes(st))) add(next, from, s.index, st);
    }
  }
  return out;
}

/**
 * A segment as a program of its own, for its target's session: the program's args it reads, the
 * values earlier segments send it as activations (a carried state too), and as results the values
 * later segments, the caller or the next step need. A state stays a state of the segment when the
 * segment alone reads it and makes its next value; `carried` maps the others to their next values.
 */
export interface SegmentProgram {
  readonly segment: Segment;
  readonly program: Program;
  /** Values received from other segments or carried by the runner (activations of this program). */
  readonly received: readonly string[];
}

/** Each segment of a partition as a program of its own; see SegmentProgram. */
export function segmentPrograms(checked: CheckedProgram, plan: PartitionPlan): SegmentProgram[] {
  const prog = checked.program;
  const def = definers(checked, plan.segments);
  const argOf = new Map(prog.args.map((a) => [a.name, a]));
  const readers = new Map<string, Set<number>>();
  for (const s of plan.segments) for (const i of s.eqns) for (const v of readsOf(checked.eqns[i]!.eqn)) {
    let r = readers.get(v);
    if (!r) readers.set(v, r = new Set());
    r.add(s.index);
  }
  // The states a segment keeps as its own: it alone reads them and it makes their next value.
  const ownState = new Map<string, number>();
  for (const [st, next] of Object.entries(prog.state)) {
    const r = readers.get(st);
    const from = def.get(next);
    if (from !== undefined && r !== undefined && r.size === 1 && r.has(from)) ownState.set(st, from);
  }
  const needed = new Set<string>(prog.results);
  for (const [st, next] of Object.entries(prog.state)) if (!ownState.has(st)) needed.add(next);

  return plan.segments.map((s) => {
    const eqns = s.eqns.map((i) => checked.eqns[i]!.eqn);
    const defined = new Set(eqns.flatMap((e) => [...eqnOuts(e)]));
    const args: Arg[] = [];
    const received: string[] = [];
    const taken = new Set<string>();
    for (const e of eqns) for (const v of readsOf(e)) {
      if (defined.has(v) || taken.has(v)) continue;
      taken.add(v);
      const a = argOf.get(v);
      const t = checked.types.get(v)!;
      if (a !== undefined && (a.role !== 'state' || ownState.get(v) === s.index)) args.push(a);
      else {
        received.push(v);
        args.push({ name: v, role: 'activation', dtype: t.dtype, shape: t.shape });
      }
    }
    const results = [...defined].filter((v) => needed.has(v) || [...(readers.get(v) ?? [])].some((r) => r !== s.index));
    // A segment whose values nothing reads still runs (it is the program's); its last value is its result.
    if (results.length === 0) results.push(eqnOuts(eqns[eqns.length - 1]!).at(-1)!);
    const state: Record<string, string> = {};
    for (const [st, seg] of ownState) if (seg === s.index) state[st] = prog.state[st]!;
    const program: Program = { format: 'program@1', name: `${prog.name}#${s.index}`, args, eqns, results, state };
    return { segment: s, program, received };
  });
}
