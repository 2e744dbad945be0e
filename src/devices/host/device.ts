/**
 * The host device: the machine's own CPU through the host_kernels addon. It keeps every device rule
 * (contexts, the exact shape ABI, deadlines and poisoning, fault injection) through DeviceRules, holds
 * its buffers in this process (JsMemory), and replays one step as ONE runList call over one arena: the
 * inputs are copied into their slots, the kernel list runs without JavaScript between kernels, and the
 * results are copied out. The arenas are kept from run to run, by layout of carried state (workFor),
 * and a state whose next value the kernel list writes over its input's slot (a KV cache updated in
 * place) stays there between runs, copied back to its buffer only when something reads or writes that
 * buffer or a run of its layout needs the arena. Opening it where the addon is not built answers NoDevice saying why and how.
 *
 * A quantized weight bound from a file is mapped by the addon (mmap) and read in place: its buffer
 * here only carries its size for the binding checks and is never written (its zero pages stay
 * unallocated). Any other file weight is read into its buffer, as on every device.
 */
import { statSync } from 'node:fs';
import { loadHostArtifact, type HostProgram } from '../../compiler/host/backend.js';
import type { HostLowered } from '../../compiler/host/lower.js';
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
  // The arenas of this device (runs are one at a time), each for one layout of carried state: programs
  // whose state args sit at the same slots (a model's prefill and single decode programs) run in the
  // same arenas, so a state handed from one to the other by move stays where it is; a program whose
  // states lie elsewhere (the batch program of several sequences) runs in others, so that its runs and
  // the others' do not push each other's carried states out. A layout has up to PER_LAYOUT arenas: a run
  // takes the one that carries one of its own states, else one that carries none, else a new one, else
  // the least recently used of its layout (whose states there go back to their buffers where it writes).
  // Each is as large as the largest program run there so far, and knows the program that ran there last
  // (whose constants it holds) and, by slot, the buffer (and its version) last copied there, so an
  // unchanged weight is copied once while the same program runs. Least recently used first; at most
  // MAX_ARENAS in all. An ArrayBuffer, not a Uint8Array: no Uint8Array spans more than 4 GiB in Node 20
  // (a 32k-position KV cache is more), so each access takes a view.
  private readonly works: { readonly key: string; work: Work }[] = [];
  // Each lowered program's arena key (the slots of its state args).
  private readonly layouts = new WeakMap<HostLowered, string>();
  // Bumped by every write from outside a run, per buffer or arena.
  private readonly versions = new Map<unknown, number>();
  // State buffers whose current contents live in an arena's slot instead (a state carried in place):
  // copied back only when the buffer is read or written from outside a run.
  private readonly shadows = new Map<BufferId | ArenaId, { readonly arena: ArrayBuffer; readonly slot: number; readonly bytes: number }>();
  // Buffers zeroed and not written since (zero(), move()): their bytes here may be stale, and are set to
  // zeros only when something outside a run reads or writes them; a run fills its slot with zeros.
  private readonly zeroed = new Set<BufferId | ArenaId>();

  /** NoDevice('host', why and how to build it) when the addon is not built or does not load. */
  constructor(opts: DeviceBaseOptions = {}, kernels: HostKernels = loadHostKernels()) {
    super(opts, { name: 'host', maxContexts: HOST_TARGET.contexts });
    this.kernels = kernels;
    if (opts.threads !== undefined) kernels.setThreads(opts.threads);
  }

  // Copies `from` to `to` (views of the same length): a large copy between two ArrayBuffers by the
  // addon, which zeroes (giving the pages back) what is zeros in `from` instead of copying it, so a KV
  // cache with only its first positions written moves for what is written.
  private copy(to: Uint8Array, from: Uint8Array): void {
    if (to.length >= COPY_BY_ADDON && to.buffer instanceof ArrayBuffer && from.buffer instanceof ArrayBuffer) {
      this.kernels.copyBytes(to.buffer, to.byteOffset, from.buffer, from.byteOffset, to.length);
    } else {
      to.set(from);
    }
  }

  /** Binds a file weight: a quantized matrix mapped in place, anything else read into a buffer. */
  mapFile(w: FileWeight, name: string): BufferId {
    this.usable();
    // A quantized matrix [N, K], or experts [E, N, K] (matmul_id's: E·N rows of K), is mapped in place.
    if (!isQuantized(w.dtype) || w.shape.length < 2 || w.shape.length > 3) {
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
    const k = w.shape[w.shape.length - 1]!;
    const weight = this.kernels.openWeight({ path: w.file, offset: w.offset, length: w.length, type: w.dtype, k, n: w.shape.slice(0, -1).reduce((a, b) => a * b, 1) });
    const b = this.allocBuffer(w.length);
    this.mapped.set(b, weight);
    return b;
  }

  // Brings a shadowed buffer up to date from its arena slot, and lets the shadow go. Its bytes changed,
  // so another arena that copied the buffer in before copies it again.
  private settle(target: BufferId | ArenaId): void {
    if (this.zeroed.delete(target)) this.memory.view(target as BufferId, this.memory.sizeOf(target as BufferId, 0)!).fill(0);
    const s = this.shadows.get(target);
    if (s === undefined) return;
    this.shadows.delete(target);
    this.copy(this.memory.view(target as BufferId, s.bytes), bytesAt(s.arena, s.slot, s.bytes));
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

  /** Zeroes a whole buffer without writing it (zeros are written where a run or a read needs them), letting go of a state carried in the arena for it (not copied back). */
  zero(target: BufferId): void {
    this.usable();
    if (this.mapped.has(target)) throw new RangeError(`buffer ${String(target)} is a weight mapped from a file, never written`);
    this.shadows.delete(target);
    this.zeroed.add(target);
    this.versions.set(target, (this.versions.get(target) ?? 0) + 1);
  }

  /**
   * Moves a whole buffer's contents to `to` (of the same size) and zeroes `from`: a state carried in
   * the arena for `from` is carried for `to` from then on, and one in `from`'s buffer changes buffers
   * with `to` (`from` then marked zeroed), with no byte copied either way.
   */
  move(from: BufferId, to: BufferId): void {
    this.usable();
    const bytes = this.memory.sizeOf(from, 0);
    if (bytes === undefined || bytes !== this.memory.sizeOf(to, 0) || this.mapped.has(from) || this.mapped.has(to)) {
      throw new RangeError(`buffers ${String(from)} and ${String(to)} are not two writable buffers of one size`);
    }
    if (from === to) return;
    const sh = this.shadows.get(from);
    this.shadows.delete(to);
    this.zeroed.delete(to);
    if (sh !== undefined) {
      this.shadows.delete(from);
      this.shadows.set(to, sh);
    } else if (this.zeroed.has(from)) {
      this.zeroed.add(to);
    } else {
      // Its bytes handed over whole: `from` takes `to`'s old ones, stale under its zeroed mark.
      this.memory.swap(from, to);
    }
    this.zeroed.add(from);
    for (const b of [from, to]) this.versions.set(b, (this.versions.get(b) ?? 0) + 1);
  }

  /** Frees a buffer or arena, unmapping the file weight it stands for. */
  override free(target: BufferId | ArenaId): void {
    this.shadows.delete(target);
    this.zeroed.delete(target);
    this.versions.delete(target);
    super.free(target);
    this.mapped.get(target)?.close();
    this.mapped.delete(target);
  }

  /** Frees everything, unmapping every file weight. */
  override drop(): void {
    this.shadows.clear();
    this.zeroed.clear();
    this.works.length = 0;
    this.versions.clear();
    super.drop();
    for (const w of this.mapped.values()) w.close();
    this.mapped.clear();
  }

  // The arena a run of `lowered` takes (see `works`), grown to its size when it is smaller: the states
  // carried in the old one move with it (the only copy, once per growth).
  private workFor(checked: HostProgram['checked'], lowered: HostLowered, bindings: Bindings): Work {
    let key = this.layouts.get(lowered);
    if (key === undefined) {
      key = Object.keys(checked.program.state).map((arg) => `${arg}@${String(lowered.slots[arg])}`).join(',');
      this.layouts.set(lowered, key);
    }
    const inPlace = this.inPlaceArgs(checked, lowered);
    const mine = this.works.filter((e) => e.key === key);
    const carrying = new Set<ArrayBuffer>();
    for (const sh of this.shadows.values()) carrying.add(sh.arena);
    let pick = mine.find((e) => [...inPlace].some((arg) => {
      const sh = this.shadows.get(bindings[arg] as BufferId);
      return sh !== undefined && sh.arena === e.work.arena && sh.slot === lowered.slots[arg];
    }));
    pick ??= mine.filter((e) => !carrying.has(e.work.arena)).at(-1);
    if (pick === undefined && mine.length >= PER_LAYOUT) pick = mine[0];
    if (pick !== undefined) this.works.splice(this.works.indexOf(pick), 1);
    const entry = pick ?? { key, work: { arena: new ArrayBuffer(lowered.arenaBytes), last: null, copied: new Map() } };
    this.works.push(entry);
    if (entry.work.arena.byteLength < lowered.arenaBytes) {
      const old = entry.work.arena;
      const arena = new ArrayBuffer(lowered.arenaBytes);
      for (const [b, sh] of this.shadows) {
        if (sh.arena !== old) continue;
        bytesAt(arena, sh.slot, sh.bytes).set(bytesAt(sh.arena, sh.slot, sh.bytes));
        this.shadows.set(b, { ...sh, arena });
      }
      entry.work = { arena, last: null, copied: new Map() };
    }
    while (this.works.length > MAX_ARENAS) {
      const { work } = this.works.shift()!;
      for (const [b, sh] of [...this.shadows]) if (sh.arena === work.arena) this.settle(b);
    }
    return entry.work;
  }

  // The state args of `lowered` whose next value is written over their own slot (carried in place).
  private readonly inPlaceOf = new WeakMap<HostLowered, ReadonlySet<string>>();
  private inPlaceArgs(checked: HostProgram['checked'], lowered: HostLowered): ReadonlySet<string> {
    let set = this.inPlaceOf.get(lowered);
    if (set === undefined) {
      set = new Set(Object.entries(checked.program.state).filter(([arg, next]) => lowered.slots[arg] !== undefined && lowered.slots[arg] === lowered.slots[next]).map(([arg]) => arg));
      this.inPlaceOf.set(lowered, set);
    }
    return set;
  }

  /** The bytes of the device's arenas (shared by every session's runs), for tests and measurements. */
  get arenaBytes(): number { let n = 0; for (const { work } of this.works) n += work.arena.byteLength; return n; }

  // Each loaded artifact's arg sizes by name (compute).
  private readonly argBytes = new WeakMap<LoadedArtifact, ReadonlyMap<string, number>>();

  protected decode(bytes: Uint8Array): Decoded<HostProgram> {
    const p = loadHostArtifact(bytes, this.name);
    return { name: p.checked.program.name, args: programAbi(p.checked), ctx: p };
  }

  protected compute(p: HostProgram, loaded: LoadedArtifact, bindings: Bindings): () => void {
    const { checked, lowered } = p;
    // By name, once per loaded artifact: a step reads the size of each of its hundreds of args.
    let sizes = this.argBytes.get(loaded);
    if (sizes === undefined) {
      sizes = new Map(loaded.args.map((a) => [a.name, a.bytes]));
      this.argBytes.set(loaded, sizes);
    }
    const known = sizes;
    const sizeOf = (name: string): number => known.get(name)!;
    const work = this.workFor(checked, lowered, bindings);
    const arena = work.arena;
    // A state another session carries in place in this arena, where this run writes, goes back to its
    // buffer first; one this run takes as its own input at the same slot stays.
    // The first arg bound to each buffer (a step has hundreds of args and dozens of states: one pass).
    const argOf = new Map<unknown, string>();
    for (const a of checked.program.args) {
      const b = bindings[a.name];
      if (!argOf.has(b)) argOf.set(b, a.name);
    }
    for (const [b, sh] of [...this.shadows]) {
      if (sh.arena !== arena || sh.slot >= lowered.arenaBytes) continue;
      const own = argOf.get(b);
      if (own !== undefined && lowered.slots[own] === sh.slot) continue;
      this.settle(b);
    }
    if (work.last !== lowered) {
      // Another program ran here: its values are not this one's, and this one's constants go back.
      work.copied.clear();
      for (const [at, dtype, v] of lowered.constants) {
        const dv = new DataView(arena, at, 4);
        if (dtype === 'i32') dv.setInt32(0, v, true);
        else if (dtype === 'f16') dv.setUint16(0, f16ToBits(roundToDtype('f16', v)), true);
        else if (dtype === 'bf16') dv.setUint16(0, bf16ToBits(roundToDtype('bf16', v)), true);
        else dv.setFloat32(0, v, true);
      }
      work.last = lowered;
    }
    const { copied } = work;
    // Every kernel writes its whole output before anything reads it, so a reused arena needs only
    // its inputs: each arg copied in, unless the slot already holds it (a state carried in place,
    // or a buffer unchanged since it was copied there).
    const inputSlot = new Map<unknown, number>();
    const inPlace = this.inPlaceArgs(checked, lowered);
    for (const a of checked.program.args) {
      const slot = lowered.slots[a.name];
      if (slot === undefined) continue;
      const b = bindings[a.name]!;
      inputSlot.set(b, slot);
      const sh = isArenaSlot(b) ? undefined : this.shadows.get(b);
      if (sh !== undefined && sh.arena === arena && sh.slot === slot) continue;
      // Carried in another arena (a sequence's cache moved into its slot of the batch program) and
      // carried in place here too: copied from arena to arena, its buffer left as it is (not written
      // and read back), and carried at this slot from then on.
      if (sh !== undefined && sh.arena !== arena && inPlace.has(a.name) && sh.bytes === sizeOf(a.name)) {
        this.copy(bytesAt(arena, slot, sh.bytes), bytesAt(sh.arena, sh.slot, sh.bytes));
        this.shadows.set(b as BufferId, { arena, slot, bytes: sh.bytes });
        copied.delete(slot);
        continue;
      }
      if (!isArenaSlot(b) && !this.zeroed.has(b)) this.settle(b);
      const key = isArenaSlot(b) ? b.arena : b;
      const version = this.versions.get(key) ?? 0;
      const had = copied.get(slot);
      if (had !== undefined && had[0] === key && had[1] === version) continue;
      // Zeroed without touching its pages: a KV cache holds memory only for the positions written.
      if (!isArenaSlot(b) && this.zeroed.has(b)) this.kernels.zeroBytes(arena, slot, sizeOf(a.name));
      else this.copy(bytesAt(arena, slot, sizeOf(a.name)), this.memory.view(b, sizeOf(a.name)));
      copied.set(slot, [key, version]);
    }
    // The slots a run writes over (a state's next value in its input's slot) hold the input no longer.
    for (const [arg, next] of Object.entries(checked.program.state)) {
      const slot = lowered.slots[arg];
      if (slot !== undefined && slot === lowered.slots[next]) copied.delete(slot);
    }
    const owned: HostWeight[] = [];
    const weights = lowered.weights.map((w) => {
      const mapped = this.mapped.get(bindings[w.name]!);
      if (mapped !== undefined) return mapped;
      const h = this.kernels.weightFromBytes(this.memory.view(bindings[w.name]!, sizeOf(w.name)), w.type, w.k, w.n);
      owned.push(h);
      return h;
    });
    try {
      this.kernels.run(arena, lowered.list, weights);
    } catch (e) {
      // A step refused part way (an index out of range) may have run its in-place updates or not:
      // states carried in this arena go back to their buffers as they are, and nothing here is trusted.
      for (const [b, sh] of [...this.shadows]) if (sh.arena === arena) this.settle(b);
      copied.clear();
      work.last = null;
      throw e;
    } finally {
      for (const w of owned) w.close();
    }
    const outs: [string, string][] = [...new Set(checked.program.results)].map((r) => [resultBinding(r), r]);
    for (const [arg, next] of Object.entries(checked.program.state)) outs.push([stateBinding(arg), next]);
    const done = arena;
    const commits = outs.map(([binding, value]): (() => void) => {
      const n = sizeOf(binding);
      const b = bindings[binding]!;
      const slot = lowered.slots[value]!;
      // A state carried in place (its next value written over its input's slot) stays in the arena.
      if (!isArenaSlot(b) && inputSlot.get(b) === slot) return () => { this.zeroed.delete(b); this.shadows.set(b, { arena: done, slot, bytes: n }); };
      // Written from outside the arena, so a slot that copied this buffer in before must copy it again
      // (a state whose next value is an intermediate: its buffer is also the state arg's input).
      const key = isArenaSlot(b) ? b.arena : b;
      return () => {
        if (n === this.memory.sizeOf(b, n)) this.zeroed.delete(b as BufferId);
        this.settle(b as BufferId);
        this.memory.view(b, n).set(bytesAt(done, slot, n));
        this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
      };
    });
    return () => { for (const c of commits) c(); };
  }
}

/** An arena, the program that ran there last, and by slot the buffer (and its version) last copied there. */
interface Work {
  readonly arena: ArrayBuffer;
  last: HostLowered | null;
  readonly copied: Map<number, readonly [unknown, number]>;
}

/** Copies of this many bytes or more go through the addon's copyBytes. */
const COPY_BY_ADDON = 1 << 20;

/** Arenas kept at once in all, and for one layout of carried state (a model's single programs: generations prefilling at once). */
const MAX_ARENAS = 8;
const PER_LAYOUT = 4;

/** The `n` bytes of an arena from `at` (a view: no Uint8Array spans an arena past 4 GiB). */
function bytesAt(arena: ArrayBuffer, at: number, n: number): Uint8Array {
  return new Uint8Array(arena, at, n);
}
