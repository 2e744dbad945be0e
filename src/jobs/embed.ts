/**
 * Embedding: an engine behind a port. exposeEngine() runs one in a worker thread, an Electron utility
 * process or behind any MessagePort; connectEngine() gives the other side the same job API over comlink.
 *
 * The actors keep their own protocol, because it settles every call when a worker dies; comlink does
 * not, so the connecting side watches the port ('exit', 'close') and fails every pending call itself.
 * A job's stages are pulled by the connecting side (`next`) rather than pushed through a comlink proxy:
 * a proxy transfers a port made by `new MessageChannel()`, which Electron's main-process ports do not
 * carry (they take MessagePortMain), and pulling keeps a job's stages and its result on one channel, in order.
 */
import { expose, finalizer, releaseProxy, wrap, type Remote } from 'comlink';
import { ActorCrashed, EngineClosed, EngineError, InvalidInput, InvalidOptions, messageOf } from '../errors/index.js';
import type { EventEmitter } from 'eventemitter3';
import { createEngine, type CompileOutcome, type Engine, type EngineOptions, type JobSpec, type SubmitOptions } from './engine.js';
import { abortedBy, signalOf } from './abort.js';
import { programJsonOf, type ProgramSource } from './inputs.js';
import { Job, type JobEvents, type JobResult, type JobStage } from './job.js';
import type { Tensor } from '../ir/tensor.js';
import { encodeTensor } from '../ir/tensorCodec.js';
import type { TensorMap } from '../oracle/types.js';
import { installErrorTransfer } from './errorTransfer.js';
import { attach, isEnginePort, type Attached, type EnginePort } from './port.js';
import type { EngineStatus } from './status.js';

export type { EnginePort, EmitterPort, DomPort } from './port.js';

/** The stages that cross the port; `done` is the result's own arrival on the connecting side. */
type Forwarded = Exclude<JobStage, 'done'>;
type ArgumentMap<T extends object> = EventEmitter.ArgumentMap<T>;
const FORWARDED = {
  planned: 'planned', 'cache-hit': 'cache-hit', compiled: 'compiled', loaded: 'loaded', step: 'step', verified: 'verified',
} as const satisfies { [K in Forwarded]: K };

/** One stage of a job as it crossed the port: its name and the payload the job emitted. */
type StageEvent<K extends Forwarded = Forwarded> = { [P in K]: { readonly stage: P; readonly args: ArgumentMap<JobEvents>[P] } }[K];

/** What `next` answers: the stages since the last call and, once the job succeeded, its result. */
interface JobUpdate {
  readonly stages: readonly StageEvent[];
  readonly result?: JobResult;
}

/** The object exposed over the port. */
interface EngineHost {
  /** Starts a job; answers its id for `next`. */
  submit(spec: JobSpec): number;
  /** Aborts a job started here (its `next` then throws Aborted with this reason); a job already gone is left alone. */
  abort(id: number, reason: string): void;
  /** Waits for the job's next stages or its end; throws the job's typed error once its stages are out. */
  next(id: number): Promise<JobUpdate>;
  compileOnly(program: ProgramSource, target: string): Promise<CompileOutcome>;
  status(): Promise<EngineStatus>;
  close(): Promise<void>;
}

/** The job API an engine offers, in-process or across a port. */
export type JobApi = Pick<Engine, 'submit' | 'compileOnly' | 'status' | 'close'>;

interface Tracked {
  readonly stages: StageEvent[];
  readonly controller: AbortController;
  outcome?: { readonly ok: true; readonly result: JobResult } | { readonly ok: false; readonly error: unknown };
  wake?: () => void;
}

function track<K extends Forwarded>(job: Job, stage: K, push: (e: StageEvent<K>) => void): void {
  job.on(stage, (...args: ArgumentMap<JobEvents>[K]) => push({ stage, args }));
}

