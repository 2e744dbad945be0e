/**
 * The planner actor: parses and validates a program, plans it for a target, splits it into the
 * artifacts its backend compiles (each with its cache identity and key), and answers all of it.
 * Pure functions over plain data, so it is cheap to run in its own worker.
 */
import { UsageError } from '../errors/index.js';
import type { BlobIdentity } from '../cache/identity.js';
import { identityKey } from '../cache/identity.js';
import type { CompileOptions } from '../compiler/index.js';
import { loadBackend } from '../compiler/load.js';
import type { Wiring } from '../compiler/wiring.js';
import type { CheckedProgram } from '../ir/checked.js';
import { parseProgram, programToJson } from '../ir/codec.js';
import { checkProgram } from '../ops/validate.js';
import { resolveLimits, type Limits } from '../ir/limits.js';
import type { Plan } from '../planner/plan.js';
import { planProgram } from '../planner/plan.js';
import { resolveTarget } from '../targets/index.js';

/** One artifact of a planned program: its cache identity and key, and its wiring. */
interface PlannedUnit {
  readonly identity: BlobIdentity;
  readonly key: string;
  readonly wiring: Wiring;
}

export interface PlanReply {
  readonly checked: CheckedProgram;
  readonly plan: Plan;
  /** The program in the format's JSON form, as compilers take it. */
  readonly programJson: object;
  readonly units: readonly PlannedUnit[];
}

/**
 * Validates (under `limits`), plans and splits one program (JSON form) for a target; only that target's
 * backend is imported (the first plan for it in this thread imports it).
 */
export async function planJob(programJson: unknown, target: string, limits?: Limits, compile: CompileOptions = {}): Promise<PlanReply> {
  const t = resolveTarget(target);
  const backend = await loadBackend(t.name, compile);
  const lim = resolveLimits(limits);
  const checked = checkProgram(parseProgram(programJson, lim), lim);
  const plan = planProgram(checked, t);
  const units = backend.units(checked, plan).map((u) => {
    const identity: BlobIdentity = {
      device: t.part,
      compiler: backend.compiler.name,
      compilerVersion: backend.compiler.version,
      options: backend.options,
      region: u.region,
    };
    return { identity, key: identityKey(identity), wiring: u.wiring };
  });
  return { checked, plan, programJson: programToJson(checked.program), units };
}

export const plannerApi = {
  plan(programJson: unknown, target: string, limits?: Limits, compile?: CompileOptions): Promise<PlanReply> {
    if (typeof target !== 'string') throw new UsageError('target must be a string');
    return planJob(programJson, target, limits, compile);
  },
};
export type PlannerApi = typeof plannerApi;
