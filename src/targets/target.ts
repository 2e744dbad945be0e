/**
 * What a target is: its name, the device kind that runs it, and its admission table — one row per op,
 * the only place that decides whether the target admits an equation.
 */
import type { CheckedEqn } from '../ir/checked.js';
import type { OpName } from '../ops/rule.js';

export const TARGET_NAMES = ['cpu', 'xdna2', 'npu4'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export function isTargetName(s: string): s is TargetName {
  return (TARGET_NAMES as readonly string[]).includes(s);
}

/** A target's answer for one equation: admitted, or refused with the stable dotted capability it lacks. */
export type Admission =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly capability: string };

/** One row of an admission table: looks at the typed equation (dtypes, shapes, attributes). */
export type AdmissionRule = (e: CheckedEqn) => Admission;

export type AdmissionTable = { readonly [P in OpName]: AdmissionRule };

export interface Target {
  readonly name: TargetName;
  /** The device kind that runs this target's artifacts. */
  readonly device: 'cpu' | 'xdna2' | 'npu4';
  /** The device part recorded in every cache identity (e.g. `xdna2:aie2p`). */
  readonly part: string;
  readonly admission: AdmissionTable;
}

export const ADMIT: Admission = { admitted: true };

/** A refusal naming the missing capability. */
export function refuse(capability: string): Admission {
  return { admitted: false, capability };
}
