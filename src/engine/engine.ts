/**
 * The job API: createEngine() starts (lazily) the planner, blob cache, compiler pool, oracle pool and
 * one actor per device, each in its own worker under a supervisor; submit() runs a job through them.
 * Every submitted job settles, with its results or a typed error, and close() leaves no worker running.
 */
import { cpus } from 'node:os';
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

  /** Plans and compiles one program into the cache without running it (the compile farm's job). */
  async compileOnly(program: ProgramSource, target: string): Promise<CompileOutcome> {
    if (this.#closed) throw new EngineClosed();
    const planned = await this.#plannerActor().call('plan', [programJsonOf(program), target]);
    const { key, hit } = await this.#artifact(planned, target);
    return { key, hit };
  }

  async #artifact(planned: PlanReply, target: string, refused = false): Promise<{ key: string; hit: boolean; bytes: Uint8Array; ms: number; identity: BlobIdentity }> {
    const identity: BlobIdentity = {
      device: planned.plan.part,
      compiler: CPU_COMPILER.name,
      compilerVersion: CPU_COMPILER.version,
      options: {},
      region: { program: planned.programJson, eqns: planned.plan.regions.map((r) => r.eqns) },
    };
    const key = identityKey(identity);
    const cache = this.#cacheActor();
    if (refused) await cache.call('invalidate', [identity]);
    else {
      const hit = await cache.call('get', [identity]);
      if (hit !== null) return { key, hit: true, bytes: hit, ms: 0, identity };
    }
    const t0 = performance.now();
    const bytes = await this.#compilerPool().run({ target, programJson: planned.programJson });
    const ms = performance.now() - t0;
    await cache.call('put', [identity, bytes]);
    return { key, hit: false, bytes, ms, identity };
  }

  async #run(job: Job, spec: JobSpec): Promise<JobResult> {
    const planned = await this.#plannerActor().call('plan', [programJsonOf(spec.program), spec.target]);
    const target = planned.plan.target;
    job.stage('planned', { target, regions: planned.plan.regions.length });
    const inputs = decodeInputs(inputsJsonOf(spec.inputs), planned.checked, spec.steps);
    const reference = spec.verify === true
      ? this.#oraclePool().run({ programJson: planned.programJson, inputs })
      : undefined;
    // The comparison is awaited below; a reference that fails first must not be an unhandled rejection.
    reference?.catch(() => undefined);

    const art = await this.#artifact(planned, target);
    if (art.hit) job.stage('cache-hit', { key: art.key });
    else job.stage('compiled', { key: art.key, ms: art.ms });

    const device = this.#deviceActor(planned.plan.target === 'cpu' ? 'cpu' : planned.plan.target);
    const deadlineMs = spec.deadlineMs ?? this.#opts.deadlineMs ?? 30_000;
    const program = planned.checked.program;
    const openReq = (bytes: Uint8Array) => ({
      target,
      artifact: bytes,
      weights: inputs.weights,
      state: inputs.state,
      activations: program.args.filter((a) => a.role === 'activation').map((a) => a.name),
      stateArgs: program.args.filter((a) => a.role === 'state').map((a) => a.name),
    });
    let opened;
    try {
      opened = await device.call('open', [openReq(art.bytes)], { deadlineMs });
    } catch (e) {
      // A cached artifact the device refuses is recompiled and replaced, once.
      if (!(e instanceof LoadFailed) || !art.hit) throw e;
      const fresh = await this.#artifact(planned, target, true);
      job.stage('compiled', { key: fresh.key, ms: fresh.ms });
      opened = await device.call('open', [openReq(fresh.bytes)], { deadlineMs });
    }
    job.stage('loaded', { device: opened.device, simulated: opened.simulated });

    const steps: StepOutput[] = [];
    try {
      for (let i = 0; i < inputs.steps.length; i++) {
        const out = await this.#replay(device, opened.session, inputs.steps[i]!, program.results, deadlineMs);
        steps.push(out);
        job.stage('step', { index: i, results: out.results });
      }
    } finally {
      if (device.state === 'ready') void device.call('close', [opened.session]).catch(() => undefined);
    }

    let verification;
    if (reference) {
      verification = verifySteps(target, planned.checked, steps, await reference);
      job.stage('verified', verification);
    }
    const last = steps[steps.length - 1];
    return {
      results: last?.results ?? {},
      state: last?.state ?? inputs.state,
      steps: steps.map((s) => s.results),
      target,
      simulated: opened.simulated,
      cacheHit: art.hit,
      ...(verification ? { verification } : {}),
    };
  }

  async #replay(device: ActorSupervisor<DeviceApi>, session: number, acts: TensorMap, results: readonly string[], deadlineMs: number): Promise<StepOutput> {
    try {
      return await device.call('replay', [session, acts, results, deadlineMs], { deadlineMs });
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
