/**
 * The job API: createEngine() starts (lazily) the planner, blob cache, compiler pool, oracle pool and
 * one actor per device, each in its own worker under a supervisor; submit() runs a job through them.
 * Every submitted job settles, with its results or a typed error, and close() leaves no worker running.
 */
import { cpus } from 'node:os';
import PQueue from 'p-queue';
import { ActorCrashed, DeadlineExceeded, DevicePoisoned, EngineClosed, EngineError, LoadFailed } from '../errors.js';
import type { ActorPool } from '../actors/pool.js';
import { createPool } from '../actors/pool.js';
import type { ActorSupervisor } from '../actors/supervisor.js';
import { superviseActor } from '../actors/supervisor.js';
import type { RestartIntensity } from '../actors/intensity.js';
import type { PlannerApi, PlanReply } from '../actors/plannerActor.js';
import type { CacheApi } from '../actors/cacheActor.js';
import type { CompileTask } from '../actors/compileTask.js';
import type { OracleTask } from '../actors/oracleTask.js';
import type { ChaosOptions, DeviceApi, DeviceActorOptions, FaultPlan } from '../actors/deviceActor.js';
import type { BlobIdentity } from '../cache/identity.js';
import { identityKey } from '../cache/identity.js';
import { defaultCacheDir } from '../cache/defaultDir.js';
import { CPU_COMPILER } from '../compiler/cpu.js';
import type { DeviceKind } from '../devices/device.js';
import { CPU_DEFAULT_CONTEXTS } from '../devices/cpuDevice.js';
import type { FaultOptions } from '../devices/faults.js';
import { decodeInputs } from '../ir/inputsCodec.js';
import type { ProgramInputs, StepOutput, TensorMap } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import { Job } from './job.js';
import type { JobResult } from './job.js';
import { inputsJsonOf, programJsonOf, type ProgramSource } from './inputs.js';
import { verifySteps } from './verify.js';

export interface DeviceConfig {
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
  readonly key: string;
  readonly hit: boolean;
}

const here = (p: string) => new URL(p, import.meta.url);

/** How many planned programs the engine remembers (a warm job skips the planner's round trip). */
const PLAN_MEMO = 256;

/** A plan with the identity its artifact is cached under. */
interface Planned extends PlanReply {
  readonly identity: BlobIdentity;
  readonly key: string;
}

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
  #plans = new Map<string, Planned>();
  #queues = new Map<DeviceKind, PQueue>();
  #closed = false;
  #nextJob = 1;

  constructor(opts: EngineOptions = {}) {
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


  /** Plans a program, answering a program it planned before (same JSON, same target) from memory. */
  async #plan(json: unknown, target: string): Promise<Planned> {
    const memoKey = `${target}\u0000${JSON.stringify(json)}`;
    const have = this.#plans.get(memoKey);
    if (have) {
      this.#plans.delete(memoKey);
      this.#plans.set(memoKey, have); // most recently used last
      return have;
    }
    const reply = await this.#plannerActor().call('plan', [json, target]);
    const identity: BlobIdentity = {
      device: reply.plan.part,
      compiler: CPU_COMPILER.name,
      compilerVersion: CPU_COMPILER.version,
      options: {},
      region: { program: reply.programJson, eqns: reply.plan.regions.map((r) => r.eqns) },
    };
    const planned: Planned = { ...reply, identity, key: identityKey(identity) };
    this.#plans.set(memoKey, planned);
    if (this.#plans.size > PLAN_MEMO) this.#plans.delete(this.#plans.keys().next().value!);
    return planned;
  }

  /** The artifact of a planned program: from the blob cache, or compiled and stored there. */
  async #artifact(planned: Planned, refused = false): Promise<{ hit: boolean; bytes: Uint8Array; ms: number }> {
    const cache = this.#cacheActor();
    if (refused) await cache.call('invalidate', [planned.identity]);
    else {
      const hit = await cache.call('get', [planned.identity]);
      if (hit !== null) return { hit: true, bytes: hit, ms: 0 };
    }
    const t0 = performance.now();
    const bytes = await this.#compilerPool().run({ target: planned.plan.target, programJson: planned.programJson });
    const ms = performance.now() - t0;
    await cache.call('put', [planned.identity, bytes]);
    return { hit: false, bytes, ms };
  }

  /** Plans and compiles one program into the cache without running it (the compile farm's job). */
  async compileOnly(program: ProgramSource, target: string): Promise<CompileOutcome> {
    if (this.#closed) throw new EngineClosed();
    const planned = await this.#plan(programJsonOf(program), target);
    const { hit } = await this.#artifact(planned);
    return { key: planned.key, hit };
  }

  async #run(job: Job, spec: JobSpec): Promise<JobResult> {
    const planned = await this.#plan(programJsonOf(spec.program), spec.target);
    const target = planned.plan.target;
    job.stage('planned', { target, regions: planned.plan.regions.length });
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
      results: last?.results ?? {},
      state: last?.state ?? inputs.state,
      steps: steps.outputs.map((s) => s.results),
      target,
      simulated: steps.simulated,
      cacheHit: steps.cacheHit,
      ...(verification ? { verification } : {}),
    };
  }

  /** Opens a session on the device (fetching or compiling the artifact only if the device lacks it) and runs every step. */
  async #session(job: Job, planned: Planned, inputs: ProgramInputs, device: ActorSupervisor<DeviceApi>, deadlineMs: number) {
    const program = planned.checked.program;
    const req = {
      key: planned.key,
      target: planned.plan.target,
      weights: inputs.weights,
      state: inputs.state,
      activations: program.args.filter((a) => a.role === 'activation').map((a) => a.name),
      stateArgs: program.args.filter((a) => a.role === 'state').map((a) => a.name),
    };
    let opened = await device.call('open', [req], { deadlineMs });
    let cacheHit = true;
    if ('needArtifact' in opened) {
      const art = await this.#artifact(planned);
      cacheHit = art.hit;
      if (art.hit) job.stage('cache-hit', { key: planned.key });
      else job.stage('compiled', { key: planned.key, ms: art.ms });
      try {
        opened = await device.call('open', [{ ...req, artifact: art.bytes }], { deadlineMs });
      } catch (e) {
        // A cached artifact the device refuses is recompiled and replaced, once.
        if (!(e instanceof LoadFailed) || !art.hit) throw e;
        const fresh = await this.#artifact(planned, true);
        cacheHit = false;
        job.stage('compiled', { key: planned.key, ms: fresh.ms });
        opened = await device.call('open', [{ ...req, artifact: fresh.bytes }], { deadlineMs });
      }
    } else {
      // The device still holds this artifact loaded: nothing to read or compile.
      job.stage('cache-hit', { key: planned.key });
    }
    if ('needArtifact' in opened) throw new LoadFailed(device.name, 'the device asked again for an artifact it was given');
    job.stage('loaded', { device: opened.device, simulated: opened.simulated });

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
      q = new PQueue({ concurrency: this.#opts.devices?.[kind]?.maxContexts ?? CPU_DEFAULT_CONTEXTS });
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
