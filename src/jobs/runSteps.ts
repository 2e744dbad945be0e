/**
 * One job's time on its device: open a session (fetching or compiling only the artifacts the device
 * lacks), then run every step, one at a time. Each step's activations are built for it, its results
 * streamed on `step` and kept only among the last `keep`, and (with verify) handed to the streamed
 * verification, so memory does not grow with the step count; each step has the job's deadline.
 */
import type { DeviceApi, OpenReply } from '../actors/deviceActor.js';
import type { PlanReply } from '../actors/plannerActor.js';
import type { ActorSupervisor } from '../actors/supervisor.js';
import { DeadlineExceeded, DevicePoisoned, LoadFailed } from '../errors/index.js';
import type { StepInputs } from '../ir/inputsCodec.js';
import type { StepOutput, TensorMap } from '../oracle/types.js';
import type { WeightMap } from '../ir/values.js';
import type { Job, JobEvents, JobStage } from './job.js';
import { throwIfAborted } from './abort.js';
import { LastN } from './kept.js';
import type { StreamedVerification } from './reference.js';

/** A unit's artifact: from the cache, or compiled (`refused`: the cached one was refused, replace it). */
type ArtifactSource = (unit: number, refused: boolean) => Promise<{ hit: boolean; bytes: Uint8Array; ms: number }>;

/** What runSteps needs of the engine and the job. */
export interface StepRun {
  readonly job: Job;
  readonly planned: PlanReply;
  readonly inputs: StepInputs;
  readonly device: ActorSupervisor<DeviceApi>;
  readonly deadlineMs: number;
  readonly keep: number;
  readonly verifier: StreamedVerification | undefined;
  readonly artifact: ArtifactSource;
  /** The job's abort: checked before every step (a step in flight runs to its end), the session then closed. */
  readonly signal?: AbortSignal | undefined;
}

/** What ran: the last step's output, the kept steps' results, and how the artifacts were found. */
export interface StepsRan {
  readonly last: StepOutput | undefined;
  readonly kept: readonly TensorMap[];
  readonly simulated: boolean;
  readonly cacheHit: boolean;
}

/** What opening a session on a device needs: the planned program, its weights and initial state, and its artifacts. */
export interface OpenOn {
  readonly planned: PlanReply;
  readonly weights: WeightMap;
  readonly state: TensorMap;
  /** States missing from `state` start zeroed. */
  readonly zeroState?: boolean;
  readonly device: ActorSupervisor<DeviceApi>;
  readonly deadlineMs: number;
  readonly artifact: ArtifactSource;
  /** The job's stages (cache-hit, compiled, loaded), if a job is watching. */
  // Spelt out: Job.stage is @internal, so `Job['stage']` would dangle in the emitted types.
  readonly stage?: <K extends JobStage>(name: K, ...payload: Parameters<JobEvents[K]>) => void;
}

/**
 * Opens a session over the planned program's artifacts on the device, fetching or compiling only the
 * artifacts it lacks; a cached artifact the device refuses is recompiled and replaced, once.
 */
