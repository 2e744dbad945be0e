/**
 * The OpenAI-compatible server (fastify): health, models, chat completions and completions, streamed
 * as server-sent events or not. Up to `parallel` generations at a time (a model that batches them
 * decodes them in one step, model/qwen3/batch.ts; one that does not runs one at a time) behind a
 * bounded FIFO queue (p-queue): past `maxQueue` waiting requests a request gets 429. A client that goes away stops its generation at the
 * next token (or leaves the queue unserved). A generation whose device failed answers 500 with its
 * typed code and reloads the model; health answers 503 until it is back.
 *
 * Built of fastify plugins: the root holds what every request goes through (hooks.ts: errors, CORS,
 * counts) and the shared state (`app.served`, state.ts); each group of routes is a plugin of its own
 * (pages, health, and behind the API key's scoped `onRequest` hook: models, status, metrics,
 * completions, embeddings).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { completionRoutes } from './completions.js';
import { embeddingsRoute } from './embeddings.js';
import { registerRootHooks, requireKey } from './hooks.js';
import { healthRoute, metricsRoute, modelsRoute } from './info.js';
import type { ModelHolder } from './model.js';
import { pageRoutes, statusRoute } from './pages.js';
import { ServerState, type ServerOptions } from './state.js';
import type { ServeCounters } from './status.js';

export type { ServerOptions } from './state.js';

/** A running server. */
export interface Server {
  readonly app: FastifyInstance;
  readonly holder: ModelHolder;
  /** Resolves when the model has loaded (or failed to). */
  readonly loaded: Promise<void>;
  /** Requests accepted and not yet answered (the running one and those waiting). */
  readonly inFlight: number;
  /** The server's own counters (429 refusals, failed requests by code) that /v1/status shows. */
  readonly counters: ServeCounters;
  /** Listens; resolves with the URL (`http://host:port`). */
  listen(port: number, host: string): Promise<string>;
  /** Stops taking requests, cancels the waiting ones, lets the running one finish, closes the model. */
  close(): Promise<void>;
}

/** Creates the server and starts loading its model. */
export function createServer(o: ServerOptions): Server {
  const s = new ServerState(o);
  const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024 });
  app.decorate('served', s);
  registerRootHooks(app, o.cors ?? [], o.apiKey);
  void app.register(pageRoutes);
  void app.register(healthRoute);
  // Everything else needs the key when the server has one.
  void app.register(async (api) => {
    const key = requireKey(o.apiKey);
    if (key !== undefined) api.addHook('onRequest', key);
    await api.register(modelsRoute);
    await api.register(statusRoute);
    await api.register(metricsRoute);
    await api.register(completionRoutes);
    await api.register(embeddingsRoute);
  });

  const loaded = s.holder.load();
  return {
    app, holder: s.holder, loaded, counters: s.counters,
    get inFlight() { return s.inFlight; },
    async listen(port, host) { return app.listen({ port, host }); },
    async close() {
      s.closing = true;
      await s.queue.onIdle();
      await app.close();
      await s.holder.close();
    },
  };
}
