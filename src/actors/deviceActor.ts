/**
 * The device actor: one device in its own worker, holding sessions (a loaded artifact, its buffers and
 * its recording). Its supervisor owns the deadlines; the device also enforces them on its own runs.
 *
 * Chaos options make the actor misbehave at random, as a flaky driver would, for soak tests: a replay
 * that blocks the thread for good (only the supervisor's deadline ends it), a replay that kills the
 * worker, and a load that fails. They are seeded (mixed with the worker's thread id, which a fresh
 * process assigns in the same order), so a failing soak run can be replayed.
 */
import { threadId } from 'node:worker_threads';
import { LoadFailed, NoDevice } from '../errors/index.js';
import type { Device, DeviceKind } from '../devices/device.js';
import type { FaultOptions } from '../devices/faults.js';
import { openEntry, type DeviceEntry } from '../devices/entry.js';
import type { Wiring } from '../compiler/wiring.js';
import { ResidentWeights, Session, type SessionInit, type SharedState } from '../session/session.js';
import { LoadedArtifacts } from './loadedArtifacts.js';
import { transfer } from './transfer.js';
import type { StepOutput, TensorMap } from '../oracle/types.js';
import { mulberry32 } from '../numerics/random.js';
import { ulpOf } from '../numerics/ulp.js';
import { withKernelFault } from '../contracts/faultyDevice.js';

export interface ChaosOptions {
  readonly seed: number;
  /** Probability that a replay blocks its thread for ever. */
  readonly hang?: number;
  /** Probability that a replay kills the worker. */
  readonly crash?: number;
  /** Probability that a load fails with LoadFailed. */
  readonly failLoad?: number;
}

/**
 * Faults by replay number, counted across restarts of the actor (the counter lives in shared memory
 * that every incarnation of the worker receives), so a test can say "the 3rd replay hangs" and know
 * the restarted actor serves the 4th.
 */
export interface FaultPlan {
  /** An Int32Array over a SharedArrayBuffer of at least 4 bytes, zeroed: the replay counter. */
  readonly counter: Int32Array;
  /** Replay numbers (1-based) that block the thread for ever. */
  readonly hang?: readonly number[];
  /** Replay numbers (1-based) that kill the worker. */
  readonly crash?: readonly number[];
}

/**
 * A wrong kernel, for the negative controls of verification (a check that cannot fail proves nothing):
 * after each run of `graph` (a program's name), element `index` of each of its float outputs is moved
 * by `ulps` units in the last place of its dtype, as a kernel off by that much would leave it.
 */
export interface WrongKernel {
  readonly graph: string;
  readonly index: number;
  readonly ulps: number;
}

/** Which device serves a kind: the hardware, its simulator, or the hardware when present (default). */
export type DeviceMode = 'auto' | 'native' | 'simulated';

export interface DeviceActorOptions {
  readonly kind: DeviceKind;
  readonly mode?: DeviceMode;
  readonly plan?: FaultPlan;
  readonly name?: string;
  readonly maxContexts?: number;
  readonly faults?: FaultOptions;
  readonly chaos?: ChaosOptions;
  readonly wrongKernel?: WrongKernel;
  readonly threads?: number;
}

export interface OpenReply {
  readonly session: number;
  readonly device: string;
  readonly simulated: boolean;
  /**
   * Weights bound from files: `reused` were resident on the device from an earlier session (same file,
   * unchanged, same range), `bound` were read (or mapped) now.
   */
  readonly fileWeights: { readonly reused: number; readonly bound: number };
}

/** One artifact of a session: its cache key, its bytes when the device may lack it, its wiring. */
interface OpenUnit {
  readonly key: string;
  readonly artifact?: Uint8Array;
  readonly wiring: Wiring;
}

/**
 * Opens a session over a program's artifacts. A unit without `artifact` is taken from those the device
 * holds loaded; when any is missing the answer is `needArtifacts` with their indices, and nothing opens.
 */
