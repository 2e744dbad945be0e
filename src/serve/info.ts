/**
 * What the server says of itself, as plugins: `/v1/health` (outside the API key's scope, for load
 * balancers), `/v1/models` and `/metrics` (inside it). Their 200 answers are serialized by fastify
 * from the schemas here.
 */
import type { FastifyPluginAsync } from 'fastify';
import { SHUTTING_DOWN } from './state.js';
import { prefixCacheStats } from './status.js';
import { failure, failureOf } from './wire.js';

const STRING = { type: 'string' } as const;

/** Health's answer: its status and model, and the failure while it is not `ok`. */
const HEALTH = {
  type: 'object',
  properties: {
    status: STRING, model: STRING,
    error: { type: 'object', properties: { message: STRING, type: STRING, code: STRING, param: STRING }, required: ['message', 'type', 'code'] },
  },
  required: ['status', 'model'],
} as const;

/** `GET /v1/health`: 200 when the model is ready, 503 with the reason while it loads, after it failed, or once a stop began. */
export const healthRoute: FastifyPluginAsync = async (app) => {
  const s = app.served;
  app.get('/v1/health', { schema: { response: { 200: HEALTH, 503: HEALTH } } }, async (_req, reply) => {
    const modelId = s.modelId;
    // From the moment a stop begins, so that a load balancer stops sending requests here.
    if (s.closing) return reply.code(503).send({ status: 'stopping', model: modelId, ...SHUTTING_DOWN.body });
    const st = s.holder.state;
    if (st === 'ready') return { status: 'ok', model: modelId };
    const why = st === 'loading' ? 'the model is loading' : `the model failed to load: ${failureOf(s.holder.error).body.error.message}`;
    return reply.code(503).send({ status: st, model: modelId, ...failure(503, 'server_error', st === 'loading' ? 'ModelLoading' : 'ModelFailed', why).body });
  });
};

const MODEL_LIST = {
  type: 'object',
  properties: {
    object: STRING,
    data: {
      type: 'array',
      items: { type: 'object', properties: { id: STRING, object: STRING, created: { type: 'integer' }, owned_by: STRING }, required: ['id', 'object', 'created', 'owned_by'] },
    },
  },
  required: ['object', 'data'],
} as const;

/** `GET /v1/models`: the one model this server serves. */
export const modelsRoute: FastifyPluginAsync = async (app) => {
  const s = app.served;
  app.get('/v1/models', { schema: { response: { 200: MODEL_LIST } } }, async () => ({ object: 'list', data: [{ id: s.modelId, object: 'model', created: 0, owned_by: 'npu-offload' }] }));
};

/** `GET /metrics` (metrics.ts writes the text). */
export const metricsRoute: FastifyPluginAsync = async (app) => {
  const s = app.served;
  const { holder, live, queue } = s;
  app.get('/metrics', async (_req, reply) => {
    const m = holder.model as { ctx?: unknown } | undefined;
    // Each slot's cache holds ctx positions.
    const kvSize = typeof m?.ctx === 'number' ? m.ctx * s.slots() : undefined;
    let kvUsed = 0;
    const prefix = prefixCacheStats(holder.model);
    const kv = holder.model?.kvUse?.();
    for (const n of live.kv.values()) kvUsed += n;
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(live.metrics.text({
      waiting: queue.size, running: queue.pending, slots: s.slots(), ready: holder.state === 'ready', kvUsed, ...(kvSize !== undefined ? { kvSize } : {}),
      ...(prefix !== null ? { prefix } : {}),
      ...(kv !== undefined ? { kv } : {}),
    }));
  });
};
