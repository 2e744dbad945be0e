/**
 * The job API: createEngine() starts (lazily) the planner, blob cache, compiler pool, oracle pool and
 * one actor per device, each in its own worker under a supervisor; submit() runs a job through them.
 * Every submitted job settles, with its results or a typed error, and close() leaves no worker running.
 */
import { cpus } from 'node:os';
import PQueue from 'p-queue';
import { ActorCrashed, DeadlineExceeded, DevicePoisoned, EngineClosed, EngineError, LoadFailed } from '../errors/index.js';
import type { ActorPool } from '../actors/pool.js';
import { createPool } from '../actors/pool.js';
import type { ActorSupervisor } from '../actors/supervisor.js';
import { superviseActor } from '../actors/supervisor.js';
import type { RestartIntensity } from '../actors/intensity.js';
import type { PlannerApi, PlanReply } from '../actors/plannerActor.js';
import type { CacheApi } from '../actors/cacheActor.js';
import type { CompileTask } from '../actors/compileTask.js';
import type { OracleTask } from '../actors/oracleTask.js';
import type { ChaosOptions, DeviceApi, DeviceActorOptions, DeviceMode, FaultPlan } from '../actors/deviceActor.js';
import { defaultCacheDir } from '../cache/defaultDir.js';
import type { DeviceKind } from '../devices/device.js';
import { DEVICES } from '../devices/registry.js';
import type { FaultOptions } from '../devices/faults.js';
import { decodeInputs } from '../ir/inputsCodec.js';
import { checkJsonDepth, resolveLimits, type Limits } from '../ir/limits.js';
import type { Tensor } from '../ir/tensor.js';
import { encodeTensor } from '../ir/tensorCodec.js';
import type { ProgramInputs, StepOutput, TensorMap } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import { Job } from './job.js';
import type { JobResult } from './job.js';
import { inputsJsonOf, programJsonOf, type ProgramSource } from './inputs.js';
import { verifySteps } from './verify.js';

export interface DeviceConfig {
  /** The hardware, its simulator, or the hardware when this machine has it (default 'auto'). */
  readonly mode?: DeviceMode;
  readonly faults?: FaultOptions;
  readonly chaos?: ChaosOptions;
  readonly plan?: FaultPlan;
  readonly maxContexts?: number;
}

export interface EngineOptions {
  /** The blob cache directory; default `$NPU_OFFLOAD_CACHE_DIR`, else under `$XDG_CACHE_HOME` or `~/.cache`. */
  readonly cacheDir?: string;
  /** Compiler pool workers (default: 2, or 1 on a one-core machine). */
  readonly workers?: number;
  /** Oracle pool workers (default: as `workers`). */
  readonly oracleWorkers?: number;
  /** Restart intensity of every actor: at most `max` restarts in `windowMs`. */
  readonly restart?: RestartIntensity;
  /** The default deadline of one replay, in ms (default 30 000). */
  readonly deadlineMs?: number;
  /** Per device kind: fault injection and hardware context counts, for tests and soak runs. */
  readonly devices?: Partial<Record<DeviceKind, DeviceConfig>>;
  /** Size limits of every submitted program, over the defaults (src/ir/limits.ts, docs/LIMITS.md). */
  readonly limits?: Partial<Limits>;
}

export interface JobSpec {
  /** The program: the format's JSON form, a decoded Program, or a builder. */
  readonly program: ProgramSource;
  readonly target: TargetName | string;
  /** An inputs file (tensors on the wire; Tensor objects are accepted in their place). */
  readonly inputs?: unknown;
  readonly steps?: number;
  /** Run the oracle beside the device and compare every step's results under the numerics class. */
  readonly verify?: boolean;
  /** The deadline of each replay, in ms. */
  readonly deadlineMs?: number;
}

/** Summary of one program compiled by compileOnly (the farm's unit of work). */
export interface CompileOutcome {
  /** The cache keys of the program's artifacts. */
  readonly keys: readonly string[];
  /** True when every artifact was already in the cache. */
  readonly hit: boolean;
}

const here = (p: string) => new URL(p, import.meta.url);

/** How many planned programs the engine remembers (a warm job skips the planner's round trip). */
const PLAN_MEMO = 256;

