/**
 * What a target is: its name, the device kind that runs it, its hardware contexts, its admission table
 * (one row per op, the only place that decides whether the target admits an equation) and its numerics
 * policy. Each target's record is in its own folder (src/targets/<name>/); TARGET_NAMES is the list.
 */
import type { CheckedEqn } from '../ir/checked.js';
import type { DType, QuantDType } from '../ir/types.js';
import { isQuantized } from '../ir/types.js';
import type { NumericsClass } from '../numerics/classes.js';
import type { Tolerance } from '../numerics/compare.js';
import type { OpName } from '../ops/rule.js';
import type { OpContract } from './contract.js';
import type { StepContracts } from './rowBounds.js';

export const TARGET_NAMES = ['cpu', 'xdna2', 'npu4', 'host'] as const;
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

/**
 * How a target's results are judged against the oracle: the one place the plan, the verification of a
 * run and the docs take a program's numerics class and tolerances from (src/targets/numerics.ts).
 */
export type NumericsPolicy =
  /**
   * The admission table's per-op contracts, propagated through each program (propagate.ts); a row
   * kernel's bound is derived from `stepContracts`.
   */
  | { readonly kind: 'contracts'; readonly stepContracts: StepContracts }
  /** One class for every program, with a tolerance per result dtype. */
  | {
    readonly kind: 'class';
    readonly numericsClass: NumericsClass;
    readonly tolerances: { readonly [D in DType]: Tolerance };
    /** What an admitted equation computes, for people: `exact (the oracle itself)`. */
    readonly perEquation: string;
    /** The premise each float result's tolerance rests on, if any. */
    readonly premise?: string;
  };

/**
 * A target, as one record: everything the layers above (planner, compiler, devices, the engine, the
 * CLI) ask of it that is not code of their own layer. What is code of theirs (a backend, a device
 * factory) sits in one table per layer keyed by TargetName (`satisfies Record<TargetName, ...>`), so a
 * name added to TARGET_NAMES refuses to compile until every layer has its row.
 */
export interface Target {
  readonly name: TargetName;
  /** The device kind that runs this target's artifacts. */
  readonly device: 'cpu' | 'xdna2' | 'npu4' | 'host';
  /** Hardware contexts of its device: artifacts loaded at once. */
  readonly contexts: number;
  /** The device part recorded in every cache identity (e.g. `xdna2:aie2p`). */
  readonly part: string;
  readonly admission: AdmissionTable;
  readonly numerics: NumericsPolicy;
  /**
   * The quantized weight dtypes the target's device takes (docs/PROGRAM_FORMAT.md, "Quantized
   * dtypes"). An equation with a quantized operand of another dtype is refused (capability
   * `dtype.<name>`) before its op's row is asked, so a row only ever sees quantized operands its target
   * listed here.
   */
  readonly quantizedWeights: readonly QuantDType[];
}

export const ADMIT: Admission = { admitted: true };

/** Admits an equation under a numerical contract. */
export function admit(contract: OpContract): Admission {
  return { admitted: true, contract };
}

/**
 * The target's answer for one equation: its op's row, asked only when every quantized operand is of a
 * dtype the target's record lists (`quantizedWeights`). Everything that judges equations asks this.
 */
export function admissionOf(target: Target, e: CheckedEqn): Admission {
  for (const t of e.ins) {
    if (isQuantized(t.dtype) && !target.quantizedWeights.includes(t.dtype)) return refuse(`dtype.${t.dtype}`);
  }
  return target.admission[e.op](e);
}

/** A refusal naming the missing capability (a stable dotted name). */
export function refuse(capability: string): Admission {
  return { admitted: false, refusal: { kind: 'capability', capability } };
}
