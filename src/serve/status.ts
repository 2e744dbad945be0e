/**
 * What `/v1/status` answers (and the page at `/status` shows): the served model's state, the request
 * queue (running, waiting, refused with 429 so far), the server's failed requests by code with the last
 * few, and the engine's own status (src/jobs/status.ts: devices and actors, jobs, blob cache, last
 * errors) when the model runs on an engine the server knows.
 */
import type { Engine } from '../jobs/engine.js';
import type { EngineStatus } from '../jobs/status.js';
import type { PrefixCacheStats } from '../model/qwen3/prefix.js';
import type { KvUse } from '../model/qwen3/kv.js';
import type { ServedModel } from './model.js';

/** One failed request, as the server keeps it. */
export interface RequestFailure {
  readonly at: string;
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** The route, without its query. */
  readonly path: string;
}

/** The body of `GET /v1/status`. */
export interface ServeStatus {
  readonly object: 'status';
  readonly at: string;
  readonly model: { readonly id: string; readonly state: 'loading' | 'ready' | 'failed'; readonly error: { readonly code: string; readonly message: string } | null };
  /** Generations running (each holding one of `slots`, the most that run at once), waiting, the most that may wait, refusals. */
  readonly queue: { readonly running: number; readonly waiting: number; readonly slots: number; readonly maxQueue: number; readonly refused429: number };
  readonly failures: { readonly total: number; readonly byCode: Readonly<Record<string, number>>; readonly last: readonly RequestFailure[] };
  /** null when the model does not run on an engine the server was given (an add-on's route model). */
  readonly engine: EngineStatus | null;
  /**
   * The model's prefix cache (src/model/qwen3/prefix.ts): lookups and hits, prompt tokens looked up and
   * reused, blocks and their bytes against the budget; null when the model has none (not loaded,
   * `--no-prefix-cache`, an add-on route).
   */
  readonly prefixCache: PrefixCacheStats | null;
  /**
   * The KV budget (src/model/qwen3/kv.ts), in blocks of `block` positions: in all, held by the running
   * generations (each its prompt and max_tokens), filled, free; each running generation's blocks held
   * and positions filled; generations admitted and refused (KvCacheFull); and the prefix cache's reuse,
   * the share of looked-up prompt tokens taken from it (null before any lookup or without one). null
   * when the model keeps no budget (not loaded, an add-on route).
   */
  readonly kv: (KvUse & { readonly reuseRate: number | null }) | null;
}

/** How many failed requests the status keeps. */
const LAST_FAILURES = 20;

/** The server's own counters: 429 refusals and failed requests by code. */
export class ServeCounters {
  refused429 = 0;
  total = 0;
  readonly #byCode = new Map<string, number>();
  readonly #last: RequestFailure[] = [];

  /** Counts one failed request (any status from 400). */
  fail(path: string, status: number, code: string, message: string): void {
    this.total++;
    if (status === 429) this.refused429++;
    this.#byCode.set(code, (this.#byCode.get(code) ?? 0) + 1);
    this.#last.push({ at: new Date().toISOString(), status, code, message, path });
    if (this.#last.length > LAST_FAILURES) this.#last.shift();
  }

  get byCode(): Record<string, number> { return Object.fromEntries(this.#byCode); }
  get last(): readonly RequestFailure[] { return [...this.#last]; }
}

/** The error body the server sends (wire.ts's shape), read back from a serialized payload; undefined when it is not one. */
export function errorOfPayload(payload: unknown): { code: string; message: string } | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const e = (JSON.parse(payload) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof e?.code === 'string') return { code: e.code, message: typeof e.message === 'string' ? e.message : '' };
  } catch { /* not JSON: not one of ours */ }
  return undefined;
}

/** The served model's prefix cache's counters, or null when it has none. */
export function prefixCacheStats(model: ServedModel | undefined): PrefixCacheStats | null {
  return model?.prefixCache?.stats() ?? null;
}

/** The served model's KV budget's use with the prefix cache's reuse rate, or null when it keeps none. */
export function kvStatus(model: ServedModel | undefined): ServeStatus['kv'] {
  const use = model?.kvUse?.();
  if (use === undefined) return null;
  const p = prefixCacheStats(model);
  return { ...use, reuseRate: p === null || p.promptTokens === 0 ? null : p.reusedTokens / p.promptTokens };
}

/** The engine's status, or null when it cannot answer (closed, or no engine). */
export async function engineStatus(engine: Engine | undefined): Promise<EngineStatus | null> {
  if (engine === undefined) return null;
  try { return await engine.status(); } catch { return null; }
}

/**
 * Resolves once no device of `engine` is poisoned or restarting (or after `maxMs`), so a model reloaded
 * after a missed deadline opens on the replacement device rather than being refused DevicePoisoned.
 */
export async function untilDevicesSettle(engine: Engine, maxMs = 30_000): Promise<void> {
  const end = Date.now() + maxMs;
  for (;;) {
    const s = await engineStatus(engine);
    if (s === null || !s.devices.some((d) => d.state === 'poisoned' || d.state === 'restarting' || d.state === 'starting')) return;
    if (Date.now() > end) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}
