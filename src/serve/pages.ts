/**
 * The server's browser face: the chat page at `/`, the status page at `/status` and its JSON at
 * `/v1/status`. Each page is one static HTML string (src/serve/pages/) that loads nothing else, so it
 * works offline; the pages hold no secret, so they are served without the API key, and their own
 * requests to /v1 send it (the key field on the page).
 */
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../jobs/engine.js';
import { failureOf } from './wire.js';
import type { ModelHolder } from './model.js';
import { CHAT_HTML } from './pages/chat.js';
import { STATUS_HTML } from './pages/status.js';
import { engineStatus, errorOfPayload, prefixCacheStats, type ServeCounters, type ServeStatus } from './status.js';

/** The paths served without the API key: static pages, no data. */
export const PAGE_PATHS: ReadonlySet<string> = new Set(['/', '/status', '/favicon.ico']);

/** What the status needs of the server. */
export interface PagesContext {
  readonly modelId: string;
  readonly holder: ModelHolder;
  readonly maxQueue: number;
  readonly counters: ServeCounters;
  /** The generations running and waiting now. */
  readonly queue: () => { readonly running: number; readonly waiting: number; readonly slots: number };
  readonly engine?: Engine;
}

/** Whether `url` (with its query) is one of PAGE_PATHS. */
export function isPage(url: string): boolean {
  return PAGE_PATHS.has(url.split('?', 1)[0]!);
}

/** The status as `/v1/status` answers it. */
export async function serveStatus(c: PagesContext): Promise<ServeStatus> {
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
  };
}

/** Registers the pages, `/v1/status`, and the hook that counts every failed request by its code. */
export function registerPages(app: FastifyInstance, c: PagesContext): void {
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode >= 400) {
      const e = errorOfPayload(payload);
      c.counters.fail(req.url.split('?', 1)[0]!, reply.statusCode, e?.code ?? `HTTP${reply.statusCode}`, e?.message ?? '');
    }
    return payload;
  });
  const html = (body: string) => async (_req: unknown, reply: { type(t: string): { send(b: string): unknown } }) =>
    reply.type('text/html; charset=utf-8').send(body);
  app.get('/', html(CHAT_HTML));
  app.get('/status', html(STATUS_HTML));
  // Browsers ask for it on every page; a 204 keeps it out of the failure counts.
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).send());
  app.get('/v1/status', async (_req, reply) => reply.header('cache-control', 'no-store').send(await serveStatus(c)));
}

/** Counts a failure the server wrote itself on a stream already begun (no onSend sees it). */
export function countStreamFailure(c: ServeCounters, path: string, e: unknown): void {
  const f = failureOf(e);
  c.fail(path.split('?', 1)[0]!, f.status, f.body.error.code, f.body.error.message);
}
