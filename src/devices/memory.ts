/**
 * A device's memory in this process: its buffers and host arenas as bytes on the JavaScript heap, with
 * bounds checks on every access. The simulators and the CPU device use it; a native device brings a
 * Memory of its own (device.ts) to the shared rules (rules.ts).
 */
import type { ArenaId, Binding, BufferId, LiveResources, Memory } from './device.js';
import { freshHandle, isArenaSlot } from './device.js';

function checkSize(bytes: number, what: string): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`${what} size must be a whole number of bytes >= 0, got ${String(bytes)}`);
}

export class JsMemory implements Memory {
  private readonly buffers = new Map<number, Uint8Array>();
  private readonly arenas = new Map<number, Uint8Array>();

  /** Allocates a zeroed buffer. */
  allocBuffer(bytes: number): BufferId {
    checkSize(bytes, 'a buffer');
    const id = freshHandle();
    this.buffers.set(id, new Uint8Array(bytes));
    return id as BufferId;
  }

  /** Allocates a zeroed host arena. */
  allocArena(bytes: number): ArenaId {
    checkSize(bytes, 'an arena');
    const id = freshHandle();
    this.arenas.set(id, new Uint8Array(bytes));
    return id as ArenaId;
  }

  private block(id: BufferId | ArenaId): Uint8Array {
    const b = this.buffers.get(id) ?? this.arenas.get(id);
    if (!b) throw new RangeError(`handle ${String(id)} is no buffer or arena of this device`);
    return b;
  }

  private range(b: Uint8Array, offset: number, length: number): Uint8Array {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > b.length) {
      throw new RangeError(`bytes [${offset}, ${offset + length}) are outside a block of ${b.length} bytes`);
    }
    return b.subarray(offset, offset + length);
  }

  /** Copies `data` into a buffer or arena at `offset`. */
  write(id: BufferId | ArenaId, offset: number, data: Uint8Array): void {
    this.range(this.block(id), offset, data.length).set(data);
  }

  /** A copy of `length` bytes of a buffer or arena from `offset`. */
  read(id: BufferId | ArenaId, offset: number, length: number): Uint8Array {
    return this.range(this.block(id), offset, length).slice();
  }

  /** Swaps the bytes of two buffers of one size, neither copied (a move whose giver is zeroed after). */
  swap(a: BufferId, b: BufferId): void {
    const x = this.block(a);
    const y = this.block(b);
    if (x.length !== y.length || !this.buffers.has(a) || !this.buffers.has(b)) throw new RangeError(`handles ${String(a)} and ${String(b)} are not two buffers of one size`);
    this.buffers.set(a, y);
    this.buffers.set(b, x);
  }

  /** Frees a buffer or arena. */
  free(id: BufferId | ArenaId): void {
    if (!this.buffers.delete(id) && !this.arenas.delete(id)) throw new RangeError(`handle ${String(id)} is no buffer or arena of this device`);
  }

  /**
   * The byte size a binding offers an argument that needs `need` bytes: a buffer's whole size, or what
   * an arena holds from the slot's offset (capped at `need`); undefined for memory this device lacks.
   */
  sizeOf(b: Binding, need: number): number | undefined {
    if (!isArenaSlot(b)) return this.buffers.get(b)?.length;
    const arena = this.arenas.get(b.arena);
    if (!arena || !Number.isSafeInteger(b.offset) || b.offset < 0 || b.offset > arena.length) return undefined;
    return Math.min(need, arena.length - b.offset);
  }

  /** A live view of a binding's `bytes` bytes; sizes are checked by sizeOf before any run. */
  view(b: Binding, bytes: number): Uint8Array {
    if (!isArenaSlot(b)) return this.range(this.block(b), 0, bytes);
    return this.range(this.block(b.arena), b.offset, bytes);
  }

  /** Frees everything. */
  clear(): void {
    this.buffers.clear();
    this.arenas.clear();
  }

  /** Buffers, arenas and their bytes (contexts are the device's to count). */
  counts(): Omit<LiveResources, 'contexts'> {
    let bytes = 0;
    for (const b of this.buffers.values()) bytes += b.length;
    for (const a of this.arenas.values()) bytes += a.length;
    return { buffers: this.buffers.size, arenas: this.arenas.size, bytes };
  }
}
