/**
 * The job API: createEngine() starts (lazily) the planner, blob cache, compiler pool, oracle pool and
 * one actor per device, each in its own worker under a supervisor; submit() runs a job through them.
 * Every submitted job settles, with its results or a typed error, and close() leaves no worker running.
 */
import { cpus } from 'node:os';
import { EventEmitter } from 'eventemitter3';
import PQueue from 'p-queue';
import { ActorCrashed, EngineClosed, EngineError, InvalidInput, InvalidOptions, messageOf } from '../errors/index.js';
import type { ActorPool } from '../actors/pool.js';
import { createPool } from '../actors/pool.js';
import type { ActorSupervisor } from '../actors/supervisor.js';
import { superviseActor } from '../actors/supervisor.js';
import type { RestartIntensity } from '../actors/intensity.js';
import type { PlannerApi, PlanReply } from '../actors/plannerActor.js';
import type { CacheApi, CacheTierStats } from '../actors/cacheActor.js';
import type { CompileTask } from '../actors/compileTask.js';
import type { CompileOptions } from '../compiler/index.js';
import type { HostMatmulClass } from '../compiler/host/kernelList.js';
import type { OracleTask } from '../actors/oracleTask.js';
import type { ChaosOptions, DeviceApi, DeviceActorOptions, DeviceMode, FaultPlan, WrongKernel } from '../actors/deviceActor.js';
import { defaultCacheDir } from '../cache/defaultDir.js';
import { parseRedisUrl } from '../cache/redisUrl.js';
import type { DeviceKind } from '../devices/device.js';
import { DEVICES } from '../devices/registry.js';
import type { FaultOptions } from '../devices/faults.js';
import { DEFAULT_MAX_STEPS, decodeStepInputs } from '../ir/inputsCodec.js';
import { checkJsonDepth, resolveLimits, type Limits } from '../ir/limits.js';
import { programToJson } from '../ir/codec.js';
import type { Tensor } from '../ir/tensor.js';
import { encodeTensor } from '../ir/tensorCodec.js';
import type { ProgramInputs, StepOutput, TensorMap } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import { Job, type ListenerError } from './job.js';
import type { JobResult } from './job.js';
import type { ProgramSource } from './inputs.js';
import { checkEngineOptions, checkJobSpec, programJsonFrom, type CheckedJob } from './options.js';
import { StreamedVerification } from './reference.js';
import { openOnDevice, runSteps } from './runSteps.js';
import { DeviceSession, type SessionSpec } from './deviceSession.js';
import { decodeSessionArgs } from '../ir/inputsCodec.js';
import { inputsJsonOf } from './inputs.js';
import { snapshot } from './snapshot.js';
import { checkDeadline } from './options.js';
import { hitRate, JobLedger, type EngineStatus } from './status.js';
import { partitionedJob } from './partitioned.js';
import { abortedBy, signalOf, throwIfAborted, untilAborted, type AbortOptions } from './abort.js';

export interface DeviceConfig {
  /** The hardware, its simulator, or the hardware when this machine has it (default 'auto'). */
  readonly mode?: DeviceMode;
  readonly faults?: FaultOptions;
  readonly chaos?: ChaosOptions;
  readonly plan?: FaultPlan;
  readonly maxContexts?: number;
  /** A kernel off by some ulps in one element, for tests of verification itself. */
  readonly wrongKernel?: WrongKernel;
  /** Threads of a device that computes on this machine's cores (host; default: the cores). */
  readonly threads?: number;
  /**
   * host: the numerics class of a matmul by a quantized weight, a compiler option (part of each
   * artifact's identity): 'exact' (the default; f32 activations) or 'q8' (activations quantized per
   * block of 32, integer dot products; docs/HOST.md "q8 activations").
   */
  readonly matmul?: HostMatmulClass;
}

