/**
 * `GET /metrics`: the server's counters in Prometheus's text format (version 0.0.4), written here:
 * requests by route and status, prompt and generated tokens (as the answers' usage counts them),
 * time-to-first-token and per-token histograms, and the gauges of the moment (queue depth, busy slots,
 * KV cache positions of the running generation, the model's state), and the prefix cache's lookups,
 * hits, reused tokens, blocks and bytes when the model has one.
 */
import type { PrefixCacheStats } from '../model/qwen3/prefix.js';
import type { KvUse } from '../model/qwen3/kv.js';

/** A histogram's upper bounds, in seconds. */
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;
const TOKEN_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) { this.counts = bounds.map(() => 0); }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) if (v <= this.bounds[i]!) this.counts[i]!++;
  }
}

/** A label value escaped as the text format asks (backslash, quote, newline). */
function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** What the server knows at the moment of a scrape. */
export interface Gauges {
  readonly waiting: number;
  readonly running: number;
  readonly slots: number;
  readonly ready: boolean;
  /** Positions of the KV cache the running generation holds (its prompt and tokens so far), and the cache's size when known. */
  readonly kvUsed: number;
  readonly kvSize?: number;
  /** The model's prefix cache's counters, when it has one. */
  readonly prefix?: PrefixCacheStats;
  /** The model's KV budget, when it keeps one. */
  readonly kv?: KvUse;
}

/** The server's metrics. */
export class Metrics {
  readonly #requests = new Map<string, number>();
  promptTokens = 0;
  generatedTokens = 0;
  readonly ttft = new Histogram(TTFT_BUCKETS);
  readonly perToken = new Histogram(TOKEN_BUCKETS);

  /** Counts one answered request. */
  request(route: string, status: number): void {
    const key = `route="${label(route)}",status="${status}"`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  /** The text format. */
  text(g: Gauges): string {
    const lines: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge' | 'histogram', help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    metric('npu_offload_requests_total', 'counter', 'Requests answered, by route and HTTP status.');
    for (const [k, v] of [...this.#requests].sort()) lines.push(`npu_offload_requests_total{${k}} ${v}`);
    metric('npu_offload_prompt_tokens_total', 'counter', 'Prompt tokens of answered generations (each prompt once, as usage counts them).');
    lines.push(`npu_offload_prompt_tokens_total ${this.promptTokens}`);
    metric('npu_offload_generated_tokens_total', 'counter', 'Tokens generated in answered generations (usage completion_tokens).');
    lines.push(`npu_offload_generated_tokens_total ${this.generatedTokens}`);
    const histogram = (name: string, h: Histogram, help: string) => {
      metric(name, 'histogram', help);
      h.bounds.forEach((b, i) => lines.push(`${name}_bucket{le="${b}"} ${h.counts[i]}`));
      lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
    };
    histogram('npu_offload_time_to_first_token_seconds', this.ttft, 'From a generation\'s start (its turn in the queue) to its first token: rendering, encoding, prefill.');
    histogram('npu_offload_time_per_output_token_seconds', this.perToken, 'Between successive tokens of a generation.');
    metric('npu_offload_queue_depth', 'gauge', 'Requests waiting behind the running ones.');
    lines.push(`npu_offload_queue_depth ${g.waiting}`);
    metric('npu_offload_busy_slots', 'gauge', 'Generations running now.');
    lines.push(`npu_offload_busy_slots ${g.running}`);
    metric('npu_offload_slots', 'gauge', 'Generations that can run at once.');
    lines.push(`npu_offload_slots ${g.slots}`);
    metric('npu_offload_kv_cache_used_positions', 'gauge', 'KV cache positions the running generations hold (prompts and tokens so far).');
    lines.push(`npu_offload_kv_cache_used_positions ${g.kvUsed}`);
    if (g.kvSize !== undefined) {
      metric('npu_offload_kv_cache_positions', 'gauge', 'Positions the KV caches hold (--ctx for each slot).');
      lines.push(`npu_offload_kv_cache_positions ${g.kvSize}`);
    }
    /** A metric of one unlabelled value. */
    const one = (name: string, type: 'counter' | 'gauge', help: string, v: number) => { metric(name, type, help); lines.push(`${name} ${v}`); };
    const kv = g.kv;
    if (kv !== undefined) {
      one('npu_offload_kv_block_positions', 'gauge', 'Positions per block of the KV budget.', kv.block);
      one('npu_offload_kv_blocks', 'gauge', 'Blocks of the KV budget (--kv-budget; --ctx for each slot by default).', kv.total);
      one('npu_offload_kv_blocks_reserved', 'gauge', 'Blocks the running generations hold (each its prompt and max_tokens).', kv.reserved);
      one('npu_offload_kv_blocks_used', 'gauge', 'Of the blocks held, those holding filled positions.', kv.used);
      one('npu_offload_kv_blocks_free', 'gauge', 'Blocks of the budget no running generation holds.', kv.free);
      one('npu_offload_kv_refused_total', 'counter', 'Generations refused because the budget could not hold them (KvCacheFull).', kv.refused);
    }
    const p = g.prefix;
    if (p !== undefined) {
      one('npu_offload_prefix_cache_lookups_total', 'counter', 'Generations that looked for a cached prefix of their prompt.', p.lookups);
      one('npu_offload_prefix_cache_hits_total', 'counter', 'Generations that started from a cached prefix.', p.hits);
      one('npu_offload_prefix_cache_prompt_tokens_total', 'counter', 'Prompt tokens of the generations that looked.', p.promptTokens);
      one('npu_offload_prefix_cache_reused_tokens_total', 'counter', 'Prompt tokens taken from the prefix cache rather than prefilled.', p.reusedTokens);
      one('npu_offload_prefix_cache_blocks', 'gauge', 'Blocks of positions the prefix cache holds.', p.blocks);
      one('npu_offload_prefix_cache_bytes', 'gauge', 'Bytes of the blocks the prefix cache holds.', p.bytes);
      one('npu_offload_prefix_cache_budget_bytes', 'gauge', 'The prefix cache\'s budget (--cache-ram).', p.budget);
      one('npu_offload_prefix_cache_evicted_total', 'counter', 'Blocks let go for room, least recently used first.', p.evicted);
    }
    metric('npu_offload_model_ready', 'gauge', '1 when the model is loaded and serving.');
    lines.push(`npu_offload_model_ready ${g.ready ? 1 : 0}`);
    return `${lines.join('\n')}\n`;
  }
}