/** Runs an engine with `options` behind `port` (a worker's parentPort, a utility process's, a MessagePort). */
export function exposeEngine(port: EnginePort | null | undefined, options: EngineOptions = {}): Engine {
  if (!isEnginePort(port)) {
    throw new InvalidOptions('port', 'not a port: exposeEngine needs a worker\'s parentPort, a utility process\'s parentPort or a MessagePort');
  }
  installErrorTransfer();
  const engine = createEngine(options);
  const attached = attach(port);
  const jobs = new Map<number, Tracked>();
  const host: EngineHost & { [finalizer](): void } = {
    submit(spec) {
      // A signal cannot cross a port: the connecting side's abort arrives as abort(id).
      const controller = new AbortController();
      const job = engine.submit(spec, { signal: controller.signal });
      const t: Tracked = { stages: [], controller };
      const push = (e: StageEvent) => { t.stages.push(e); t.wake?.(); };
      for (const stage of Object.values(FORWARDED)) track(job, stage, push);
      job.result.then((result) => { t.outcome = { ok: true, result }; }, (error: unknown) => { t.outcome = { ok: false, error }; })
        .finally(() => t.wake?.());
      jobs.set(job.id, t);
      return job.id;
    },
    async next(id) {
      const t = jobs.get(id);
      if (!t) throw new InvalidOptions('job', `no job ${id} is in flight on this engine`);
      while (t.stages.length === 0 && !t.outcome) await new Promise<void>((wake) => { t.wake = wake; });
      t.wake = undefined;
      const stages = t.stages.splice(0);
      if (!t.outcome) return { stages };
      if (t.outcome.ok) { jobs.delete(id); return { stages, result: t.outcome.result }; }
      if (stages.length > 0) return { stages };
      jobs.delete(id);
      throw t.outcome.error;
    },
    abort(id, reason) {
      jobs.get(id)?.controller.abort(reason);
    },
    compileOnly: (program, target) => engine.compileOnly(program, target),
    status: () => engine.status(),
    close: () => engine.close(),
    // The connecting side released us (it closed, or dropped its handle): let the port go.
    [finalizer]() { attached.detach(); void engine.close(); },
  };
  attached.onGone(() => { attached.detach(); void engine.close(); });
  expose(host, attached.endpoint);
  return engine;
}

/** Connects to an engine exposed on the other side of `port`: the job API of createEngine's engine. */
export function connectEngine(port: EnginePort): RemoteEngine {
  if (!isEnginePort(port)) {
    throw new InvalidOptions('port', 'not a port: connectEngine needs a Worker, a utility process or a MessagePort');
  }
  return new RemoteEngine(port);
}

/** An engine on the other side of a port. Every job settles, also when the port closes or its host dies. */
export class RemoteEngine implements JobApi {
  readonly #attached: Attached;
  readonly #remote: Remote<EngineHost>;
  /** The rejecters of the calls in flight: comlink would leave them pending for ever once the port is gone. */
  readonly #inflight = new Set<(e: EngineError) => void>();
  /** Why the connection ended: closed by us, or the other side gone. */
  #why?: EngineError;
  #closing?: Promise<void>;
  #nextJob = 1;