export interface EngineOptions {
  /** The blob cache directory; default `$NPU_OFFLOAD_CACHE_DIR`, else under `$XDG_CACHE_HOME` or `~/.cache`. */
  readonly cacheDir?: string;
  /**
   * Compiler pool workers at most (default: 2, or 1 on a one-core machine): the pool starts with one on
   * the first compile, and another when compiles wait for it.
   */
  readonly workers?: number;
  /** Oracle pool workers at most (default: as `workers`), started as the compiler pool's are. */
  readonly oracleWorkers?: number;
  /** Restart intensity of every actor: at most `max` restarts in `windowMs`. */
  readonly restart?: RestartIntensity;
  /** The default deadline of one step, in ms (default 30 000): a positive number, or Infinity for none. */
  readonly deadlineMs?: number;
  /** Per device kind: fault injection and hardware context counts, for tests and soak runs. */
  readonly devices?: Partial<Record<DeviceKind, DeviceConfig>>;
  /** Size limits of every submitted program, over the defaults (src/ir/limits.ts, docs/LIMITS.md). */
  readonly limits?: Partial<Limits>;
  /** A shared second cache tier, `redis://host:port/db`: asked on a local miss, given every compile. */
  readonly remoteCache?: string;
  /** Where warnings go (the remote tier being down, once per outage); default process.emitWarning. */
  readonly onWarning?: (message: string) => void;
  /** The most steps one job may run (default 1 000 000, docs/LIMITS.md); Infinity for no maximum. */
  readonly maxSteps?: number;
  /**
   * A blob cache that cannot open (CacheUnavailable) is tried again by the first call at least `firstMs`
   * (default 1000) after the refusal, doubling with each refusal in a row up to `maxMs` (default 60 000);
   * calls meanwhile fail at once with the CacheUnavailable. So a long-running engine recovers once
   * the directory is fixed. `now` (ms) is the clock, for tests.
   */
  readonly cacheRetry?: { readonly firstMs?: number; readonly maxMs?: number; readonly now?: () => number };
}

/** The default backoff of a refused blob cache: 1 s, doubling, at most 60 s. */
export const CACHE_RETRY_FIRST_MS = 1000;
export const CACHE_RETRY_MAX_MS = 60_000;

export interface JobSpec {
  /** The program: the format's JSON form, a decoded Program, or a builder. */
  readonly program: ProgramSource;
  readonly target: TargetName | string;
  /** An inputs file (tensors on the wire; Tensor objects are accepted in their place). */
  readonly inputs?: unknown;
  /** Steps to run (default: the activation arrays' length, else 1), at most the engine's `maxSteps`. */
  readonly steps?: number;
  /** Run the oracle beside the device and compare every step's results under the numerics class. */
  readonly verify?: boolean;
  /** The deadline of each step, in ms: a positive number, or Infinity for none. */
  readonly deadlineMs?: number;
  /** How many of the last steps keep their results in `result.steps` (default 1000; Infinity: all). */
  readonly keepSteps?: number;
}

/**
 * Options of submit beside the job itself: `signal` aborts the job (its result rejects with Aborted at
 * once; a job waiting for its device leaves the queue, a running one stops at its next step and closes
 * its device session, so its queue place goes to the next job).
 */
export type SubmitOptions = AbortOptions;

