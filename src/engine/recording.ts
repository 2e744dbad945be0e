/**
 * Record and replay. A session over an artifact loaded on a device uploads the weights and the initial
 * state once, and records the commands of one step (activation writes, the run, result read-backs);
 * replay runs that recording once per step with new activation contents. State is carried in place:
 * each state arg's input and output bind the same buffer, which the device reads before it writes.
 */
import { InvalidInput } from '../errors.js';
import { tensorFromBytes, tensorToBytes } from '../ir/bytes.js';
import type { Tensor } from '../ir/tensor.js';
import type { TensorMap, StepOutput } from '../oracle/types.js';
import type { ArenaId, ArtifactArg, Binding, BufferId, Device, LoadedArtifact } from '../devices/device.js';
import { isArenaSlot } from '../devices/device.js';

/** One recorded command of a step. */
export type Command =
  | { readonly kind: 'write'; readonly arg: ArtifactArg; readonly to: Binding }
  | { readonly kind: 'run'; readonly loaded: LoadedArtifact; readonly bindings: Readonly<Record<string, Binding>> }
  | { readonly kind: 'read'; readonly arg: ArtifactArg; readonly from: Binding; readonly as: 'result' | 'state'; readonly name: string };

const RESULT = 'result:';
const STATE = 'state:';

function writeTo(device: Device, b: Binding, bytes: Uint8Array): void {
  if (isArenaSlot(b)) device.write(b.arena, b.offset, bytes);
  else device.write(b, 0, bytes);
}

function readFrom(device: Device, b: Binding, length: number): Uint8Array {
  return isArenaSlot(b) ? device.read(b.arena, b.offset, length) : device.read(b, 0, length);
}

function checkTensor(path: string, arg: ArtifactArg, t: Tensor | undefined): Tensor {
  if (!t) throw new InvalidInput(path, `no tensor supplied for ${arg.name}`);
  if (t.dtype !== arg.dtype || t.shape.length !== arg.shape.length || t.shape.some((d, i) => d !== arg.shape[i])) {
    throw new InvalidInput(path, `${arg.name} must be ${arg.dtype}[${arg.shape.join(', ')}], got ${t.dtype}[${t.shape.join(', ')}]`);
  }
  return t;
}

export interface SessionInit {
  readonly weights: TensorMap;
  readonly state: TensorMap;
  /** Which program args are activations (the rest of the `in` args are weights or state). */
  readonly activations: readonly string[];
  readonly stateArgs: readonly string[];
}

/** A loaded artifact with its buffers and the recording of one step. */
export class Session {
  readonly commands: readonly Command[];
  private closed = false;

  private constructor(
    private readonly device: Device,
    readonly loaded: LoadedArtifact,
    commands: Command[],
    private readonly owned: (BufferId | ArenaId)[],
  ) {
    this.commands = commands;
  }

  /** Over a loaded artifact: uploads weights and initial state once, and records one step. */
  static open(device: Device, loaded: LoadedArtifact, init: SessionInit): Session {
    const owned: (BufferId | ArenaId)[] = [];
    try {
      const acts = new Set(init.activations);
      const states = new Set(init.stateArgs);
      const bindings: Record<string, Binding> = {};
      const commands: Command[] = [];
      // Activations share one host arena at fixed offsets: the host rewrites them before every run.
      const actArgs = loaded.args.filter((a) => a.direction === 'in' && acts.has(a.name));
      const arenaBytes = actArgs.reduce((n, a) => n + a.bytes, 0);
      if (arenaBytes > 0) {
        const arena = device.allocArena(arenaBytes);
        owned.push(arena);
        let offset = 0;
        for (const a of actArgs) {
          const slot = { arena, offset };
          bindings[a.name] = slot;
          commands.push({ kind: 'write', arg: a, to: slot });
          offset += a.bytes;
        }
      }
      for (const a of loaded.args) {
        if (a.direction === 'in' && acts.has(a.name)) continue;
        if (a.name.startsWith(STATE)) continue; // bound below, in place
        const buf = device.allocBuffer(a.bytes);
        owned.push(buf);
        bindings[a.name] = buf;
        if (a.direction === 'in') {
          const isState = states.has(a.name);
          const t = checkTensor(`/${a.name}`, a, isState ? init.state[a.name] : init.weights[a.name]);
          writeTo(device, buf, tensorToBytes(t));
        }
      }
      for (const a of loaded.args) {
        if (!a.name.startsWith(STATE)) continue;
        const input = bindings[a.name.slice(STATE.length)];
        if (input === undefined) throw new InvalidInput('', `state output ${a.name} has no input buffer`);
        bindings[a.name] = input;
      }
      commands.push({ kind: 'run', loaded, bindings });
      for (const a of loaded.args) {
        if (a.direction !== 'out') continue;
        const from = bindings[a.name]!;
        if (a.name.startsWith(RESULT)) commands.push({ kind: 'read', arg: a, from, as: 'result', name: a.name.slice(RESULT.length) });
        else commands.push({ kind: 'read', arg: a, from, as: 'state', name: a.name.slice(STATE.length) });
      }
      return new Session(device, loaded, commands, owned);
    } catch (e) {
      if (!device.poisoned) for (const b of owned) device.free(b);
      throw e;
    }
  }

  /** Runs the recording once with new activation contents; `results` follow the program's order. */
  async replay(activations: TensorMap, resultOrder: readonly string[], deadlineMs: number): Promise<StepOutput> {
    const results: Record<string, Tensor> = {};
    const state: Record<string, Tensor> = {};
    for (const c of this.commands) {
      switch (c.kind) {
        case 'write':
          writeTo(this.device, c.to, tensorToBytes(checkTensor(`/${c.arg.name}`, c.arg, activations[c.arg.name])));
          break;
        case 'run':
          await this.device.run(c.loaded, c.bindings, { deadlineMs });
          break;
        case 'read': {
          const t = tensorFromBytes(c.arg.dtype, c.arg.shape, readFrom(this.device, c.from, c.arg.bytes));
          if (c.as === 'result') results[c.name] = t;
          else state[c.name] = t;
          break;
        }
      }
    }
    const ordered: Record<string, Tensor> = {};
    for (const r of resultOrder) ordered[r] = results[r]!;
    return { results: ordered, state };
  }

  /**
   * Frees the session's buffers; on a poisoned device they stay until the device drops. The loaded
   * artifact is its owner's to unload: sessions of the same artifact share its context.
   */
  close(): void {
    if (this.closed || this.device.poisoned) return;
    this.closed = true;
    for (const b of this.owned) this.device.free(b);
  }
}
