/**
 * The prefix cache: the KV cache of token prefixes that earlier generations filled, kept in blocks of
 * `block` positions in a trie (a node per block of ids, under the node of the blocks before it, since
 * a block's keys and values depend on every token before it), the least recently used leaf let go
 * while the blocks' bytes pass the budget. A generation whose prompt starts with a cached prefix
 * starts from those positions (written into its new cache before its first step) and prefills only
 * the rest; at its end the positions it filled that the trie lacks are read from its cache and added.
 *
 * Only the filled positions are held, each state arg's along its position axis (program.ts,
 * cacheLayout), in the cache's dtype, in shared memory (no copy between the device's thread and this one).
 *
 * Where a prompt may be cut decides whether the answer is the cold run's bytes:
 * - `block` (a batch-invariant model: host, q8 class, every layer matmul by a q4_0, q4_1 or q8_0
 *   weight, docs/HOST.md): a row's keys and values do not depend on the rows computed with it, so a
 *   prompt is cut at any block, and positions filled by decode steps are kept too.
 * - `chunk` (any other): the rest of the prompt must run in the very steps a cold run would, so a
 *   prompt is cut only where a cold prefill starts a chunk (a multiple of the prefill chunk), and only
 *   positions of whole prefill chunks of a prompt are kept.
 * Either way at least one prompt token is left to run, whose step gives the first logits.
 */
import { InvalidOptions } from '../../errors/index.js';
import type { SharedState } from '../../session/session.js';
import type { PositionPiece } from './runner.js';

/** Where a prompt may be cut: see the file's doc. */
export type PrefixCut = 'block' | 'chunk';

/** loadModel's `prefixCache`: the budget in bytes, and the positions per block (default 64). */
export interface PrefixCacheOptions {
  readonly bytes: number;
  readonly block?: number;
}

/** The budget of a served model's prefix cache unless `--cache-ram` says otherwise (1 GiB). */
export const DEFAULT_PREFIX_CACHE_BYTES = 1024 * 1024 * 1024;

/** What a prefix cache holds and has done, for /v1/status and /metrics. */
export interface PrefixCacheStats {
  /** Generations that looked for a prefix, and those that found one. */
  readonly lookups: number;
  readonly hits: number;
  /** Prompt tokens looked up, and those taken from the cache (not prefilled). */
  readonly promptTokens: number;
  readonly reusedTokens: number;
  /** Blocks held, their bytes, the budget, the positions per block, and blocks let go for room. */
  readonly blocks: number;
  readonly bytes: number;
  readonly budget: number;
  readonly block: number;
  readonly evicted: number;
  readonly cut: PrefixCut;
}

/** Checks loadModel's `prefixCache`: false, or `{ bytes, block? }`; InvalidOptions naming the field. */
export function checkPrefixCacheOptions(v: unknown): PrefixCacheOptions | false | undefined {
  if (v === undefined || v === false) return v;
  if (typeof v !== 'object' || v === null) throw new InvalidOptions('prefixCache', `false or { bytes, block? }, not ${JSON.stringify(v)}`);
  const { bytes, block } = v as { bytes?: unknown; block?: unknown };
  if (!(typeof bytes === 'number' && Number.isSafeInteger(bytes) && bytes >= 0)) throw new InvalidOptions('prefixCache/bytes', `a whole number of bytes of at least 0, not ${JSON.stringify(bytes)}`);
  if (block !== undefined && !(typeof block === 'number' && Number.isSafeInteger(block) && block >= 1)) throw new InvalidOptions('prefixCache/block', `a whole number of positions of at least 1, not ${JSON.stringify(block)}`);
  return block === undefined ? { bytes } : { bytes, block };
}

interface Node {
  readonly parent: Node | null;
  readonly key: string;
  readonly children: Map<string, Node>;
  // The block's positions (null at the root, which stands for the empty prefix).
  readonly state: SharedState | null;
  stamp: number;
}

/** What a prompt starts from: `positions` cached positions (0: none), as pieces to load. */
export interface PrefixHit {
  readonly positions: number;
  readonly pieces: readonly PositionPiece[];
}

/** A model's prefix cache: see the file's doc. */
export class PrefixCache {
  readonly #root: Node = { parent: null, key: '', children: new Map(), state: null, stamp: 0 };
  #clock = 0;
  #blocks = 0;
  #lookups = 0;
  #hits = 0;
  #promptTokens = 0;
  #reused = 0;
  #evicted = 0;
  /** Where a prompt may be cut: a multiple of this many positions. */
  readonly align: number;

