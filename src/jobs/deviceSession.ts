/**
 * A session kept open on a device across calls: the program's artifacts loaded, its weights resident
 * and its state carried on the device from step to step, never copied back unless asked. A model's
 * decoding runs on one (each token one step, the KV cache staying where the kernels read it), and
 * one session's state can be handed to another's (a prefill program's KV cache to the decode
 * program's): on the same device without leaving the device's process, from another device through
 * shared memory.
 *
 * Every call has the session's deadline; a miss poisons the device actor, which its supervisor
 * restarts, and every session open on it is gone: a later call fails with LoadFailed saying so.
 */
import { InvalidOptions } from '../errors/index.js';
import type { DeviceApi, OpenReply } from '../actors/deviceActor.js';
import type { ActorSupervisor } from '../actors/supervisor.js';
import type { Tensor } from '../ir/tensor.js';
import type { TensorMap } from '../ir/values.js';
import type { ProgramSource } from './inputs.js';
import type { SharedState } from '../session/session.js';
import { replay } from './runSteps.js';

/** What openSession takes. */
export interface SessionSpec {
  readonly program: ProgramSource;
  readonly target: string;
  /** Every weight (tensors on the wire, Tensor objects or file ranges) and each state's initial tensor. */
  readonly inputs?: unknown;
  /** States not given in `inputs` start zeroed on the device (no zero tensors cross to it). */
  readonly zeroState?: boolean;
  /** The deadline of each call, in ms (default: the engine's). */
  readonly deadlineMs?: number;
}

/** One step's results, and the state after it when it was asked for. */
export interface SessionStep {
  readonly results: TensorMap;
  readonly state?: TensorMap;
}

/** An open session on one device; see the file's doc. */
export class DeviceSession {
  #closed = false;
  readonly #restartsAtOpen: number;

  /** @internal Use Engine.openSession. */
  constructor(
    private readonly device: ActorSupervisor<DeviceApi>,
    private readonly opened: OpenReply,
    private readonly results: readonly string[],
    readonly target: string,
    readonly deadlineMs: number,
    private readonly onClose?: () => void,
  ) {
    this.#restartsAtOpen = device.restarts;
  }

  /** Open, and its device has not restarted since (a restart frees every session on it). */
  get usable(): boolean {
    return !this.#closed && this.device.state === 'ready' && this.device.restarts === this.#restartsAtOpen;
  }

  /** The device's name and whether it is a simulator. */
  get deviceName(): string { return this.opened.device; }
  get simulated(): boolean { return this.opened.simulated; }

  #id(): number {
    if (this.#closed) throw new InvalidOptions('session', 'this session is closed');
    return this.opened.session;
  }

  /** Runs one step with these activations (Tensor objects); `state: true` also reads the state after it. */
  async step(activations: Readonly<Record<string, Tensor>>, opts: { readonly state?: boolean } = {}): Promise<SessionStep> {
    const out = await replay(this.device, this.#id(), activations, this.results, this.deadlineMs, false, opts.state === true);
    return opts.state === true ? { results: out.results, state: out.state } : { results: out.results };
  }

  /** The state the session carries now. */
  state(): Promise<TensorMap> {
    return this.device.call('state', [this.#id()], { deadlineMs: this.deadlineMs });
  }

  /** Zeroes the carried state. */
  zeroState(): Promise<void> {
    return this.device.call('setState', [this.#id(), 'zero'], { deadlineMs: this.deadlineMs });
  }

  /**
   * Sets the carried state to these tensors (one per state arg, of its dtype and shape): a state made
   * on another device (a prefill's KV cache) handed to this one. InvalidInput names a missing or
   * mistyped one, and nothing is written then.
   */
  loadState(state: TensorMap): Promise<void> {
    return this.device.call('setState', [this.#id(), state], { deadlineMs: this.deadlineMs });
  }

  /**
   * Sets the carried state to another session's (the same state args): on one device copied there; from
   * another device through shared memory, the other device's bytes read once into a SharedArrayBuffer
   * that this device writes from (no copy between the threads, no element through a JS number). With
   * `move` the other session's state is zeroed after: on one host device the state carried in place in
   * its arena is then handed over with no copy at all (HostDevice.move). With `names` (this session's
   * state arg -> the other's) only those args are set, each from its name's: a sequence's KV cache
   * moved into its slot of a program of several sequences (program.ts, slotStateName).
   */
  async takeStateFrom(other: DeviceSession, opts: { readonly move?: boolean; readonly names?: Readonly<Record<string, string>> } = {}): Promise<void> {
    const move = opts.move === true;
    const names = opts.names;
    if (other.device === this.device) {
      await this.device.call('setState', names === undefined ? [this.#id(), other.#id(), move] : [this.#id(), other.#id(), move, names], { deadlineMs: this.deadlineMs });
      return;
    }
    const shared = await other.device.call('exportState', [other.#id()], { deadlineMs: other.deadlineMs });
    await this.device.call('setSharedState', names === undefined ? [this.#id(), shared] : [this.#id(), shared, names], { deadlineMs: this.deadlineMs });
    if (move) await other.zeroState();
  }

  /**
   * Positions `[from, to)` of the state args named in `axes` (each along its axis: a KV cache's
   * positions), one piece per range, in shared memory: the filled part of a cache read without the
   * rest. InvalidInput names an arg or a range that is not the state's.
   */
  readPositions(axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): Promise<SharedState[]> {
    return this.device.call('readPositions', [this.#id(), axes, ranges], { deadlineMs: this.deadlineMs });
  }

  /** Writes pieces readPositions gave into the carried state at their positions (the others keep theirs). */
  writePositions(axes: Readonly<Record<string, number>>, pieces: readonly { readonly from: number; readonly state: SharedState }[]): Promise<void> {
    return this.device.call('writePositions', [this.#id(), axes, pieces], { deadlineMs: this.deadlineMs });
  }

  /** Frees the session's buffers on the device (a device restarted since has freed them already). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onClose?.();
    if (this.device.state !== 'ready') return;
    await this.device.call('close', [this.opened.session]).catch(() => undefined);
  }
}
