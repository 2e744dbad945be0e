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
    const later = targets.slice(k + 1);
    // A segment can go on when a later target admits each of its equations and has not refused it for its fit.
    const movable = (s: Segment) => s.eqns.every((i) => later.some((l) =>
      admissionOf(l, checked.eqns[i]!).admitted && !(passed.get(i) ?? []).some((r) => r.target === l.name)));
    // Fewest equations first (the least work sent to a slower device), the later segment on a tie.
    const candidates = own.filter((s) => needed[s.index]! > 0 && movable(s))
      .sort((a, b) => a.eqns.length - b.eqns.length || b.index - a.index);
    const chosen: Segment[] = [];
    let shed = 0;
    for (const s of candidates) {
      if (total - shed <= t.contexts) break;
      chosen.push(s);
      shed += needed[s.index]!;
    }
    if (total - shed <= t.contexts) {
      return { kind: 'move', moves: chosen.flatMap((s) => s.eqns.map((eqn) => ({ eqn, refusal: { target: t.name, error } }))) };
    }
    const merging = mergers(checked, t, segments, needed, passed, total);
    return merging.length > 0 ? { kind: 'move', moves: merging } : { kind: 'limit', error };
  }
  return { kind: 'fits' };
}

/**
 * For a target `t` over its contexts by `total`: the equations of the fewest, smallest segments of other
 * targets that sit between two of t's segments and whose equations t admits, moved to t so that each
 * merges two of t's segments into one (saving the later one's contexts). Each moved equation's refusal
 * is on the segment's own target, with t's ContextLimit (naming t) as the reason. Empty when not enough.
 */
function mergers(
  checked: CheckedProgram, t: Target, segments: readonly Segment[], needed: readonly number[],
  passed: ReadonlyMap<number, readonly { readonly target: TargetName }[]>, total: number,
): { readonly eqn: number; readonly refusal: TargetRefusal }[] {
  const error = new ContextLimit(total, t.contexts, t.name);
  const takes = (i: number) => admissionOf(t, checked.eqns[i]!).admitted && !(passed.get(i) ?? []).some((r) => r.target === t.name);
  const between = segments.filter((s, i) => s.target !== t.name && segments[i - 1]?.target === t.name && segments[i + 1]?.target === t.name && s.eqns.every(takes))
    .sort((a, b) => a.eqns.length - b.eqns.length || b.index - a.index);
  const chosen: Segment[] = [];
  let saved = 0;
  for (const s of between) {
    if (total - saved <= t.contexts) break;
    chosen.push(s);
    saved += needed[s.index + 1]!;
  }
  if (total - saved > t.contexts) return [];
  return chosen.flatMap((s) => s.eqns.map((eqn) => ({ eqn, refusal: { target: s.target, error } })));
}