  /**
   * `axes`: each state arg's position axis (cacheLayout); `positionBytes`: the bytes of one position
   * of every state arg; `chunk`: the prefill chunk (a `chunk` cut's alignment).
   */
  constructor(
    readonly budget: number, readonly block: number, readonly cut: PrefixCut, readonly chunk: number,
    readonly axes: Readonly<Record<string, number>>, readonly positionBytes: number,
  ) {
    this.align = cut === 'block' ? block : lcm(block, chunk);
  }

  /** The bytes of one block. */
  get blockBytes(): number { return this.block * this.positionBytes; }

  /**
   * The longest cached prefix of `ids` a generation may start from (at most `ids.length - 1`
   * positions, at a multiple of `align`); its blocks count as used now.
   */
  lookup(ids: readonly number[]): PrefixHit {
    this.#lookups++;
    this.#promptTokens += ids.length;
    const path: Node[] = [];
    let node = this.#root;
    for (let at = 0; at + this.block <= ids.length - 1; at += this.block) {
      const next = node.children.get(keyOf(ids, at, this.block));
      if (next === undefined) break;
      path.push(next);
      node = next;
    }
    const positions = Math.floor((path.length * this.block) / this.align) * this.align;
    const used = path.slice(0, positions / this.block);
    for (const n of used) n.stamp = ++this.#clock;
    if (positions > 0) { this.#hits++; this.#reused += positions; }
    return { positions, pieces: used.map((n, i) => ({ from: i * this.block, state: n.state! })) };
  }

  /**
   * Keeps the positions of `ids` a finished generation filled (`filled` of them, the first
   * `promptTokens` its prompt's) that the trie lacks: `read` gives them from its cache, one piece per
   * block range. Those past the budget are not kept; other blocks are let go, least recently used first.
   */
  async keep(ids: readonly number[], filled: number, promptTokens: number, read: (ranges: readonly (readonly [number, number])[]) => Promise<SharedState[]>): Promise<void> {
    // A chunk cut keeps whole prefill chunks of the prompt only: what a cold run makes in the same steps.
    const upto = this.cut === 'block' ? filled : Math.floor(Math.min(filled, promptTokens) / this.chunk) * this.chunk;
    const n = Math.min(Math.floor(upto / this.block), Math.floor(this.budget / this.blockBytes));
    let node = this.#root;
    let at = 0;
    for (; at < n; at++) {
      const next = node.children.get(keyOf(ids, at * this.block, this.block));
      if (next === undefined) break;
      next.stamp = ++this.#clock;
      node = next;
    }
    if (at >= n) return;
    const ranges = Array.from({ length: n - at }, (_, i) => [(at + i) * this.block, (at + i + 1) * this.block] as const);
    const pieces = await read(ranges);
    // Another generation may have kept some of these blocks meanwhile: walk again, adding what is missing.
    node = this.#root;
    for (let b = 0; b < n; b++) {
      const key = keyOf(ids, b * this.block, this.block);
      let next = node.children.get(key);
      if (next === undefined) {
        if (b < at) return;
        next = { parent: node, key, children: new Map(), state: pieces[b - at]!, stamp: 0 };
        node.children.set(key, next);
        this.#blocks++;
      }
      next.stamp = ++this.#clock;
      node = next;
    }
    this.#evict(node);
  }

  // Lets the least recently used leaves go until the blocks fit the budget (never the path to `keep`).
  #evict(keep: Node): void {
    const kept = new Set<Node>();
    for (let n: Node | null = keep; n !== null; n = n.parent) kept.add(n);
    while (this.#blocks * this.blockBytes > this.budget) {
      let oldest: Node | undefined;
      const visit = (n: Node): void => {
        for (const c of n.children.values()) {
          if (c.children.size === 0) { if (!kept.has(c) && (oldest === undefined || c.stamp < oldest.stamp)) oldest = c; } else visit(c);
        }
      };
      visit(this.#root);
      if (oldest === undefined) return;
      oldest.parent!.children.delete(oldest.key);
      this.#blocks--;
      this.#evicted++;
    }
  }

  stats(): PrefixCacheStats {
    return {
      lookups: this.#lookups, hits: this.#hits, promptTokens: this.#promptTokens, reusedTokens: this.#reused,
      blocks: this.#blocks, bytes: this.#blocks * this.blockBytes, budget: this.budget, block: this.block, evicted: this.#evicted, cut: this.cut,
    };
  }

  /** Lets every block go. */
  clear(): void {
    this.#root.children.clear();
    this.#blocks = 0;
  }
}

function keyOf(ids: readonly number[], at: number, n: number): string {
  return ids.slice(at, at + n).join(',');
}

function lcm(a: number, b: number): number {
  let [x, y] = [a, b];
  while (y !== 0) [x, y] = [y, x % y];
  return (a / x) * b;
}
