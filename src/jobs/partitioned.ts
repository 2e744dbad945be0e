/**
 * Running a partitioned program (`target: 'xdna2,host'`, src/planner/partition.ts): one session per
 * segment, opened on its target's device through Engine.openSession (weights uploaded once, a state the
 * segment owns carried on its device), and every step replays the segments in order. Each value a
 * segment sends to another device is recorded as a transfer with its bytes; a state whose next value is
 * made on one device and read on another is carried here between steps (recorded when it crosses).
 *
 * The supervisor's rules hold per device: a segment that misses its deadline poisons its own device
 * actor only (replay() recycles it), the run fails with DeadlineExceeded naming that device, and the
 * other devices' actors and sessions are untouched.
 */
import { throwIfAborted } from './abort.js';
import { segmentFit } from '../compiler/fit.js';
import { DeadlineExceeded, EngineError, InvalidOptions } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import { parseProgram } from '../ir/codec.js';
import { decodeStepInputs } from '../ir/inputsCodec.js';
import type { Tensor } from '../ir/tensor.js';
import { storageBytes } from '../ir/types.js';
import type { TensorMap } from '../ir/values.js';
import { checkProgram } from '../ops/validate.js';
import { parseTargetList, partitionProgram, segmentPrograms, type PartitionPlan, type SegmentProgram } from '../planner/partition.js';
import type { TargetName } from '../targets/target.js';
import type { DeviceSession, SessionSpec } from './deviceSession.js';
import type { Job, JobResult } from './job.js';
import { LastN } from './kept.js';
import { checkJobSpec, type CheckedJob } from './options.js';

/** What runPartitioned takes: a job spec whose target is a comma list in order of preference. */
export interface PartitionedSpec {
  readonly program: unknown;
  readonly target: string;
  readonly inputs?: unknown;
  readonly steps?: number;
  readonly deadlineMs?: number;
  readonly keepSteps?: number;
}

/** One value crossing between devices at one step. */
export interface RecordedTransfer {
  readonly step: number;
  readonly value: string;
  readonly from: number;
  readonly to: number;
  readonly fromDevice: TargetName;
  readonly toDevice: TargetName;
  readonly bytes: number;
  /** The state whose next value this is (it crossed for step `step`, made at the step before). */
  readonly carried?: string;
}

export interface PartitionedResult {
  readonly results: TensorMap;
  readonly state: TensorMap;
  readonly stepCount: number;
  /** The kept steps' results, as JobResult.steps. */
  readonly steps: readonly TensorMap[];
  readonly plan: PartitionPlan;
  /** Each segment's target and the device that ran it. */
  readonly segments: readonly { readonly index: number; readonly target: TargetName; readonly device: string; readonly simulated: boolean }[];
  readonly transfers: readonly RecordedTransfer[];
}

/** The plan of a partitioned job: the first refusal (or bound) refuses it, as a single target's would be. */
export function planPartitionedJob(checked: CheckedProgram, target: string): PartitionPlan {
  let targets;
  try {
    targets = parseTargetList(target);
  } catch (e) {
    throw e instanceof EngineError ? new InvalidOptions('target', e.message) : e;
  }
  const plan = partitionProgram(checked, targets, segmentFit);
  const first = plan.refused[0]?.refusals[0]?.error ?? plan.limits[0];
  if (first !== undefined) throw first;
  return plan;
}

/** What a partitioned run needs of the engine: its sessions (Engine satisfies it). */
export interface SessionOpener {
  openSession(spec: SessionSpec): Promise<DeviceSession>;
}

/** Plans, opens every segment's session and runs every step; see the file's doc. */
export function runPartitioned(engine: SessionOpener, spec: PartitionedSpec): Promise<PartitionedResult> {
  return runChecked(engine, checkJobSpec(spec));
}

/**
 * A submitted job whose target is a list: the engine's job stages (`planned`, `step`) and its result,
 * `target` the first listed target and `partition` the segments and the transfers that ran. Sessions
 * do not report their cache use, so `cacheHit` is false; `verify` is refused (InvalidOptions) for now.
 */
export async function partitionedJob(engine: SessionOpener, job: Job, spec: CheckedJob, signal?: AbortSignal): Promise<JobResult> {
  const r = await runChecked(engine, spec, (plan) => { job.stage('planned', { target: plan.targets[0]!, regions: plan.segments.length }); }, (index, results) => { job.stage('step', { index, results }); }, signal);
  return {
    results: r.results, state: r.state, stepCount: r.stepCount, steps: r.steps, target: r.plan.targets[0]!,
    simulated: r.segments.some((s) => s.simulated), cacheHit: false,
    partition: { segments: r.segments, transfers: r.transfers },
  };
}

