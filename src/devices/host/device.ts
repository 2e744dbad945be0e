/**
 * The host device: the machine's own CPU through the host_kernels addon. It keeps every device rule
 * (contexts, the exact shape ABI, deadlines and poisoning, fault injection) through DeviceRules, holds
 * its buffers in this process (JsMemory), and replays one step as ONE runList call over one arena: the
 * inputs are copied into their slots, the kernel list runs without JavaScript between kernels, and the
 * results are copied out. A session's arena is kept from run to run, and a state whose next value the
 * kernel list writes over its input's slot (a KV cache updated in place) stays there between runs,
 * copied back to its buffer only when something reads or writes that buffer. Opening it where the addon is not built answers NoDevice saying why and how.
 *
 * A quantized weight bound from a file is mapped by the addon (mmap) and read in place: its buffer
 * here only carries its size for the binding checks and is never written (its zero pages stay
 * unallocated). Any other file weight is read into its buffer, as on every device.
 */
import { statSync } from 'node:fs';
import { loadHostArtifact, type HostProgram } from '../../compiler/host/backend.js';
import { InvalidInput } from '../../errors/index.js';
import { readFileWeightBytes, type FileWeight } from '../../ir/fileWeight.js';
import { isQuantized } from '../../ir/types.js';
import { bf16ToBits, f16ToBits, roundToDtype } from '../../numerics/float16.js';
import { resultBinding, stateBinding } from '../../compiler/wiring.js';
import { HOST_TARGET } from '../../targets/host/index.js';
import { programAbi } from '../abi.js';
import { isArenaSlot, type ArenaId, type Bindings, type BufferId, type LoadedArtifact } from '../device.js';
import type { DeviceBaseOptions, Decoded } from '../rules.js';
import { JsDevice } from '../rules.js';
import { loadHostKernels, type HostKernels, type HostWeight } from './native.js';

export class HostDevice extends JsDevice<HostProgram> {
  readonly kind = 'host' as const;
  readonly simulated = false;
  readonly kernels: HostKernels;
  // Weights the addon maps from their files, by the buffer that stands for each in the bindings.
  private readonly mapped = new Map<unknown, HostWeight>();
  // Each session's arena (by its recorded bindings), reused run after run: no allocation per step, and
  // by slot the buffer (and its version) last copied there, so an unchanged weight is copied once.
  private readonly arenas = new WeakMap<Bindings, { readonly arena: Uint8Array; readonly copied: Map<number, readonly [unknown, number]> }>();
  // Bumped by every write from outside a run, per buffer or arena.
  private readonly versions = new Map<unknown, number>();
  // State buffers whose current contents live in an arena's slot instead (a state carried in place):
  // copied back only when the buffer is read or written from outside a run.
  private readonly shadows = new Map<BufferId | ArenaId, { readonly arena: Uint8Array; readonly slot: number; readonly bytes: number }>();

  /** NoDevice('host', why and how to build it) when the addon is not built or does not load. */
  constructor(opts: DeviceBaseOptions = {}, kernels: HostKernels = loadHostKernels()) {
    super(opts, { name: 'host', maxContexts: HOST_TARGET.contexts });
    this.kernels = kernels;
    if (opts.threads !== undefined) kernels.setThreads(opts.threads);
  }

