/**
 * What a target is: its name, the device kind that runs it, and its admission table — one row per op,
 * the only place that decides whether the target admits an equation.
 */
import type { CheckedEqn } from '../ir/checked.js';
import type { OpName } from '../ops/rule.js';
import type { OpContract } from './contract.js';

export const TARGET_NAMES = ['cpu', 'xdna2', 'npu4'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export function isTargetName(s: string): s is TargetName {
  return (TARGET_NAMES as readonly string[]).includes(s);
}

/**
 * Why a target refuses an equation; the planner turns each kind into its typed error (the program
 * format's error table): CapabilityMissing, MissingBound, MissingContract, NarrowingRange, IntegerToFloat.
 */
export type Refusal =
  | { readonly kind: 'capability'; readonly capability: string }
  | { readonly kind: 'missing-bound'; readonly step: number; readonly bound: string }
  | { readonly kind: 'missing-contract' }
  | { readonly kind: 'narrowing-range'; readonly value: number }
  | { readonly kind: 'integer-to-float' };

/**
 * A target's answer for one equation: admitted (with the numerical contract the target publishes for
 * it, when it is not the oracle itself), or refused with the reason.
 */
export type Admission =
  | { readonly admitted: true; readonly contract?: OpContract }
  | { readonly admitted: false; readonly refusal: Refusal };

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

/** Admits an equation under a numerical contract. */
export function admit(contract: OpContract): Admission {
  return { admitted: true, contract };
}

/** A refusal naming the missing capability (a stable dotted name). */
export function refuse(capability: string): Admission {
  return { admitted: false, refusal: { kind: 'capability', capability } };
}