async function runChecked(engine: SessionOpener, job: CheckedJob, onPlan?: (p: PartitionPlan) => void, onStep?: (i: number, r: TensorMap) => void, signal?: AbortSignal): Promise<PartitionedResult> {
  if (job.verify) throw new InvalidOptions('verify', 'a partitioned job is not verified yet: compare with the cpu target\'s run');
  const checked = checkProgram(parseProgram(job.programJson));
  const plan = planPartitionedJob(checked, job.target);
  onPlan?.(plan);
  const inputs = decodeStepInputs(job.inputsJson, checked, job.steps);
  const subs = segmentPrograms(checked, plan);
  const defined = new Map<string, number>();
  for (const sp of subs) for (const r of sp.program.results) defined.set(r, sp.segment.index);
  const stateNext = Object.entries(checked.program.state);
  // A state no segment keeps as its own travels here, from the segment that makes it to those that read it.
  const carried = new Map<string, Tensor>();
  for (const [st] of stateNext) if (!subs.some((sp) => st in sp.program.state)) carried.set(st, inputs.state[st]!);

  const sessions: DeviceSession[] = [];
  const transfers: RecordedTransfer[] = [];
  const kept = new LastN<TensorMap>(job.keepSteps);
  let results: TensorMap = {};
  const ownState: Record<string, Tensor> = {};
  try {
    for (const sp of subs) sessions.push(await openSegment(engine, sp, job.inputsJson as Readonly<Record<string, unknown>>, inputs.state, job.deadlineMs));
    for (let i = 0; i < inputs.count; i++) {
      // An aborted job stops between steps; the sessions close below.
      throwIfAborted(signal);
      const acts = inputs.step(i);
      const values = new Map<string, Tensor>();
      const last = i === inputs.count - 1;
      for (const [k, sp] of subs.entries()) {
        const given: Record<string, Tensor> = {};
        for (const a of sp.program.args) {
          if (a.role !== 'activation') continue;
          const v = values.get(a.name) ?? carried.get(a.name) ?? acts[a.name];
          if (v === undefined) throw new RangeError(`segment ${k} has no value for ${a.name}`);
          given[a.name] = v;
          const from = defined.get(a.name) ?? carriedFrom(a.name);
          if (from !== undefined && plan.segments[from]!.target !== sp.segment.target && (values.has(a.name) || i > 0)) {
            transfers.push(transferOf(i, a.name, from, k, values.has(a.name) ? undefined : a.name));
          }
        }
        const out = await stepOn(sessions[k]!, given, last && Object.keys(sp.program.state).length > 0);
        for (const [n, t] of Object.entries(out.results)) values.set(n, t);
        if (out.state) Object.assign(ownState, out.state);
      }
      results = Object.fromEntries(checked.program.results.map((r) => [r, values.get(r) ?? acts[r] ?? carried.get(r)!]));
      kept.push(results);
      onStep?.(i, results);
      for (const [st, next] of stateNext) {
        if (!carried.has(st)) continue;
        carried.set(st, values.get(next) ?? acts[next] ?? carried.get(next) ?? inputs.state[next]!);
      }
    }
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
  }
  const state: TensorMap = Object.fromEntries(stateNext.map(([st]) => [st, carried.get(st) ?? ownState[st] ?? inputs.state[st]!]));
  return {
    results, state, stepCount: inputs.count, steps: kept.toArray(), plan,
    segments: subs.map((sp, k) => ({ index: k, target: sp.segment.target, device: sessions[k]!.deviceName, simulated: sessions[k]!.simulated })),
    transfers,
  };

  // The segment that makes a carried state's next value (what crosses, under the state's name).
  function carriedFrom(name: string): number | undefined {
    const next = checked.program.state[name];
    return carried.has(name) && next !== undefined ? defined.get(next) : undefined;
  }
  function transferOf(step: number, name: string, from: number, to: number, state?: string): RecordedTransfer {
    const t = checked.types.get(name)!;
    const value = state === undefined ? name : checked.program.state[state]!;
    return {
      step, value, from, to, fromDevice: plan.segments[from]!.target, toDevice: plan.segments[to]!.target,
      bytes: storageBytes(t.dtype, t.shape), ...(state === undefined ? {} : { carried: state }),
    };
  }
}

// Weights go as the caller's inputs file gave them (a file range binds again on the segment's device).
function openSegment(engine: SessionOpener, sp: SegmentProgram, weights: Readonly<Record<string, unknown>>, state: TensorMap, deadlineMs: number | undefined): Promise<DeviceSession> {
  const inputs: Record<string, unknown> = {};
  for (const a of sp.program.args) {
    if (a.role === 'weight') inputs[a.name] = weights[a.name];
    if (a.role === 'state') inputs[a.name] = state[a.name];
  }
  return engine.openSession({ program: sp.program, target: sp.segment.target, inputs, ...(deadlineMs !== undefined ? { deadlineMs } : {}) });
}

/** One segment's step; a missed deadline names the device that missed it. */
async function stepOn(s: DeviceSession, acts: Readonly<Record<string, Tensor>>, readState: boolean): Promise<{ results: TensorMap; state?: TensorMap }> {
  try {
    return await s.step(acts, { state: readState });
  } catch (e) {
    if (e instanceof DeadlineExceeded && e.device === '') throw new DeadlineExceeded(e.deadlineMs, s.deviceName || s.target);
    throw e;
  }
}
