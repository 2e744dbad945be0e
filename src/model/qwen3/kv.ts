/**
 * The KV budget of a model: the positions its generations may fill at once, counted in blocks (the
 * prefix cache's, 64 positions by default). The budget defaults to `ctx` positions for each slot (the
 * slots' caches: `ctx` x `parallel` where generations batch, else `ctx`), or loadModel's `kvBudget`.
 *
 * A generation reserves its blocks when it is admitted, before its cache is made: its prompt and its
 * `maxTokens`, within the context (what llama-server's slots promise: a request admitted is never cut
 * for room later), and gives them back the moment it ends, whichever way (its end, a stop, an error,
 * an abort, a consumer's return). One the free blocks cannot hold now is refused with KvCacheFull
 * (`needed` past `total`: it never fits), before any step of it runs. While it runs its filled
 * positions are counted too (the blocks it uses of those it holds).
 *
 * The budget counts positions a generation may fill, not bytes allocated: each generation's cache and
 * each slot's hold `ctx` positions whatever it fills (no paged attention here), so a budget set below
 * `ctx` x slots bounds admission, not memory. The prefix cache's blocks (prefix.ts) are copies kept
 * under their own budget (`--cache-ram`): a generation that starts from them has them written into its
 * own cache, inside its reservation.
 */
import { KvCacheFull } from '../../errors/index.js';

/** One admitted generation's blocks. */
export interface KvHold {
  /** Blocks it holds (its prompt and max tokens, within the context). */
  readonly blocks: number;
  /** Positions it has filled so far (its prompt, then a position a decode step). */
  readonly filled: number;
}

/** The budget's use now (loadModel's `kvUse()`, serve's /v1/status and /metrics). */
export interface KvUse {
  /** Positions per block. */
  readonly block: number;
  /** Blocks in all, held by running generations, of those filled, and free. */
  readonly total: number;
  readonly reserved: number;
  readonly used: number;
  readonly free: number;
  /** Each running generation's blocks, in the order they were admitted. */
  readonly generations: readonly KvHold[];
  /** Generations admitted so far, and refused with KvCacheFull. */
  readonly admitted: number;
  readonly refused: number;
}

/** A generation's reservation: `fill` as it fills positions, `release` once at its end (again: nothing). */
export class KvReservation implements KvHold {
  filled = 0;
  #released = false;
  constructor(readonly blocks: number, private readonly budget: KvBudget) {}

  /** It has filled `positions` positions. */
  fill(positions: number): void {
    this.filled = Math.max(this.filled, positions);
  }

  /** Its blocks are free (at once; a second call does nothing). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.release(this);
  }
}

/** A model's KV budget: see the file's doc. */
export class KvBudget {
  readonly #held = new Set<KvReservation>();
  #reserved = 0;
  #admitted = 0;
  #refused = 0;

  /** `total` blocks of `block` positions; a generation fills at most `ctx` positions. */
  constructor(readonly total: number, readonly block: number, readonly ctx: number) {}

  /** The blocks `positions` positions take. */
  blocksOf(positions: number): number {
    return Math.ceil(Math.min(Math.max(0, positions), this.ctx) / this.block);
  }

  /**
   * Reserves the blocks of a generation that fills at most `positions` positions (its prompt and max
   * tokens); KvCacheFull when the free blocks cannot hold them.
   */
  reserve(positions: number): KvReservation {
    const needed = this.blocksOf(positions);
    const free = this.total - this.#reserved;
    if (needed > free) {
      this.#refused++;
      throw new KvCacheFull(needed, free, this.total, this.block);
    }
    const r = new KvReservation(needed, this);
    this.#held.add(r);
    this.#reserved += needed;
    this.#admitted++;
    return r;
  }

  /** @internal KvReservation.release. */
  release(r: KvReservation): void {
    if (this.#held.delete(r)) this.#reserved -= r.blocks;
  }

  use(): KvUse {
    const generations = [...this.#held].map((r) => ({ blocks: r.blocks, filled: r.filled }));
    const used = generations.reduce((a, g) => a + Math.min(g.blocks, this.blocksOf(g.filled)), 0);
    return {
      block: this.block, total: this.total, reserved: this.#reserved, used, free: this.total - this.#reserved,
      generations, admitted: this.#admitted, refused: this.#refused,
    };
  }
}