export async function openOnDevice(r: OpenOn): Promise<{ readonly opened: OpenReply; readonly cacheHit: boolean }> {
  const { planned, device, deadlineMs } = r;
  const stageOf = r.stage ?? (() => undefined);
  const program = planned.checked.program;
  const init = {
    target: planned.plan.target,
    weights: r.weights,
    state: r.state,
    ...(r.zeroState === true ? { zeroState: true } : {}),
    activations: program.args.filter((a) => a.role === 'activation').map((a) => a.name),
    stateNext: program.state,
    results: program.results,
  };
  const keys = planned.units.map((u) => u.key).join(',');
  const bare = planned.units.map((u) => ({ key: u.key, wiring: u.wiring }));
  // A device worker still starting (or restarting after a crash) holds no artifact, so it will ask for
  // all of them: they are fetched (or compiled) while it starts rather than after. Unawaited when the
  // open fails.
  const starting = device.state === 'starting' || device.state === 'restarting';
  const early = starting ? planned.units.map((_, i) => r.artifact(i, false)) : undefined;
  for (const p of early ?? []) p.catch(() => undefined);
  let opened = await device.call('open', [{ ...init, units: bare }], { deadlineMs });
  let cacheHit = true;
  if ('needArtifacts' in opened) {
    const need = opened.needArtifacts;
    const arts = await Promise.all(need.map((i) => early?.[i] ?? r.artifact(i, false)));
    const stage = (hit: boolean, ms: number) => {
      if (hit) stageOf('cache-hit', { key: keys });
      else stageOf('compiled', { key: keys, ms });
    };
    cacheHit = arts.every((a) => a.hit);
    stage(cacheHit, arts.reduce((n, a) => n + a.ms, 0));
    const withBytes = (bytes: (Uint8Array | undefined)[]) => bare.map((u, i) => (bytes[i] ? { ...u, artifact: bytes[i] } : u));
    const given: (Uint8Array | undefined)[] = [];
    need.forEach((i, j) => { given[i] = arts[j]!.bytes; });
    try {
      opened = await device.call('open', [{ ...init, units: withBytes(given) }], { deadlineMs });
    } catch (e) {
      // Cached artifacts the device refuses are recompiled and replaced, once.
      if (!(e instanceof LoadFailed) || !cacheHit) throw e;
      const fresh = await Promise.all(need.map((i) => r.artifact(i, true)));
      need.forEach((i, j) => { given[i] = fresh[j]!.bytes; });
      cacheHit = false;
      stage(false, fresh.reduce((n, a) => n + a.ms, 0));
      opened = await device.call('open', [{ ...init, units: withBytes(given) }], { deadlineMs });
    }
  } else {
    // The device still holds every artifact loaded: nothing to read or compile.
    stageOf('cache-hit', { key: keys });
  }
  if ('needArtifacts' in opened) throw new LoadFailed(device.name, 'the device asked again for artifacts it was given');
  stageOf('loaded', { device: opened.device, simulated: opened.simulated, fileWeights: opened.fileWeights });
  return { opened, cacheHit };
}

/** Opens the session and runs every step; see the file's doc. */
export async function runSteps(r: StepRun): Promise<StepsRan> {
  const { job, planned, inputs, device, deadlineMs } = r;
  const program = planned.checked.program;
  const { opened, cacheHit } = await openOnDevice({
    planned, weights: inputs.weights, state: inputs.state, device, deadlineMs, artifact: r.artifact,
    stage: job.stage.bind(job),
  });

  const kept = new LastN<TensorMap>(r.keep);
  let lastOut: StepOutput | undefined;
  let closed = false;
  try {
    for (let i = 0; i < inputs.count; i++) {
      throwIfAborted(r.signal);
      const last = i === inputs.count - 1;
      const out = await replay(device, opened.session, inputs.step(i), program.results, deadlineMs, last);
      closed = last;
      lastOut = out;
      kept.push(out.results);
      job.stage('step', { index: i, results: out.results });
      await r.verifier?.add(i, out);
    }
  } finally {
    if (!closed && device.state === 'ready') void device.call('close', [opened.session]).catch(() => undefined);
  }
  return { last: lastOut, kept: kept.toArray(), simulated: opened.simulated, cacheHit };
}

/** One step on the device under its deadline; a miss recycles the device actor. */
export async function replay(device: ActorSupervisor<DeviceApi>, session: number, acts: TensorMap, results: readonly string[], deadlineMs: number, last: boolean, readState = true): Promise<StepOutput> {
  try {
    return await device.call('replay', [session, acts, results, deadlineMs, last, readState], { deadlineMs });
  } catch (e) {
    // The device's own timer may fire before ours: it is poisoned all the same, so recycle its actor.
    if (e instanceof DeadlineExceeded || e instanceof DevicePoisoned) device.recycle();
    throw e;
  }
}
