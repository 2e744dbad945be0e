/**
 * What holds for every request, registered on the root instance (not encapsulated): errors in
 * OpenAI's shape, CORS, the failure counts of /v1/status and the request counts of /metrics. The API
 * key is asked for by `requireKey`, a hook scoped to the routes that need it (server.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorOfPayload } from './status.js';
import { failure, failureOf, type WireFailure } from './wire.js';

/** Sends a failure with its status. */
export function send(reply: FastifyReply, f: WireFailure): FastifyReply {
  return reply.code(f.status).send(f.body);
}

/**
 * A request refused by a route's schema (fastify's validation), with the failure the route answers:
 * its schemaErrorFormatter returns one, so a schema answers what the hand-written check it replaced did.
 */
export class SchemaRefusal extends Error {
  constructor(readonly failure: WireFailure) { super(failure.body.error.message); }
}

/** The API key's check: a `onRequest` hook for the routes behind it; undefined when the server has no key. */
export function requireKey(apiKey: string | undefined): ((req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) | undefined {
  if (apiKey === undefined) return undefined;
  return async (req, reply) => {
    if (req.headers.authorization !== `Bearer ${apiKey}`) return send(reply, failure(401, 'invalid_request_error', 'invalid_api_key', 'a wrong or missing API key (Authorization: Bearer KEY)'));
  };
}

/** Registers the root's error and not-found handlers and its hooks on `app`. */
export function registerRootHooks(app: FastifyInstance, cors: readonly string[], apiKey: string | undefined): void {
  app.setErrorHandler((e: { statusCode?: number; message: string; code?: string }, _req, reply) => {
    if (e instanceof SchemaRefusal) return send(reply, e.failure);
    // Fastify's own refusals (a body that is not JSON, a wrong content type) keep their 4xx status.
    const status = e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 500;
    if (status < 500) return send(reply, failure(status, 'invalid_request_error', e.code ?? 'InvalidRequest', `the body: ${e.message}`, 'body'));
    return send(reply, failureOf(e));
  });
  // An unknown path is behind the key too: without it, a client learns nothing of the routes.
  const key = requireKey(apiKey);
  app.setNotFoundHandler(key !== undefined ? { preHandler: key } : {}, (req, reply) => send(reply, failure(404, 'invalid_request_error', 'NotFound', `no route ${req.method} ${req.url}`)));

  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    const allowed = origin !== undefined && (cors.includes(origin) || cors.includes('*'));
    if (allowed) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    if (req.method !== 'OPTIONS') return;
    // A preflight: answered for the listed origins only, before the key is asked for (a browser sends none).
    if (!allowed) return send(reply, failure(403, 'invalid_request_error', 'CorsRefused', `the origin ${JSON.stringify(origin ?? null)} is not one this server answers (--cors)`));
    const asked = req.headers['access-control-request-headers'];
    return reply.code(204)
      .header('access-control-allow-methods', 'GET, POST, OPTIONS')
      .header('access-control-allow-headers', typeof asked === 'string' && asked !== '' ? asked : 'authorization, content-type')
      .header('access-control-max-age', '600')
      .send();
  });

  const s = app.served;
  // Every failed request counted by its code, for /v1/status.
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode >= 400) {
      const e = errorOfPayload(payload);
      s.counters.fail(req.url.split('?', 1)[0]!, reply.statusCode, e?.code ?? `HTTP${reply.statusCode}`, e?.message ?? '');
    }
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => { s.live.metrics.request(req.routeOptions.url ?? 'unmatched', reply.statusCode); });
}
