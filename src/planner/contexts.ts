/**
 * The hardware contexts of a partition, counted per target: a partitioned run opens one session per
 * segment, every session's artifacts hold contexts on its target's device at once, so a target's
 * segments together must fit its `contexts`. A target that is not the last listed sheds its smallest
 * segments to the later targets. A target that cannot (the last one) takes instead the smallest
 * segments of earlier targets that sit between two of its own, so that those two merge; when neither
 * is enough the plan is refused.
 */
import { ContextLimit } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { Target, TargetName } from '../targets/target.js';
import { admissionOf } from '../targets/target.js';

// partition.ts's Segment and TargetRefusal as far as the count reads them (it imports this file).
interface Segment {
  readonly index: number;
  readonly target: TargetName;
  readonly eqns: readonly number[];
}
interface TargetRefusal {
  readonly target: TargetName;
  readonly error: ContextLimit;
}

/** What the count decides: equations to pass on (with the refusal naming the bound), or a bound that refuses the plan. */
export type ContextVerdict =
  | { readonly kind: 'fits' }
  | { readonly kind: 'move'; readonly moves: readonly { readonly eqn: number; readonly refusal: TargetRefusal }[] }
  | { readonly kind: 'limit'; readonly error: ContextLimit };

/**
 * Checks the first target (in list order) whose segments need more contexts than it has. Only that one:
 * moving its segments merges the later targets' segments around them, so their counts change.
 * `needed[i]` is segment i's contexts; `passed` the fit refusals so far (a target that refused an
 * equation for its fit is no place to move it).
 */
export function checkContexts(
  checked: CheckedProgram,
  targets: readonly Target[],
  segments: readonly Segment[],
  needed: readonly number[],
  passed: ReadonlyMap<number, readonly { readonly target: TargetName }[]>,
): ContextVerdict {
  for (const [k, t] of targets.entries()) {
    const own = segments.filter((s) => s.target === t.name);
    const total = own.reduce((n, s) => n + needed[s.index]!, 0);
    if (total <= t.contexts) continue;
    const error = new ContextLimit(total, t.contexts, t.name);
    const takes = (l: Target) => (i: number) => admissionOf(l, checked.eqns[i]!).admitted && !(passed.get(i) ?? []).some((r) => r.target === l.name);
    // A segment can go on when a later target admits each of its equations and has not refused it for its fit.
    const later = targets.slice(k + 1);
    const movable = own.filter((s) => needed[s.index]! > 0 && s.eqns.every((i) => later.some((l) => takes(l)(i))));
    const shed = smallestUntil(movable, total, t.contexts, (s) => needed[s.index]!);
    if (shed !== null) return { kind: 'move', moves: shed.flatMap((s) => s.eqns.map((eqn) => ({ eqn, refusal: { target: t.name, error } }))) };
    // Else t takes other targets' segments that sit between two of its own: each merges those two,
    // saving the later one's contexts; the moved equations' refusal is on their own target, naming t's count.
    const between = segments.filter((s, i) => s.target !== t.name && segments[i - 1]?.target === t.name && segments[i + 1]?.target === t.name && s.eqns.every(takes(t)));
    const merged = smallestUntil(between, total, t.contexts, (s) => needed[s.index + 1]!);
    if (merged !== null && merged.length > 0) return { kind: 'move', moves: merged.flatMap((s) => s.eqns.map((eqn) => ({ eqn, refusal: { target: s.target, error } }))) };
    return { kind: 'limit', error };
  }
  return { kind: 'fits' };
}

/**
 * The fewest of `candidates`, fewest equations first (the least work sent elsewhere; the later segment
 * on a tie), whose `gain` in contexts brings `total` within `max`; null when all of them do not.
 */
function smallestUntil(candidates: readonly Segment[], total: number, max: number, gain: (s: Segment) => number): Segment[] | null {
  const chosen: Segment[] = [];
  let left = total;
  for (const s of [...candidates].sort((a, b) => a.eqns.length - b.eqns.length || b.index - a.index)) {
    if (left <= max) break;
    chosen.push(s);
    left -= gain(s);
  }
  return left <= max ? chosen : null;
}
