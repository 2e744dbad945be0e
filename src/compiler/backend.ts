/**
 * What the engine needs of a target's compiler: its identity (recorded in every cache key), how a
 * planned program splits into artifacts ("units", one hardware context each) and how each is wired to
 * the program's values, and the compile step itself, which runs in a compiler pool worker.
 */
import type { CheckedProgram } from '../ir/checked.js';
import type { Plan } from '../planner/plan.js';
import type { Target } from '../targets/target.js';
import type { Wiring } from './wiring.js';

export interface CompilerId {
  readonly name: string;
  readonly version: string;
}

/** One artifact of a program: what its cache identity records as the region, and its wiring. */
export interface UnitPlan {
  /** The program region with every constant's value, as the cache identity records it (JSON-able). */
  readonly region: unknown;
  readonly wiring: Wiring;
}

export interface Backend {
  readonly target: Target;
  readonly compiler: CompilerId;
  /** Compiler options, recorded in the cache identity. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The program's artifacts, in run order. */
  units(checked: CheckedProgram, plan: Plan): UnitPlan[];
  /** Compiles unit `unit` of the plan into the bytes its device loads. */
  compile(checked: CheckedProgram, plan: Plan, unit: number): Uint8Array;
}
