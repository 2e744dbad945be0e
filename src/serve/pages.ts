/**
 * The server's browser face: the chat page at `/`, the status page at `/status` and its JSON at
 * `/v1/status`. Each page is one static HTML string (src/serve/pages/) that loads nothing else, so it
 * works offline; the pages hold no secret, so they are served without the API key, and their own
 * requests to /v1 send it (the key field on the page). Two plugins: the pages (outside the key's
 * scope) and `/v1/status` (inside it).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Engine } from '../jobs/engine.js';
import { failureOf } from './wire.js';
import type { ModelHolder } from './model.js';
import { CHAT_HTML } from './pages/chat.js';
import { STATUS_HTML } from './pages/status.js';
import { engineStatus, kvStatus, prefixCacheStats, type ServeCounters, type ServeStatus } from './status.js';

/** What the status needs of the server. */
interface PagesContext {
  readonly modelId: string;
  readonly holder: ModelHolder;
  readonly maxQueue: number;
  readonly counters: ServeCounters;
  /** The generations running and waiting now. */
  readonly queue: () => { readonly running: number; readonly waiting: number; readonly slots: number };
  readonly engine?: Engine;
}

/** The status as `/v1/status` answers it. */
async function serveStatus(c: PagesContext): Promise<ServeStatus> {
  const state = c.holder.state;
  const err = state === 'failed' ? failureOf(c.holder.error).body.error : undefined;
  const q = c.queue();
  return {
    object: 'status',
    at: new Date().toISOString(),
    model: { id: c.modelId, state, error: err === undefined ? null : { code: err.code, message: err.message } },
    queue: { running: q.running, waiting: q.waiting, slots: q.slots, maxQueue: c.maxQueue, refused429: c.counters.refused429 },
    failures: { total: c.counters.total, byCode: c.counters.byCode, last: c.counters.last },
    engine: await engineStatus(c.engine),
    prefixCache: prefixCacheStats(c.holder.model),
    kv: kvStatus(c.holder.model),
  };
}

/** The pages: static HTML, no data, so served without the API key. */
export const pageRoutes: FastifyPluginAsync = async (app) => {
  const html = (body: string) => async (_req: unknown, reply: { type(t: string): { send(b: string): unknown } }) =>
    reply.type('text/html; charset=utf-8').send(body);
  app.get('/', html(CHAT_HTML));
  app.get('/status', html(STATUS_HTML));
  // Browsers ask for it on every page; a 204 keeps it out of the failure counts.
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).send());
};

/** `GET /v1/status`. */
export const statusRoute: FastifyPluginAsync = async (app) => {
  const s = app.served;
  const c: PagesContext = {
    modelId: s.modelId, holder: s.holder, maxQueue: s.maxQueue, counters: s.counters,
    queue: () => ({ running: s.queue.pending, waiting: s.queue.size, slots: s.slots() }),
    ...(s.options.engine !== undefined ? { engine: s.options.engine } : {}),
  };
  app.get('/v1/status', async (_req, reply) => reply.header('cache-control', 'no-store').send(await serveStatus(c)));
};

/** Counts a failure the server wrote itself on a stream already begun (no onSend sees it). */
export function countStreamFailure(c: ServeCounters, path: string, e: unknown): void {
  const f = failureOf(e);
  c.fail(path.split('?', 1)[0]!, f.status, f.body.error.code, f.body.error.message);
}
