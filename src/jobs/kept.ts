/** The last `max` of a stream of values, in order, in memory for at most `max` of them. */
export class LastN<T> {
  #ring: T[] = [];
  #start = 0;
  #seen = 0;

  constructor(readonly max: number) {}

  /** Values pushed so far, kept or not. */
  get seen(): number { return this.#seen; }

  push(v: T): void {
    this.#seen++;
    if (this.max <= 0) return;
    if (this.#ring.length < this.max) { this.#ring.push(v); return; }
    this.#ring[this.#start] = v;
    this.#start = (this.#start + 1) % this.#ring.length;
  }

  /** The kept values, oldest first. */
  toArray(): T[] {
    return [...this.#ring.slice(this.#start), ...this.#ring.slice(0, this.#start)];
  }
}