export interface OpenRequest extends SessionInit {
  readonly target: string;
  readonly units: readonly OpenUnit[];
}

/**
 * Opens the device: the hardware when mode is 'native'; its simulator when 'simulated'; 'auto' (the
 * default) takes the hardware when this machine has it and the simulator when it answers NoDevice. The
 * CPU is no simulator: it computes the oracle's results itself, in every mode.
 */
function openWith(entry: DeviceEntry, opts: DeviceActorOptions): Device {
  const d = openKind(entry, opts);
  const w = opts.wrongKernel;
  if (w === undefined) return d;
  // f32 spacing: the float outputs the engine's programs compare are f32 (f16 values widen to it exactly).
  return withKernelFault(d, { graph: w.graph, fault: (x, i) => (i === w.index ? x + w.ulps * ulpOf('f32', x) : x) });
}

function openKind(entry: DeviceEntry, opts: DeviceActorOptions): Device {
  const base = {
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.maxContexts !== undefined ? { maxContexts: opts.maxContexts } : {}),
    ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
    ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
  };
  const mode = opts.mode ?? 'auto';
  if (entry.simulate === undefined || mode === 'native') return openEntry(entry, base);
  if (mode === 'simulated') return openEntry(entry, { ...base, simulate: true });
  try {
    return openEntry(entry, base);
  } catch (e) {
    if (!(e instanceof NoDevice)) throw e;
    return openEntry(entry, { ...base, simulate: true });
  }
}


const never = new Int32Array(new SharedArrayBuffer(4));

/**
 * The device API served to the engine, over the entry of its kind (devices/load.ts, loaded by the worker
 * before it is ready), or the error loading it failed with, which every call that opens the device throws.
 */
