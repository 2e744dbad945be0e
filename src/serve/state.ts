/**
 * What the server's plugins share (fastify's `decorate`, as `app.served`): the options, the model
 * holder, the one queue and its admission rules, the counters and metrics, and whether a stop has begun.
 */
import PQueue from 'p-queue';
import type { Engine } from '../jobs/engine.js';
import type { Pooling } from '../model/qwen3/embed.js';
import { Metrics } from './metrics.js';
import { ModelHolder, type ServedModel } from './model.js';
import { ServeCounters } from './status.js';
import { failure, failureOf, type WireFailure } from './wire.js';

/** Options of createServer. */
export interface ServerOptions {
  /** The id `/v1/models` lists and requests name. */
  readonly modelId: string;
  /** Opens the model (again after a device failure). */
  readonly open: () => Promise<ServedModel>;
  /** Requests that may wait behind the running ones (default 16); one more is 429. */
  readonly maxQueue?: number;
  /**
   * Generations that run at once (default 4), as many as the model decodes together (its `slots`; a
   * model without them runs one at a time).
   */
  readonly parallel?: number;
  /** When set, every /v1 request but health needs `Authorization: Bearer KEY`. */
  readonly apiKey?: string;
  /** Where the server's own lines go (load failures, reloads). */
  readonly log?: (line: string) => void;
  /** The engine the model runs on, for /v1/status (its devices, actors, cache, last errors). */
  readonly engine?: Engine;
  /**
   * Origins a browser page may call from (`--cors ORIGIN...`; `*` any): their requests' answers carry
   * Access-Control-Allow-Origin and their preflights are answered. None by default.
   */
  readonly cors?: readonly string[];
  /** A Jinja chat template used over the model's own (`--chat-template FILE`, already read and checked). */
  readonly chatTemplate?: string;
  /** How /v1/embeddings pools a sequence's hidden states (`--pooling`, default mean). */
  readonly pooling?: Pooling;
}

/** What the metrics see of the running generations. */
export interface Live {
  readonly metrics: Metrics;
  /** KV cache positions each running generation holds. */
  readonly kv: Map<symbol, number>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's shared state (createServer decorates the root with it). */
    readonly served: ServerState;
  }
}

/** The answer of a server that is stopping. */
export const SHUTTING_DOWN: WireFailure = failure(503, 'server_error', 'ShuttingDown', 'the server is shutting down');

/** The server's shared state. */
export class ServerState {
  readonly modelId: string;
  readonly maxQueue: number;
  readonly parallel: number;
  readonly log: (line: string) => void;
  readonly holder: ModelHolder;
  readonly queue = new PQueue({ concurrency: 1 });
  readonly counters = new ServeCounters();
  readonly live: Live = { metrics: new Metrics(), kv: new Map() };
  /** Set when a stop begins. */
  closing = false;
  /** Requests accepted and not yet answered: the running one and those waiting. */
  inFlight = 0;

  constructor(readonly options: ServerOptions) {
    this.modelId = options.modelId;
    this.log = options.log ?? (() => undefined);
    this.maxQueue = options.maxQueue ?? 16;
    this.parallel = options.parallel ?? 4;
    this.holder = new ModelHolder(options.modelId, options.open, this.log);
  }

  /** The generations that run at once: `parallel`, at most the slots the model decodes together. */
  slots(): number {
    return Math.max(1, Math.min(this.parallel, this.holder.model?.slots ?? 1));
  }

  /** The 429 of a full queue; undefined when one more request may wait. */
  full(): WireFailure | undefined {
    const n = this.slots();
    const { inFlight, maxQueue } = this;
    if (inFlight < n + maxQueue) return undefined;
    return failure(429, 'rate_limit_error', 'QueueFull', `${inFlight - n} requests are waiting behind the ${n === 1 ? 'running one' : `${n} running`}, the most this server holds (--max-queue ${maxQueue})`);
  }

  /** Why a request cannot be taken now (stopping, the model failed or loading, the queue full); undefined when it can. */
  refusal(): WireFailure | undefined {
    const holder = this.holder;
    if (this.closing) return SHUTTING_DOWN;
    if (holder.state === 'failed') return failure(503, 'server_error', 'ModelFailed', `the model failed to load: ${failureOf(holder.error).body.error.message}`);
    if (holder.state !== 'ready' || holder.model === undefined) return MODEL_LOADING;
    return this.full();
  }

  /** Runs `work` in the queue, as many at once as the model's slots. */
  enqueue<T>(work: () => Promise<T>): Promise<T> {
    const n = this.slots();
    if (this.queue.concurrency !== n) this.queue.concurrency = n;
    return this.queue.add(work);
  }
}

/** The answer while the model loads. */
export const MODEL_LOADING: WireFailure = failure(503, 'server_error', 'ModelLoading', 'the model is loading; try again when /v1/health answers 200');
