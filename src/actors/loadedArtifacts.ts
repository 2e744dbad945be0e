/**
 * The artifacts a device actor holds loaded, by cache key. Sessions of the same artifact share its
 * hardware context; an artifact no session uses stays loaded until its context is needed for another
 * (least recently used first), so a warm job loads nothing.
 */
import type { Artifact, Device, LoadedArtifact } from '../devices/device.js';

interface Entry { readonly loaded: LoadedArtifact; refs: number; lastUsed: number }

export class LoadedArtifacts {
  readonly #byKey = new Map<string, Entry>();
  #clock = 0;

  constructor(private readonly device: Device) {}

  /** True when `key` is loaded. */
  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** The loaded artifact of `key`, taking a reference, or undefined when it is not loaded. */
  acquire(key: string): LoadedArtifact | undefined {
    const e = this.#byKey.get(key);
    if (!e) return undefined;
    e.refs++;
    e.lastUsed = ++this.#clock;
    return e.loaded;
  }

  /** Loads `artifact` under `key` (freeing the least recently used idle context when all are taken). */
  async load(key: string, artifact: Artifact): Promise<LoadedArtifact> {
    const have = this.acquire(key);
    if (have) return have;
    if (this.device.live().contexts >= this.device.maxContexts) this.#evictOne();
    const loaded = await this.device.load(artifact);
    this.#byKey.set(key, { loaded, refs: 1, lastUsed: ++this.#clock });
    return loaded;
  }

  /** Drops a reference taken by acquire() or load(). */
  release(key: string): void {
    const e = this.#byKey.get(key);
    if (e && e.refs > 0) e.refs--;
  }

  #evictOne(): void {
    let victim: [string, Entry] | undefined;
    for (const kv of this.#byKey) {
      if (kv[1].refs === 0 && (!victim || kv[1].lastUsed < victim[1].lastUsed)) victim = kv;
    }
    // With every context in use the device's own ContextLimit is the answer, so nothing is evicted.
    if (!victim) return;
    this.device.unload(victim[1].loaded);
    this.#byKey.delete(victim[0]);
  }
}
