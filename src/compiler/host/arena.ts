/**
 * The host arena's layout: aligned blocks, handed out first-fit from the holes that values whose last
 * use has passed leave behind (neighbouring holes merge), else from the top. A step of a model then
 * needs about its widest moment of live values, not the sum of every intermediate of every layer.
 */

const ALIGN = 64;

export class ArenaPlan {
  #top = 0;
  /** Holes, sorted by offset: [offset, bytes]. */
  readonly #holes: [number, number][] = [];
  readonly #size = new Map<number, number>();

  /** The arena's size: the highest offset ever handed out. */
  get bytes(): number { return this.#top; }

  /**
   * A block of at least `bytes` (a block of 0 bytes still has its own offset); `fresh` takes it from
   * the top, never from a hole: a constant written once into the arena must share its bytes with no
   * value of the step, not even one whose life ended before the constant was placed.
   */
  alloc(bytes: number, fresh = false): number {
    const need = Math.ceil(Math.max(bytes, 1) / ALIGN) * ALIGN;
    const i = fresh ? -1 : this.#holes.findIndex(([, n]) => n >= need);
    let at: number;
    if (i >= 0) {
      const [off, n] = this.#holes[i]!;
      at = off;
      if (n === need) this.#holes.splice(i, 1);
      else this.#holes[i] = [off + need, n - need];
    } else {
      at = this.#top;
      this.#top += need;
    }
    this.#size.set(at, need);
    return at;
  }

  /** Gives a block back; its bytes may be handed out again. */
  release(at: number): void {
    const n = this.#size.get(at);
    if (n === undefined) return;
    this.#size.delete(at);
    let i = this.#holes.findIndex(([off]) => off > at);
    if (i < 0) i = this.#holes.length;
    this.#holes.splice(i, 0, [at, n]);
    // Merge with the next hole, then with the previous one.
    const next = this.#holes[i + 1];
    if (next !== undefined && at + n === next[0]) { this.#holes[i] = [at, n + next[1]]; this.#holes.splice(i + 1, 1); }
    const prev = this.#holes[i - 1];
    if (prev !== undefined && prev[0] + prev[1] === at) { prev[1] += this.#holes[i]![1]; this.#holes.splice(i, 1); }
    // A hole at the top shrinks nothing: offsets handed out stay valid, so the top stays.
  }
}
