/**
 * Weights bound from a file, kept on one device across sessions by their key: the file's real path,
 * size, mtime and sampled digest with the range, dtype and shape (src/ir/fileWeight.ts), never the
 * bytes. A session binding the same range of an unchanged file reuses the buffer an earlier session
 * filled (read from the file, or mapped by a device that maps files), so a warm job reads nothing; a
 * file whose size, mtime or sampled ends changed has another key and is read again. A weight no open
 * session uses stays until a session opens that does not use it (see evictIdle), so memory holds the
 * weights of the sessions open and of the last one at most.
 */
import type { BufferId, Device } from '../devices/device.js';

interface Entry { readonly buffer: BufferId; refs: number }

export class ResidentWeights {
  readonly #byKey = new Map<string, Entry>();

  constructor(private readonly device: Device) {}

  /** The buffer under `key`, taking a reference: resident already, or filled now by `fill` (a miss). */
  acquire(key: string, fill: () => BufferId): { readonly buffer: BufferId; readonly reused: boolean } {
    const have = this.#byKey.get(key);
    if (have) {
      have.refs++;
      return { buffer: have.buffer, reused: true };
    }
    const buffer = fill();
    this.#byKey.set(key, { buffer, refs: 1 });
    return { buffer, reused: false };
  }

  /** Drops a reference taken by acquire(). */
  release(key: string): void {
    const e = this.#byKey.get(key);
    if (e && e.refs > 0) e.refs--;
  }

  /** Frees every weight no session holds, except those under `keep`; a poisoned device keeps its buffers. */
  evictIdle(keep: ReadonlySet<string>): void {
    if (this.device.poisoned) return;
    for (const [k, e] of this.#byKey) {
      if (e.refs > 0 || keep.has(k)) continue;
      this.device.free(e.buffer);
      this.#byKey.delete(k);
    }
  }

  /** The keys resident now, for tests and live(). */
  keys(): string[] {
    return [...this.#byKey.keys()];
  }
}