  /** Binds a file weight: a quantized matrix mapped in place, anything else read into a buffer. */
  mapFile(w: FileWeight, name: string): BufferId {
    this.usable();
    if (!isQuantized(w.dtype) || w.shape.length !== 2) {
      const bytes = readFileWeightBytes(w, name);
      const b = this.allocBuffer(w.length);
      this.write(b, 0, bytes);
      return b;
    }
    let st;
    try {
      st = statSync(w.file);
    } catch (e) {
      throw new InvalidInput(`/${name}/file`, `cannot map weight ${name} from ${w.file}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (st.size !== w.identity.size || st.mtimeMs !== w.identity.mtimeMs) {
      throw new InvalidInput(`/${name}/file`, `cannot map weight ${name} from ${w.file}: it changed since it was bound; bind it again`);
    }
    const weight = this.kernels.openWeight({ path: w.file, offset: w.offset, length: w.length, type: w.dtype, k: w.shape[1]!, n: w.shape[0]! });
    const b = this.allocBuffer(w.length);
    this.mapped.set(b, weight);
    return b;
  }

  // Brings a shadowed buffer up to date from its arena slot, and lets the shadow go. Its bytes changed,
  // so another arena that copied the buffer in before copies it again.
  private settle(target: BufferId | ArenaId): void {
    const s = this.shadows.get(target);
    if (s === undefined) return;
    this.shadows.delete(target);
    this.memory.view(target as BufferId, s.bytes).set(s.arena.subarray(s.slot, s.slot + s.bytes));
    this.versions.set(target, (this.versions.get(target) ?? 0) + 1);
  }

  override write(target: BufferId | ArenaId, offset: number, data: Uint8Array): void {
    this.settle(target);
    super.write(target, offset, data);
    this.versions.set(target, (this.versions.get(target) ?? 0) + 1);
  }

  override read(target: BufferId | ArenaId, offset: number, length: number): Uint8Array {
    this.settle(target);
    return super.read(target, offset, length);
  }

  /** Frees a buffer or arena, unmapping the file weight it stands for. */
  override free(target: BufferId | ArenaId): void {
    this.shadows.delete(target);
    this.versions.delete(target);
    super.free(target);
    this.mapped.get(target)?.close();
    this.mapped.delete(target);
  }

  /** Frees everything, unmapping every file weight. */
  override drop(): void {
    this.shadows.clear();
    this.versions.clear();
    super.drop();
    for (const w of this.mapped.values()) w.close();
    this.mapped.clear();
  }

  protected decode(bytes: Uint8Array): Decoded<HostProgram> {
    const p = loadHostArtifact(bytes, this.name);
    return { name: p.checked.program.name, args: programAbi(p.checked), ctx: p };
  }

  protected compute(p: HostProgram, loaded: LoadedArtifact, bindings: Bindings): () => void {
    const { checked, lowered } = p;
    const sizeOf = (name: string): number => loaded.args.find((a) => a.name === name)!.bytes;
    let kept = this.arenas.get(bindings);
    if (kept === undefined) {
      const fresh = new Uint8Array(lowered.arenaBytes);
      const dv = new DataView(fresh.buffer);
      for (const [at, dtype, v] of lowered.constants) {
        if (dtype === 'i32') dv.setInt32(at, v, true);
        else if (dtype === 'f16') dv.setUint16(at, f16ToBits(roundToDtype('f16', v)), true);
        else if (dtype === 'bf16') dv.setUint16(at, bf16ToBits(roundToDtype('bf16', v)), true);
        else dv.setFloat32(at, v, true);
      }
      kept = { arena: fresh, copied: new Map() };
      this.arenas.set(bindings, kept);
    }
    const { arena, copied } = kept;
    // Every kernel writes its whole output before anything reads it, so a reused arena needs only
    // its inputs: each arg copied in, unless the slot already holds it (a state carried in place,
    // or a buffer unchanged since it was copied there).
    const inputSlot = new Map<unknown, number>();
    for (const a of checked.program.args) {
      const slot = lowered.slots[a.name];
      if (slot === undefined) continue;
      const b = bindings[a.name]!;
      inputSlot.set(b, slot);
      const sh = isArenaSlot(b) ? undefined : this.shadows.get(b);
      if (sh !== undefined && sh.arena === arena && sh.slot === slot) continue;
      if (!isArenaSlot(b)) this.settle(b);
      const key = isArenaSlot(b) ? b.arena : b;
      const version = this.versions.get(key) ?? 0;
      const had = copied.get(slot);
      if (had !== undefined && had[0] === key && had[1] === version) continue;
      arena.set(this.memory.view(b, sizeOf(a.name)), slot);
      copied.set(slot, [key, version]);
    }
    // The slots a run writes over (a state's next value in its input's slot) hold the input no longer.
    for (const [arg, next] of Object.entries(checked.program.state)) {
      const slot = lowered.slots[arg];
      if (slot !== undefined && slot === lowered.slots[next]) copied.delete(slot);
    }
    const own: HostWeight[] = [];
    const weights = lowered.weights.map((w) => {
      const mapped = this.mapped.get(bindings[w.name]!);
      if (mapped !== undefined) return mapped;
      const h = this.kernels.weightFromBytes(this.memory.view(bindings[w.name]!, sizeOf(w.name)), w.type, w.k, w.n);
      own.push(h);
      return h;
    });
    try {
      this.kernels.run(arena, lowered.list, weights);
    } catch (e) {
      // A step refused part way (an index out of range) may have run its in-place updates or not:
      // states carried in this arena go back to their buffers as they are, and nothing here is trusted.
      for (const [b, sh] of this.shadows) if (sh.arena === arena) this.settle(b);
      copied.clear();
      throw e;
    } finally {
      for (const w of own) w.close();
    }
    const outs: [string, string][] = [...new Set(checked.program.results)].map((r) => [resultBinding(r), r]);
    for (const [arg, next] of Object.entries(checked.program.state)) outs.push([stateBinding(arg), next]);
    const done = arena;
    const commits = outs.map(([binding, value]): (() => void) => {
      const n = sizeOf(binding);
      const b = bindings[binding]!;
      const slot = lowered.slots[value]!;
      // A state carried in place (its next value written over its input's slot) stays in the arena.
      if (!isArenaSlot(b) && inputSlot.get(b) === slot) return () => { this.shadows.set(b, { arena: done, slot, bytes: n }); };
      // Written from outside the arena, so a slot that copied this buffer in before must copy it again
      // (a state whose next value is an intermediate: its buffer is also the state arg's input).
      const key = isArenaSlot(b) ? b.arena : b;
      return () => {
        this.settle(b as BufferId);
        this.memory.view(b, n).set(done.subarray(slot, slot + n));
        this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
      };
    });
    return () => { for (const c of commits) c(); };
  }
}