export function deviceApi(opts: DeviceActorOptions, entry: DeviceEntry | Error) {
  // Opened on first use, not at start: a machine without the device answers its calls NoDevice instead
  // of crashing the worker into a restart loop.
  let opened: { device: Device; loadedArtifacts: LoadedArtifacts; resident: ResidentWeights } | undefined;
  const open = () => {
    if (!opened) {
      if (entry instanceof Error) throw entry;
      const d = openWith(entry, opts);
      opened = { device: d, loadedArtifacts: new LoadedArtifacts(d), resident: new ResidentWeights(d) };
    }
    return opened;
  };
  const sessions = new Map<number, { session: Session; keys: readonly string[] }>();
  let next = 1;
  const chaos = opts.chaos;
  // Each incarnation draws its own sequence: a restarted actor replaying its predecessor's rolls would
  // crash at the same point for ever.
  const roll = chaos ? mulberry32(chaos.seed + threadId * 0x9e3779b1) : () => 1;
  const plan = opts.plan;

  function close(session: number): void {
    const s = sessions.get(session);
    if (!s) return;
    sessions.delete(session);
    s.session.close();
    for (const k of s.keys) opened?.loadedArtifacts.release(k);
  }

  /** The open session with id `session`; LoadFailed when it is not (closed, or the device restarted). */
  function sessionOf(session: number): Session {
    const s = sessions.get(session)?.session;
    if (!s) throw new LoadFailed(open().device.name, `session ${session} is not open on this device (it was restarted)`);
    return s;
  }

  return {
    async open(req: OpenRequest): Promise<OpenReply | { readonly needArtifacts: readonly number[] }> {
      const { device, loadedArtifacts, resident } = open();
      const missing = req.units.map((u, i) => (u.artifact === undefined && !loadedArtifacts.has(u.key) ? i : -1)).filter((i) => i >= 0);
      if (missing.length > 0) return { needArtifacts: missing };
      const taken: string[] = [];
      try {
        const stages = [];
        for (const u of req.units) {
          let loaded = loadedArtifacts.acquire(u.key);
          if (!loaded) {
            if (chaos?.failLoad && roll() < chaos.failLoad) throw new LoadFailed(device.name, 'injected load failure');
            loaded = await loadedArtifacts.load(u.key, { target: req.target, bytes: u.artifact! });
          }
          taken.push(u.key);
          stages.push({ loaded, wiring: u.wiring });
        }
        const session = Session.open(device, stages, req, resident);
        // Weights of files that the new session does not bind, and no open one holds, are let go.
        resident.evictIdle(new Set(session.weightKeys));
        const id = next++;
        sessions.set(id, { session, keys: taken });
        return { session: id, device: device.name, simulated: device.simulated, fileWeights: session.fileWeights };
      } catch (e) {
        for (const k of taken) loadedArtifacts.release(k);
        throw e;
      }
    },
    /**
     * Runs one step; `last` closes the session after it, saving the round trip of a close(); with
     * `readState: false` the state stays here for the next step and is not sent back.
     */
    async replay(session: number, activations: TensorMap, resultOrder: readonly string[], deadlineMs: number, last = false, readState = true): Promise<StepOutput> {
      const s = sessionOf(session);
      if (chaos?.hang && roll() < chaos.hang) Atomics.wait(never, 0, 0);
      if (chaos?.crash && roll() < chaos.crash) process.exit(70);
      if (plan) {
        const n = Atomics.add(plan.counter, 0, 1) + 1;
        if (plan.hang?.includes(n)) Atomics.wait(never, 0, 0);
        if (plan.crash?.includes(n)) process.exit(70);
      }
      try {
        // The step's tensors were made for this reply alone: their buffers move to the caller rather
        // than being copied (a model's logits are 1.2 MB a step).
        const out = await s.replay(activations, resultOrder, deadlineMs, readState);
        const buffers = new Set<ArrayBuffer>();
        for (const t of [...Object.values(out.results), ...Object.values(out.state)]) {
          // Only a buffer the tensor owns whole (never a view into shared memory or a larger buffer).
          const d = (t as { data?: Float64Array }).data;
          if (d !== undefined && d.buffer instanceof ArrayBuffer && d.byteLength === d.buffer.byteLength) buffers.add(d.buffer);
        }
        return transfer(out, [...buffers]);
      } finally {
        if (last) close(session);
      }
    },
    /** The state a session carries now. */
    state(session: number): TensorMap {
      return sessionOf(session).readState();
    },
    /**
     * Zeroes a session's state, sets it to another open session's (a KV cache handed over in place; with
     * `move` that session's is zeroed, on the host with no copy), or to tensors.
     */
    setState(session: number, from: number | 'zero' | TensorMap, move = false, names?: Readonly<Record<string, string>>): void {
      sessionOf(session).setState(typeof from === 'number' ? sessionOf(from) : from, move, names);
    },
    /** A session's state as device bytes in shared memory, for a session on another device (DeviceSession.takeStateFrom). */
    exportState(session: number): SharedState {
      return sessionOf(session).exportState();
    },
    /** Positions of a session's state along each named arg's axis, in shared memory (Session.readPositions). */
    readPositions(session: number, axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): SharedState[] {
      return sessionOf(session).readPositions(axes, ranges);
    },
    /** Writes positions readPositions gave into a session's state (Session.writePositions). */
    writePositions(session: number, axes: Readonly<Record<string, number>>, pieces: readonly { readonly from: number; readonly state: SharedState }[]): void {
      sessionOf(session).writePositions(axes, pieces);
    },
    /** Sets a session's state to bytes another device's session exported. */
    setSharedState(session: number, from: SharedState, names?: Readonly<Record<string, string>>): void {
      sessionOf(session).setSharedState(from, names);
    },
    close,
    live() {
      const { device } = open();
      return { ...device.live(), sessions: sessions.size, poisoned: device.poisoned };
    },
  };
}
export type DeviceApi = ReturnType<typeof deviceApi>;