export class Engine {
  readonly cacheDir: string;
  #opts: EngineOptions;
  #restart: RestartIntensity;
  #planner?: ActorSupervisor<PlannerApi>;
  #cache?: ActorSupervisor<CacheApi>;
  #compiler?: ActorPool<CompileTask, Uint8Array>;
  #oracle?: ActorPool<OracleTask, StepOutput[]>;
  #devices = new Map<DeviceKind, ActorSupervisor<DeviceApi>>();
  #inflight = new Set<Promise<unknown>>();
  #plans = new Map<string, PlanReply>();
  #queues = new Map<DeviceKind, PQueue>();
  #closed = false;
  #nextJob = 1;
  #limits: Limits;

  constructor(opts: EngineOptions = {}) {
    this.#limits = resolveLimits(opts.limits, 'limits');
    this.#opts = opts;
    this.cacheDir = opts.cacheDir ?? defaultCacheDir();
    this.#restart = opts.restart ?? { max: 5, windowMs: 60_000 };
  }

  get #workers(): number { return this.#opts.workers ?? Math.max(1, Math.min(2, cpus().length)); }

  #plannerActor() {
    return this.#planner ??= superviseActor<PlannerApi>({ name: 'planner', entry: here('../workers/planner.worker.js'), restart: this.#restart });
  }
  #cacheActor() {
    return this.#cache ??= superviseActor<CacheApi>({ name: 'cache', entry: here('../workers/cache.worker.js'), workerData: { dir: this.cacheDir }, restart: this.#restart });
  }
  #compilerPool() {
    return this.#compiler ??= createPool<CompileTask, Uint8Array>({ name: 'compiler', entry: here('../workers/compiler.worker.js'), workers: this.#workers, restart: this.#restart });
  }
  #oraclePool() {
    return this.#oracle ??= createPool<OracleTask, StepOutput[]>({ name: 'oracle', entry: here('../workers/oracle.worker.js'), workers: this.#opts.oracleWorkers ?? this.#workers, restart: this.#restart });
  }
  #deviceActor(kind: DeviceKind) {
    let d = this.#devices.get(kind);
    if (!d) {
      const cfg = this.#opts.devices?.[kind] ?? {};
      const workerData: DeviceActorOptions = { kind, ...cfg };
      d = superviseActor<DeviceApi>({ name: `device:${kind}`, entry: here('../workers/device.worker.js'), workerData, restart: this.#restart, poisonOnDeadline: true });
      this.#devices.set(kind, d);
    }
    return d;
  }

  /** The device actor of a kind, for observing its state (`poisoned`, `down`) and lifecycle events. */
  device(kind: DeviceKind): ActorSupervisor<DeviceApi> {
    return this.#deviceActor(kind);
  }

  /** Submits a job; the returned Job emits its stages and its `result` always settles. */
  submit(spec: JobSpec): Job {
    const job = new Job(this.#nextJob++);
    if (this.#closed) {
      queueMicrotask(() => job.fail(new EngineClosed()));
      return job;
    }
    const p = this.#run(job, spec).then((r) => job.succeed(r), (e: unknown) => job.fail(asEngineError(e)));
    this.#inflight.add(p);
    void p.finally(() => this.#inflight.delete(p));
    return job;
  }

  // Measured before anything walks it recursively (the memo's JSON.stringify, a worker's structured
  // clone): a program nested too deep is a ResourceLimit, not a stack overflow.
  #programJson(program: ProgramSource): unknown {
    checkJsonDepth(program, this.#limits);
    return programJsonOf(program);
  }

  /** Plans a program, answering a program it planned before (same JSON, same target) from memory. */
  async #plan(json: unknown, target: string): Promise<PlanReply> {
    const memoKey = `${target}\u0000${JSON.stringify(json)}`;
    const have = this.#plans.get(memoKey);
    if (have) {
      this.#plans.delete(memoKey);
      this.#plans.set(memoKey, have); // most recently used last
      return have;
    }
    const planned = await this.#plannerActor().call('plan', [json, target, this.#limits]);
    this.#plans.set(memoKey, planned);
    if (this.#plans.size > PLAN_MEMO) this.#plans.delete(this.#plans.keys().next().value!);
    return planned;
  }

  /** Unit `i`'s artifact: from the blob cache, or compiled and stored there (`refused`: replace it). */
  async #artifact(planned: PlanReply, i: number, refused = false): Promise<{ hit: boolean; bytes: Uint8Array; ms: number }> {
    const unit = planned.units[i]!;
    const cache = this.#cacheActor();
    if (refused) await cache.call('invalidate', [unit.identity]);
    else {
      const hit = await cache.call('get', [unit.identity]);
      if (hit !== null) return { hit: true, bytes: hit, ms: 0 };
    }
    const t0 = performance.now();
    const bytes = await this.#compilerPool().run({ target: planned.plan.target, programJson: planned.programJson, unit: i });
    const ms = performance.now() - t0;
    await cache.call('put', [unit.identity, bytes]);
    return { hit: false, bytes, ms };
  }

  /** Plans and compiles one program's artifacts into the cache without running it (the farm's job). */
  async compileOnly(program: ProgramSource, target: string): Promise<CompileOutcome> {
    if (this.#closed) throw new EngineClosed();
    const planned = await this.#plan(this.#programJson(program), target);
    const arts = await Promise.all(planned.units.map((_, i) => this.#artifact(planned, i)));
    return { keys: planned.units.map((u) => u.key), hit: arts.every((a) => a.hit) };
  }

  async #run(job: Job, spec: JobSpec): Promise<JobResult> {
    const planned = await this.#plan(this.#programJson(spec.program), spec.target);
    const target = planned.plan.target;
    job.stage('planned', { target, regions: planned.units.length });
    const inputs = decodeInputs(inputsJsonOf(spec.inputs), planned.checked, spec.steps);
    const reference = spec.verify === true
      ? this.#oraclePool().run({ programJson: planned.programJson, inputs })
      : undefined;
    // The comparison is awaited below; a reference that fails first must not be an unhandled rejection.
    reference?.catch(() => undefined);
    const kind: DeviceKind = target;
    const device = this.#deviceActor(kind);
    const queue = this.#queueOf(kind);
    const steps = await queue.add(() => this.#session(job, planned, inputs, device, spec.deadlineMs ?? this.#opts.deadlineMs ?? 30_000));

    let verification;
    if (reference) {
      verification = verifySteps(target, planned.checked, steps.outputs, await reference);
      job.stage('verified', verification);
    }
    const last = steps.outputs[steps.outputs.length - 1];
    return {
      results: wireable(last?.results ?? {}),
      state: wireable(last?.state ?? inputs.state),
      steps: steps.outputs.map((s) => wireable(s.results)),
      target,
      simulated: steps.simulated,
      cacheHit: steps.cacheHit,
      ...(verification ? { verification } : {}),
    };
  }

  /** Opens a session on the device (fetching or compiling only the artifacts it lacks) and runs every step. */
  async #session(job: Job, planned: PlanReply, inputs: ProgramInputs, device: ActorSupervisor<DeviceApi>, deadlineMs: number) {
    const program = planned.checked.program;
    const init = {
      target: planned.plan.target,
      weights: inputs.weights,
      state: inputs.state,
      activations: program.args.filter((a) => a.role === 'activation').map((a) => a.name),
      stateNext: program.state,
      results: program.results,
    };
    const bare = planned.units.map((u) => ({ key: u.key, wiring: u.wiring }));
    let opened = await device.call('open', [{ ...init, units: bare }], { deadlineMs });
    let cacheHit = true;
    if ('needArtifacts' in opened) {
      const need = opened.needArtifacts;
      const arts = await Promise.all(need.map((i) => this.#artifact(planned, i)));
      const stage = (hit: boolean, ms: number) => {
        if (hit) job.stage('cache-hit', { key: planned.units.map((u) => u.key).join(',') });
        else job.stage('compiled', { key: planned.units.map((u) => u.key).join(','), ms });
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
        const fresh = await Promise.all(need.map((i) => this.#artifact(planned, i, true)));
        need.forEach((i, j) => { given[i] = fresh[j]!.bytes; });
        cacheHit = false;
        stage(false, fresh.reduce((n, a) => n + a.ms, 0));
        opened = await device.call('open', [{ ...init, units: withBytes(given) }], { deadlineMs });
      }
    } else {
      // The device still holds every artifact loaded: nothing to read or compile.
      job.stage('cache-hit', { key: planned.units.map((u) => u.key).join(',') });
    }
    if ('needArtifacts' in opened) throw new LoadFailed(device.name, 'the device asked again for artifacts it was given');
    job.stage('loaded', { device: opened.device, simulated: opened.simulated, fileWeights: opened.fileWeights });

    const outputs: StepOutput[] = [];
    let closed = false;
    try {
      for (let i = 0; i < inputs.steps.length; i++) {
        const last = i === inputs.steps.length - 1;
        const out = await this.#replay(device, opened.session, inputs.steps[i]!, program.results, deadlineMs, last);
        closed = last;
        outputs.push(out);
        job.stage('step', { index: i, results: out.results });
      }
    } finally {
      if (!closed && device.state === 'ready') void device.call('close', [opened.session]).catch(() => undefined);
    }
    return { outputs, simulated: opened.simulated, cacheHit };
  }

  #queueOf(kind: DeviceKind): PQueue {
    let q = this.#queues.get(kind);
    if (!q) {
      // A session holds a hardware context at most, so sessions in flight stay within the device's count.
      q = new PQueue({ concurrency: this.#opts.devices?.[kind]?.maxContexts ?? DEVICES[kind].contexts });
      this.#queues.set(kind, q);
    }
    return q;
  }

  async #replay(device: ActorSupervisor<DeviceApi>, session: number, acts: TensorMap, results: readonly string[], deadlineMs: number, last: boolean): Promise<StepOutput> {
    try {
      return await device.call('replay', [session, acts, results, deadlineMs, last], { deadlineMs });
    } catch (e) {
      // The device's own timer may fire before ours: it is poisoned all the same, so recycle its actor.
      if (e instanceof DeadlineExceeded || e instanceof DevicePoisoned) device.recycle();
      throw e;
    }
  }

  /** Worker threads alive now, across every actor and pool (0 after close()). */
  liveThreads(): number {
    let n = 0;
    for (const d of this.#devices.values()) n += d.threadIds.length;
    for (const a of [this.#planner, this.#cache, this.#compiler, this.#oracle]) n += a?.threadIds.length ?? 0;
    return n;
  }

  /** Stops every actor; jobs still running fail with EngineClosed. Settles when no worker is left. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closing: Promise<unknown>[] = [];
    for (const d of this.#devices.values()) closing.push(d.close());
    if (this.#planner) closing.push(this.#planner.close());
    if (this.#compiler) closing.push(this.#compiler.destroy());
    if (this.#oracle) closing.push(this.#oracle.destroy());
    if (this.#cache) {
      const cache = this.#cache;
      // Let the cache close its database cleanly when it still can; a dead or busy one is terminated.
      closing.push(cache.call('close', [], { deadlineMs: 2000 }).catch(() => undefined).then(() => cache.close()));
    }
    await Promise.all(closing);
    await Promise.allSettled([...this.#inflight]);
  }
}

/**
 * Gives each tensor of a map a (non-enumerable) toJSON, so that JSON.stringify of a job's result writes
 * the format's tensors on the wire (`data` with "nan", "inf", "-0" where JSON has no number).
 */
function wireable(m: TensorMap): TensorMap {
  const out: Record<string, Tensor> = {};
  for (const [k, t] of Object.entries(m)) {
    out[k] = Object.defineProperty({ ...t }, 'toJSON', { value: () => encodeTensor(t, 'data'), enumerable: false });
  }
  return out;
}

/** Starts an engine. Actors start on first use, so an engine that only validates costs no threads. */
export function createEngine(opts: EngineOptions = {}): Engine {
  return new Engine(opts);
}

/** Any failure as the project's typed error; an unexpected one is named as the defect it is. */
export function asEngineError(e: unknown): EngineError {
  if (e instanceof EngineError) return e;
  return new ActorCrashed('engine', e instanceof Error ? `${e.name}: ${e.message}` : String(e));
}

export type { ProgramInputs };