  /** @internal */
  constructor(port: EnginePort) {
    installErrorTransfer();
    this.#attached = attach(port);
    this.#remote = wrap<EngineHost>(this.#attached.endpoint);
    this.#attached.onGone((why) => {
      this.#attached.detach();
      this.#end(new ActorCrashed(this.name, `${why} before the engine was closed`));
    });
  }

  /** Which engine this is, as error messages name it: `engine in worker thread 3`, `engine in a MessagePort`. */
  get name(): string { return `engine in ${this.#attached.name}`; }

  /**
   * Submits a job; its stages and `result` arrive across the port, and `result` always settles.
   * `options.signal` aborts it as in-process: `result` rejects with Aborted at once, and the far
   * engine is told to stop the job.
   */
  submit(spec: JobSpec, options?: SubmitOptions): Job {
    const job = new Job(this.#nextJob++);
    void this.#drive(job, spec, options);
    return job;
  }

  async #drive(job: Job, spec: JobSpec, options: SubmitOptions | undefined): Promise<void> {
    let ended = false;
    const end = (f: () => void) => { if (!ended) { ended = true; f(); } };
    let signal: AbortSignal | undefined;
    let id: number | undefined;
    const onAbort = () => {
      end(() => job.fail(abortedBy(signal!)));
      if (id !== undefined && !this.#why) void this.#remote.abort(id, messageOf(signal!.reason)).catch(() => undefined);
    };
    try {
      signal = signalOf(options);
      if (signal?.aborted === true) throw abortedBy(signal);
      if (this.#closing) throw new EngineClosed();
      const sent: JobSpec = { ...spec, program: jsonOf(spec.program) };
      signal?.addEventListener('abort', onAbort, { once: true });
      id = await this.#call(() => this.#remote.submit(sent));
      // Aborted while the job crossed: the far engine has it now, so tell it.
      if (ended && signal !== undefined) void this.#remote.abort(id, messageOf(signal.reason)).catch(() => undefined);
      for (;;) {
        const u = await this.#call(() => this.#remote.next(id!));
        if (!ended) for (const s of u.stages) replay(job, s);
        if (u.result) { end(() => job.succeed(rewired(u.result!))); return; }
      }
    } catch (e) {
      end(() => job.fail(this.#typed(e)));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Plans and compiles a program into the remote engine's cache without running it. */
  async compileOnly(program: ProgramSource, target: string): Promise<CompileOutcome> {
    if (this.#closing) throw new EngineClosed();
    try {
      return await this.#call(() => this.#remote.compileOnly(jsonOf(program), target));
    } catch (e) {
      throw this.#typed(e);
    }
  }

  /** The remote engine's status (devices, actors, jobs, the blob cache, the last failures), as engine.status() gives it. */
  async status(): Promise<EngineStatus> {
    if (this.#closing) throw new EngineClosed();
    try {
      return await this.#call(() => this.#remote.status());
    } catch (e) {
      throw this.#typed(e);
    }
  }

  /** Closes the remote engine; jobs still running fail with EngineClosed, and the port is let go. */
  close(): Promise<void> {
    return this.#closing ??= this.#shut();
  }

  async #shut(): Promise<void> {
    const gone = this.#why !== undefined;
    // A host already gone has closed with it: nothing is left to ask.
    if (!gone) await this.#call(() => this.#remote.close()).catch(() => undefined);
    this.#end(new EngineClosed());
    // Releasing tells the host to drop its listeners, so its thread or process can exit on its own.
    if (!gone) this.#remote[releaseProxy]();
    this.#attached.detach();
  }

  /** A call across the port that settles also when the connection ends first. */
  #call<T>(f: () => Promise<T>): Promise<T> {
    if (this.#why) return Promise.reject(this.#why);
    return new Promise<T>((resolve, reject) => {
      this.#inflight.add(reject);
      f().then(resolve, reject).finally(() => this.#inflight.delete(reject));
    });
  }

  #end(e: EngineError): void {
    this.#why ??= e;
    for (const reject of this.#inflight) reject(this.#why);
    this.#inflight.clear();
  }

  #typed(e: unknown): EngineError {
    if (e instanceof EngineError) return e;
    const name = typeof e === 'object' && e !== null ? (e as { name?: unknown }).name : undefined;
    const message = e instanceof Error ? e.message : String(e);
    if (name === 'DataCloneError') return new InvalidInput('', `the job cannot be sent to the ${this.name}: ${message}`);
    return new ActorCrashed(this.name, e instanceof Error ? `${e.name}: ${message}` : message);
  }
}

/** The program in the format's JSON (a builder does not survive a structured clone); the far side checks it. */
function jsonOf(p: ProgramSource): ProgramSource {
  return programJsonOf(p) as ProgramSource;
}

/** Emits a stage that crossed the port on the connecting side's job (a switch, so each payload keeps its type). */
function replay(job: Job, s: StageEvent): void {
  switch (s.stage) {
    case 'planned': { job.stage(s.stage, ...s.args); return; }
    case 'cache-hit': { job.stage(s.stage, ...s.args); return; }
    case 'compiled': { job.stage(s.stage, ...s.args); return; }
    case 'loaded': { job.stage(s.stage, ...s.args); return; }
    case 'step': { job.stage(s.stage, ...s.args); return; }
    case 'verified': { job.stage(s.stage, ...s.args); return; }
  }
}

/**
 * A structured clone drops the non-enumerable toJSON the engine gives each result tensor; put it back,
 * so JSON.stringify of a result writes the format's tensors as it does in-process.
 */
function rewire(m: TensorMap): TensorMap {
  const out: Record<string, Tensor> = {};
  for (const [k, t] of Object.entries(m)) {
    out[k] = Object.defineProperty({ ...t }, 'toJSON', { value: () => encodeTensor(t, 'data'), enumerable: false });
  }
  return out;
}

function rewired(r: JobResult): JobResult {
  return { ...r, results: rewire(r.results), state: rewire(r.state), steps: r.steps.map(rewire) };
}