/** The engine's events. */
export interface EngineEvents {
  /** A job's listener threw; the job went on as if it had not (without a listener: a process warning). */
  error: (e: ListenerError) => void;
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

/**
 * A planned program as the engine remembers it: the program's JSON form (a second copy of its
 * checked form, megabytes of objects for a model's prefill) is made again from the checked form
 * when a compile or a verification asks for it, as the planner made it, rather than kept.
 */
function remembered(p: PlanReply): PlanReply {
  const { checked, plan, units } = p;
  return { checked, plan, units, get programJson(): object { return programToJson(checked.program); } };
}

export class Engine extends EventEmitter<EngineEvents> {
  readonly cacheDir: string;
  #opts: EngineOptions;
  #maxSteps: number;
  #restart: RestartIntensity;
  #planner?: ActorSupervisor<PlannerApi>;
  #cache?: ActorSupervisor<CacheApi>;
  #compiler?: ActorPool<CompileTask, Uint8Array>;
  #oracle?: ActorPool<OracleTask, StepOutput[]>;
  #devices = new Map<DeviceKind, ActorSupervisor<DeviceApi>>();
  #inflight = new Set<Promise<unknown>>();
  /** Compiles in flight on the compiler pool (releaseCompilers stops it only at 0). */
  #compilesRunning = 0;
  /** Plans in flight on the planner (releaseCompilers stops it only at 0). */
  #plansRunning = 0;
  /** The counters of cache workers releaseCompilers stopped (entries and bytes as they left them), added to the running one's. */
  #cacheBefore: CacheTierStats | null = null;
  /** Compiler pools being stopped by releaseCompilers (close() waits for them too). */
  readonly #retiring = new Set<Promise<void>>();
  #compiling = new Map<string, Promise<{ hit: boolean; bytes: Uint8Array; ms: number }>>();
  #plans = new Map<string, PlanReply>();
  #queues = new Map<DeviceKind, PQueue>();
  // The sessions openSession gave out and not yet closed, by device actor (status counts the usable ones).
  readonly #sessions = new Map<ActorSupervisor<DeviceApi>, Set<DeviceSession>>();
  #closed = false;
  #nextJob = 1;
  #limits: Limits;
  readonly #ledger = new JobLedger();

