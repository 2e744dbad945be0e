/**
 * A device whose host traffic can carry raw bytes. A Session writes activations from tensors, and a
 * tensor holds f64 values: converting a signalling NaN to f64 and back quiets it (the hardware sets the
 * quiet bit), so no tensor can carry one to the device. Gather's contract promises bit patterns, NaN
 * payloads included, so its verification puts the source's raw bytes in place of the host's write and
 * reads the raw bytes of the result back. Everything else is the inner device's.
 *
 * @internal
 */
import type { Binding, Device } from '../devices/device.js';
import { isArenaSlot, wrapDevice } from '../devices/device.js';

/** A device with raw host writes and the raw bytes of its host reads. */
export interface RawIo {
  readonly device: Device;
  /** From now on, every host write at `at` carries `bytes` (of the same length) instead of its own. */
  put(at: Binding, bytes: Uint8Array): void;
  /** The bytes the latest host read at `at` returned. */
  last(at: Binding): Uint8Array | undefined;
}

// Handles are process-unique across buffers and arenas (devices/device.ts freshHandle).
const key = (target: number, offset: number) => `${target}@${offset}`;
const keyOf = (at: Binding) => (isArenaSlot(at) ? key(at.arena, at.offset) : key(at, 0));

/** `inner` with raw host writes and reads (see the file's doc). */
export function withRawIo(inner: Device): RawIo {
  const puts = new Map<string, Uint8Array>();
  const reads = new Map<string, Uint8Array>();
  const device = wrapDevice(inner, {
    write(t, o, d): void {
      const raw = puts.get(key(t, o));
      inner.write(t, o, raw !== undefined && raw.length === d.length ? raw : d);
    },
    read(t, o, n): Uint8Array {
      const bytes = inner.read(t, o, n);
      reads.set(key(t, o), bytes);
      return bytes;
    },
  });
  return {
    device,
    put: (at, bytes) => { puts.set(keyOf(at), bytes); },
    last: (at) => reads.get(keyOf(at)),
  };
}
