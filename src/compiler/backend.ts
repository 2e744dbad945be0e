/**
 * What the engine needs of a target's compiler: its identity (recorded in every cache key), how a
 * planned program splits into artifacts ("units", one hardware context each) and how each is wired to
 * the program's values, and the compile step itself, which runs in a compiler pool worker.
 */
import type { RegionLimit } from '../errors/index.js';
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

/** A host arena of a region and the tensors at their offsets in it. */
interface ArenaSummary {
  readonly name: string;
  readonly direction: 'in' | 'out';
  readonly bytes: number;
  readonly tensors: readonly { readonly value: string; readonly offset: number; readonly bytes: number }[];
}

/**
 * One region (one artifact) as `plan` reports it; `usage`, `closedBy`, `tiles` and `arenas` only where
 * the compiler models them (the XDNA2's regions).
 */
export interface RegionSummary {
  readonly index: number;
  readonly eqns: readonly number[];
  readonly usage?: {
    readonly tiles: number;
    readonly streamsIn: number;
    readonly streamsOut: number;
    readonly streamsPerTile: number;
    readonly tileLocalBytes: number;
  };
  readonly closedBy?: string;
  /** Each equation's compute tile, [column, row]. */
  readonly tiles?: readonly { readonly eqn: number; readonly tile: readonly [number, number] }[];
  readonly arenas?: readonly ArenaSummary[];
}

/** How a program splits into artifacts: its regions, a bound one equation passed, the contexts needed. */
export interface Layout {
  readonly regions: RegionSummary[];
  readonly limit?: RegionLimit;
  /** `max` null: the program is always one artifact, so the device's contexts never bound it. */
  readonly contexts: { readonly needed: number; readonly max: number | null };
}

/** The layout of a backend that compiles a whole program into one artifact. */
export function wholeProgramLayout(checked: CheckedProgram, admitted: boolean): Layout {
  // Regions exist only for a program admitted whole: a refused equation has no artifact to go in.
  if (!admitted) return { regions: [], contexts: { needed: 0, max: null } };
  return { regions: [{ index: 0, eqns: checked.eqns.map((e) => e.index) }], contexts: { needed: 1, max: null } };
}

export interface Backend {
  readonly target: Target;
  readonly compiler: CompilerId;
  /** Compiler options, recorded in the cache identity. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The program's artifacts, in run order. */
  units(checked: CheckedProgram, plan: Plan): UnitPlan[];
  /** The program's regions and contexts for `plan` (`admitted`: every equation is admitted). */
  layout(checked: CheckedProgram, admitted: boolean): Layout;
  /** Compiles unit `unit` of the plan into the bytes its device loads. */
  compile(checked: CheckedProgram, plan: Plan, unit: number): Uint8Array;
}