  /** Throws InvalidOptions naming the first option it cannot take. */
  constructor(opts: EngineOptions = {}) {
    super();
    // The checked copy, read once: a caller's later change (or getter) cannot change the engine.
    this.#opts = checkEngineOptions(opts);
    this.#limits = resolveLimits(this.#opts.limits, 'limits');
    this.cacheDir = this.#opts.cacheDir ?? defaultCacheDir();
    this.#restart = this.#opts.restart ?? { max: 5, windowMs: 60_000 };
    this.#maxSteps = this.#opts.maxSteps ?? DEFAULT_MAX_STEPS;
    if (this.#opts.remoteCache !== undefined) parseRedisUrl(this.#opts.remoteCache, 'remoteCache');
  }

  /** The host's matmul class (devices.host.matmul; default 'exact'). */
  get hostMatmul(): HostMatmulClass { return this.#opts.devices?.host?.matmul ?? 'exact'; }

  get #workers(): number { return this.#opts.workers ?? Math.max(1, Math.min(2, cpus().length)); }

  #plannerActor() {
    return this.#planner ??= superviseActor<PlannerApi>({ name: 'planner', entry: here('../workers/planner.worker.js'), restart: this.#restart });
  }
  #cacheActor() {
    if (this.#cache) return this.#cache;
    const remote = this.#opts.remoteCache;
    const r = this.#opts.cacheRetry;
    const refusalRetry = {
      firstMs: r?.firstMs ?? CACHE_RETRY_FIRST_MS,
      maxMs: Math.max(r?.maxMs ?? CACHE_RETRY_MAX_MS, r?.firstMs ?? CACHE_RETRY_FIRST_MS),
      ...(r?.now !== undefined ? { now: r.now } : {}),
    };
    this.#cache = superviseActor<CacheApi>({
      name: 'cache', entry: here('../workers/cache.worker.js'), workerData: { dir: this.cacheDir, ...(remote !== undefined ? { remote } : {}) },
      restart: this.#restart, refusalRetry,
    });
    const warn = this.#opts.onWarning ?? ((m: string) => process.emitWarning(m, { code: 'NPU_OFFLOAD_REMOTE_CACHE' }));
    this.#cache.on('warning', (m: unknown) => warn(String(m)));
    return this.#cache;
  }
  #compilerPool() {
    return this.#compiler ??= createPool<CompileTask, Uint8Array>({ name: 'compiler', entry: here('../workers/compiler.worker.js'), workers: this.#workers, startThreads: 1, restart: this.#restart });
  }
  #oraclePool() {
    return this.#oracle ??= createPool<OracleTask, StepOutput[]>({ name: 'oracle', entry: here('../workers/oracle.worker.js'), workers: this.#opts.oracleWorkers ?? this.#workers, startThreads: 1, restart: this.#restart });
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

  /**
   * Submits a job; the returned Job emits its stages and its `result` always settles. The program and
   * inputs are copied now (a later change by the caller changes nothing); a mistake in the spec fails
   * the job with InvalidOptions, InvalidProgram, InvalidInput or ResourceLimit naming the place.
   * `options.signal` aborts it (SubmitOptions): `result` rejects with Aborted, at once when the signal
   * is already aborted.
   */
  submit(spec: JobSpec, options?: SubmitOptions): Job {
    const job = new Job(this.#nextJob++, (e) => { this.#listenerFailed(e); });
    if (this.#closed) {
      queueMicrotask(() => job.fail(new EngineClosed()));
      return job;
    }
    let checked: CheckedJob;
    let signal: AbortSignal | undefined;
    try {
      checked = checkJobSpec(spec, this.#maxSteps);
      signal = signalOf(options);
    } catch (e) {
      queueMicrotask(() => job.fail(asEngineError(e)));
      return job;
    }
    if (signal?.aborted === true) {
      const e = abortedBy(signal);
      queueMicrotask(() => job.fail(e));
      return job;
    }
    this.#ledger.submitted++;
    const running = this.#run(job, checked, signal);
    const p = untilAborted(running, signal).then(
      (r) => { this.#ledger.succeeded++; job.succeed(r); },
      (e: unknown) => {
        const err = asEngineError(e);
        this.#ledger.fail({ at: new Date().toISOString(), jobId: job.id, target: checked.target, code: err.code, message: err.message });
        job.fail(err);
      },
    );
    // An aborted job has settled, but its work ends at its next step: close() waits for that too.
    const settled = running.then(() => undefined, () => undefined);
    for (const x of [p, settled]) {
      this.#inflight.add(x);
      void x.finally(() => this.#inflight.delete(x));
    }
    return job;
  }

  // The caller's program as plain data the engine owns, measured before anything walks it recursively
  // (the memo's JSON.stringify, a worker's structured clone): a program nested too deep is a
  // ResourceLimit, not a stack overflow. The copy itself keeps its own stack.
  #programJson(program: unknown): unknown {
    const json = programJsonFrom(program);
    checkJsonDepth(json, this.#limits);
    return json;
  }

  #listenerFailed(e: ListenerError): void {
    if (this.listenerCount('error') === 0) { process.emitWarning(e); return; }
    try {
      this.emit('error', e);
    } catch (again) {
      process.emitWarning(again instanceof Error ? again : String(again));
    }
  }

  /** The compiler options of this engine's devices (the host's matmul class). */
  #compileOptions(): CompileOptions {
    const m = this.#opts.devices?.host?.matmul;
    return m === undefined ? {} : { hostMatmul: m };
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
    this.#plansRunning++;
    let planned: PlanReply;
    try {
      planned = await this.#plannerActor().call('plan', [json, target, this.#limits, this.#compileOptions()]);
    } finally {
      this.#plansRunning--;
    }
    const kept = remembered(planned);
    this.#plans.set(memoKey, kept);
    if (this.#plans.size > PLAN_MEMO) this.#plans.delete(this.#plans.keys().next().value!);
    return kept;
  }

  /**
   * Unit `i`'s artifact: from the blob cache, or compiled and stored there (`refused`: replace it).
   * Concurrent misses of one key share one compile: a burst of jobs of a new program compiles it once.
   */
  #artifact(planned: PlanReply, i: number, refused = false): Promise<{ hit: boolean; bytes: Uint8Array; ms: number }> {
    const key = `${planned.units[i]!.key}${refused ? ':refused' : ''}`;
    const pending = this.#compiling.get(key);
    if (pending) return pending;
    const p = this.#fetchOrCompile(planned, i, refused).finally(() => this.#compiling.delete(key));
    this.#compiling.set(key, p);
    return p;
  }

  async #fetchOrCompile(planned: PlanReply, i: number, refused: boolean): Promise<{ hit: boolean; bytes: Uint8Array; ms: number }> {
    const unit = planned.units[i]!;
    const cache = this.#cacheActor();
    if (refused) await cache.call('invalidate', [unit.identity]);
    else {
      const hit = await cache.call('get', [unit.identity]);
      if (hit !== null) return { hit: true, bytes: hit, ms: 0 };
    }
    const t0 = performance.now();
    this.#compilesRunning++;
    let bytes: Uint8Array;
    try {
      bytes = await this.#compilerPool().run({ target: planned.plan.target, programJson: planned.programJson, unit: i, options: this.#compileOptions() });
    } finally {
      this.#compilesRunning--;
    }
    const ms = performance.now() - t0;
    await cache.call('put', [unit.identity, bytes]);
    return { hit: false, bytes, ms };
  }

  /** Plans and compiles one program's artifacts into the cache without running it (the farm's job). */
  async compileOnly(program: ProgramSource, target: string): Promise<CompileOutcome> {
    if (this.#closed) throw new EngineClosed();
    if (typeof target !== 'string') throw new InvalidOptions('target', `a target name (a string), not ${typeof target}`);
    const planned = await this.#plan(this.#programJson(program), target);
    const arts = await Promise.all(planned.units.map((_, i) => this.#artifact(planned, i)));
    return { keys: planned.units.map((u) => u.key), hit: arts.every((a) => a.hit) };
  }

  /**
   * Opens a session that stays on its device between calls (deviceSession.ts): planned, compiled (or
   * taken from the cache) and loaded as a job's would be, its weights and initial state uploaded once.
   * Sessions take no place in the job queue; each holds its device buffers until close().
   */
  async openSession(spec: SessionSpec): Promise<DeviceSession> {
    if (this.#closed) throw new EngineClosed();
    if (typeof spec !== 'object' || spec === null) throw new InvalidOptions('session', 'a session is an object ({ program, target, inputs, ... })');
    if (typeof spec.target !== 'string') throw new InvalidOptions('target', `a target name (a string), not ${typeof spec.target}`);
    checkDeadline(spec.deadlineMs);
    if (spec.zeroState !== undefined && typeof spec.zeroState !== 'boolean') throw new InvalidOptions('zeroState', 'true or false');
    const planned = await this.#plan(this.#programJson(spec.program), spec.target);
    const inputsJson = inputsJsonOf(snapshot(spec.inputs ?? {}, (path, reason) => new InvalidInput(path, reason)));
    const zeroState = spec.zeroState === true;
    const { weights, state } = decodeSessionArgs(inputsJson, planned.checked, zeroState);
    const target = planned.plan.target;
    const device = this.#deviceActor(target);
    const deadlineMs = spec.deadlineMs ?? this.#opts.deadlineMs ?? 30_000;
    const { opened } = await openOnDevice({ planned, weights, state, zeroState, device, deadlineMs, artifact: (i, refused) => this.#artifact(planned, i, refused) });
    let open = this.#sessions.get(device);
    if (open === undefined) this.#sessions.set(device, (open = new Set()));
    const held = open;
    const session: DeviceSession = new DeviceSession(device, opened, planned.checked.program.results, target, deadlineMs, () => held.delete(session));
    held.add(session);
    return session;
  }

  /** The blob cache's counters since this engine started it: local and remote hits, misses, compiles stored. */
  cacheStats(): Promise<CacheTierStats> {
    if (this.#closed) return Promise.reject(new EngineClosed());
    return this.#cacheActor().call('stats', []).then((s) => addCacheStats(this.#cacheBefore, s));
  }

  async #run(job: Job, spec: CheckedJob, signal: AbortSignal | undefined): Promise<JobResult> {
    checkJsonDepth(spec.programJson, this.#limits);
    // A list of targets (`xdna2,host`) runs partitioned: one session per segment (partitioned.ts).
    if (spec.target.includes(',')) return partitionedJob(this, job, spec, signal);
    const planned = await this.#plan(spec.programJson, spec.target);
    const target = planned.plan.target;
    job.stage('planned', { target, regions: planned.units.length });
    const inputs = decodeStepInputs(spec.inputsJson, planned.checked, spec.steps, this.#maxSteps);
    const verifier = spec.verify
      ? new StreamedVerification(this.#oraclePool(), { target, checked: planned.checked, programJson: planned.programJson }, inputs, spec.keepSteps)
      : undefined;
    const kind: DeviceKind = target;
    const device = this.#deviceActor(kind);
    const queue = this.#queueOf(kind);
    const deadlineMs = spec.deadlineMs ?? this.#opts.deadlineMs ?? 30_000;
    const artifact = (i: number, refused: boolean) => this.#artifact(planned, i, refused);
    throwIfAborted(signal);
    // An abort while the job waits for its device takes it out of the queue. Once it runs, p-queue is
    // not told: it would hand the place on at once, while the job's session is still open on the device
    // (a step in flight); runSteps stops at its next step and closes it, and only then is the place free.
    const waiting = new AbortController();
    let started = false;
    const leave = () => { if (!started) waiting.abort(); };
    signal?.addEventListener('abort', leave, { once: true });
    let run;
    try {
      run = await queue.add(() => {
        started = true;
        return runSteps({ job, planned, inputs, device, deadlineMs, keep: spec.keepSteps, verifier, artifact, signal });
      }, signal === undefined ? {} : { signal: waiting.signal });
    } catch (e) {
      if (signal?.aborted === true && !started) throw abortedBy(signal);
      throw e;
    } finally {
      signal?.removeEventListener('abort', leave);
    }

    let verification;
    if (verifier) {
      verification = verifier.result();
      job.stage('verified', verification);
    }
    return {
      results: wireable(run.last?.results ?? {}),
      state: wireable(run.last?.state ?? inputs.state),
      stepCount: inputs.count,
      steps: run.kept.map(wireable),
      target,
      simulated: run.simulated,
      cacheHit: run.cacheHit,
      ...(verification ? { verification } : {}),
    };
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

  /** The engine as it runs (status.ts): devices and actors, jobs, the blob cache, the last failures. */
  async status(): Promise<EngineStatus> {
    const actor = (a: ActorSupervisor<object>) => ({ name: a.name, state: a.state, restarts: a.restarts, poisonedSince: a.poisonedSince });
    const devices = [...this.#devices].map(([kind, d]) => {
      const q = this.#queues.get(kind);
      // A session on a device restarted since is gone with it, though not closed yet.
      const sessions = [...this.#sessions.get(d) ?? []].filter((s) => s.usable).length;
      return { ...actor(d), kind, running: q?.pending ?? 0, waiting: q?.size ?? 0, sessions };
    });
    const actors = [this.#planner, this.#cache].filter((a): a is ActorSupervisor<PlannerApi> | ActorSupervisor<CacheApi> => a !== undefined).map((a) => actor(a));
    let cache: EngineStatus['cache'] = null;
    if (!this.#closed && this.#cache?.state === 'ready') {
      const s = await this.#cache.call('stats', [], { deadlineMs: 2000 }).catch(() => null);
      if (s !== null) {
        const all = addCacheStats(this.#cacheBefore, s);
        cache = { ...all, hitRate: hitRate(all) };
      }
    } else if (!this.#closed && this.#cache === undefined && this.#cacheBefore !== null) {
      // Its worker stopped by releaseCompilers: what it counted, entries and bytes as it left them.
      cache = { ...this.#cacheBefore, hitRate: hitRate(this.#cacheBefore) };
    }
    const l = this.#ledger;
    return { devices, actors, jobs: { submitted: l.submitted, succeeded: l.succeeded, failed: l.failed, running: l.running }, cache, lastErrors: l.lastErrors };
  }

  /** Worker threads alive now, across every actor and pool (0 after close()). */
  liveThreads(): number {
    let n = 0;
    for (const d of this.#devices.values()) n += d.threadIds.length;
    for (const a of [this.#planner, this.#cache, this.#compiler, this.#oracle]) n += a?.threadIds.length ?? 0;
    return n;
  }

  /**
   * Stops the compiler pool's workers when no compile is in flight and the pool is up, and the
   * planner's worker when no plan is in flight, so that their heaps (tens of MB once they have planned
   * and compiled a model's programs) are not kept by a process that goes on running what it compiled;
   * the next plan or compile starts them again (a program planned before is answered from memory).
   * Settles when they have exited: true, or false when the compiler pool was not stopped because a
   * compile is in flight or the pool is down. A model that owns its engine calls it at the end of warm().
   */
  async releaseCompilers(): Promise<boolean> {
    const planner = this.#planner;
    if (planner !== undefined && this.#plansRunning === 0 && planner.state === 'ready') {
      this.#planner = undefined;
      await this.#retire(planner.close());
    }
    await this.#releaseCache();
    const pool = this.#compiler;
    if (pool === undefined) return true;
    if (this.#compilesRunning > 0 || pool.state !== 'ready') return false;
    this.#compiler = undefined;
    await this.#retire(pool.destroy());
    return true;
  }

  // Stops the local blob cache's worker when no artifact is being fetched or stored (its counters kept
  // for cacheStats and status); the next fetch starts it again. One with a remote tier stays.
  async #releaseCache(): Promise<void> {
    const cache = this.#cache;
    if (cache === undefined || this.#opts.remoteCache !== undefined || this.#compiling.size > 0 || cache.state !== 'ready') return;
    const s = await cache.call('stats', [], { deadlineMs: 2000 }).catch(() => null);
    if (s === null || this.#cache !== cache || this.#compiling.size > 0) return;
    this.#cache = undefined;
    this.#cacheBefore = addCacheStats(this.#cacheBefore, s);
    await this.#retire(cache.call('close', [], { deadlineMs: 2000 }).catch(() => undefined).then(() => cache.close()));
  }

  // Waits for an actor being stopped (close() waits for it too), whatever its stop settles with.
  async #retire(stopping: Promise<unknown>): Promise<void> {
    const done = stopping.then(() => undefined, () => undefined);
    this.#retiring.add(done);
    try {
      await done;
    } finally {
      this.#retiring.delete(done);
    }
  }

  /** Stops every actor; jobs still running fail with EngineClosed. Settles when no worker is left. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closing: Promise<unknown>[] = [];
    for (const d of this.#devices.values()) closing.push(d.close());
    if (this.#planner) closing.push(this.#planner.close());
    if (this.#compiler) closing.push(this.#compiler.destroy());
    closing.push(...this.#retiring);
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
  return new ActorCrashed('engine', messageOf(e));
}

export type { ProgramInputs };

/** The counters of `before` (a stopped cache worker's, or null) added to `now`'s; entries, bytes and the remote tier's are `now`'s. */
function addCacheStats(before: CacheTierStats | null, now: CacheTierStats): CacheTierStats {
  if (before === null) return now;
  const l = before.local;
  return {
    ...now,
    localHits: before.localHits + now.localHits, remoteHits: before.remoteHits + now.remoteHits, misses: before.misses + now.misses, stored: before.stored + now.stored,
    local: { hits: l.hits + now.local.hits, misses: l.misses + now.local.misses, damaged: l.damaged + now.local.damaged, puts: l.puts + now.local.puts },
  };
}
