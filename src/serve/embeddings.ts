/**
 * `POST /v1/embeddings`: OpenAI's embeddings route. `input` a string, an array of strings, an array of
 * token ids or an array of token-id arrays; each input gives one vector, the model's final-norm hidden
 * states pooled (`serve --pooling mean|last`, Qwen3Model.embed), as JSON numbers (`encoding_format`
 * `float`, the default) or as base64 of its little-endian f32 bytes (`base64`, what OpenAI's clients ask
 * for and decode). Each input runs alone from an empty cache, so a vector is the same bits alone and in
 * a batch. The requests wait in the server's one queue behind generations.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { EngineError, InvalidOptions, ResourceLimit } from '../errors/index.js';
import type { Pooling } from '../model/qwen3/embed.js';
import type { GenerateRequest } from '../model/qwen3/model.js';
import { SchemaRefusal } from './hooks.js';
import { SHUTTING_DOWN } from './state.js';
import { failure, failureOf, type WireFailure } from './wire.js';

/** What the route needs of the served model (Qwen3Model has it; an add-on's route model need not). */
interface EmbeddingModel {
  readonly config: { readonly hidden: number };
  embed(ids: readonly number[], pooling: Pooling, field: string): Promise<Float32Array>;
  encodePrompt(r: GenerateRequest): Promise<number[]>;
}

function canEmbed(m: unknown): m is EmbeddingModel {
  const x = m as Partial<EmbeddingModel> | undefined;
  return typeof x?.embed === 'function' && typeof x.encodePrompt === 'function' && typeof x.config?.hidden === 'number';
}

/** One input of a request: a text, or token ids; `field` its wire path (`input`, `input/2`). */
type Input = { readonly field: string; readonly text: string } | { readonly field: string; readonly ids: readonly unknown[] };

const isIds = (x: unknown): x is unknown[] => Array.isArray(x) && (x.length === 0 || typeof x[0] === 'number');

/** The inputs of a request's `input`; InvalidOptions naming the field that is wrong. */
function parseInputs(input: unknown): Input[] {
  if (typeof input === 'string') return [{ field: 'input', text: input }];
  if (!Array.isArray(input)) throw new InvalidOptions('input', `a string, an array of strings, an array of token ids or an array of token-id arrays, not ${input === null ? 'null' : typeof input}`);
  if (input.length === 0) throw new InvalidOptions('input', 'an empty array: give at least one input');
  if (typeof input[0] === 'number') return [{ field: 'input', ids: input }];
  return input.map((x, i): Input => {
    if (typeof x === 'string') return { field: `input/${i}`, text: x };
    if (isIds(x)) return { field: `input/${i}`, ids: x };
    throw new InvalidOptions(`input/${i}`, `a string or an array of token ids, not ${x === null ? 'null' : Array.isArray(x) ? 'an array of other things' : typeof x}`);
  });
}

/** A vector as base64 of its little-endian f32 bytes. */
function base64Of(v: Float32Array): string {
  const b = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i]!, i * 4);
  return b.toString('base64');
}

/** A failure whose field is an input's: a prompt past the context or its bytes names that input. */
function inputFailure(e: unknown, field: string): WireFailure {
  if (e instanceof ResourceLimit && (e.what === 'context' || e.what === 'prompt-bytes')) return failure(400, 'invalid_request_error', 'context_length_exceeded', e.message, field);
  const f = failureOf(e);
  // The model's encoder names a text `prompt`; here it is the input.
  if (f.status === 400 && (f.body.error.param === 'prompt' || f.body.error.param === undefined) && e instanceof EngineError) return failure(400, f.body.error.type, f.body.error.code, f.body.error.message, field);
  return f;
}

/** How the server lets the route in: its admission checks and queue (state.ts). */
interface EmbeddingsHost {
  readonly modelId: string;
  readonly pooling: Pooling;
  /** The ready model, or the failure to answer (loading, failed, shutting down, queue full). */
  admit(): { readonly model: unknown } | WireFailure;
  /** Runs `work` in the server's queue; undefined when the server stopped first. */
  queued<T>(work: () => Promise<T>): Promise<{ readonly value: T } | undefined>;
}

interface Body {
  readonly input?: unknown;
  readonly model?: unknown;
  readonly encoding_format?: unknown;
  readonly dimensions?: unknown;
}

/** A body that is not a JSON object (the route's schema refuses it). */
const NOT_AN_OBJECT = failure(400, 'invalid_request_error', 'InvalidOptions', 'the body is a JSON object', 'body');

/** `POST /v1/embeddings`, a plugin: the route over the server's admission checks and queue. */
export const embeddingsRoute: FastifyPluginAsync = async (app) => {
  const s = app.served;
  registerEmbeddings(app, {
    modelId: s.modelId, pooling: s.options.pooling ?? 'mean',
    admit: () => s.refusal() ?? { model: s.holder.model },
    queued: async (work) => {
      s.inFlight++;
      return s.enqueue(async () => {
        try { return s.closing ? undefined : { value: await work() }; } finally { s.inFlight--; }
      });
    },
  });
};

/** Registers `POST /v1/embeddings` on `app`. */
function registerEmbeddings(app: FastifyInstance, host: EmbeddingsHost): void {
  const send = (reply: FastifyReply, f: WireFailure) => reply.code(f.status).send(f.body);
  app.post('/v1/embeddings', { schema: { body: { type: 'object' } }, schemaErrorFormatter: () => new SchemaRefusal(NOT_AN_OBJECT) }, async (req, reply) => {
    const body = req.body as Body;
    if (body.model !== host.modelId) return send(reply, failure(404, 'invalid_request_error', 'model_not_found', `no model ${JSON.stringify(body.model ?? null)} here (this server serves ${JSON.stringify(host.modelId)})`, 'model'));
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') return send(reply, failure(400, 'invalid_request_error', 'InvalidOptions', `encoding_format is float or base64, not ${JSON.stringify(format)}`, 'encoding_format'));
    let inputs: Input[];
    try { inputs = parseInputs(body.input); } catch (e) { return send(reply, failureOf(e)); }
    const admitted = host.admit();
    if ('status' in admitted) return send(reply, admitted);
    if (!canEmbed(admitted.model)) return send(reply, failure(400, 'invalid_request_error', 'EmbeddingsUnsupported', `the model ${JSON.stringify(host.modelId)} is served by an add-on route that gives no embeddings`, 'model'));
    const hidden = admitted.model.config.hidden;
    if (body.dimensions !== undefined && body.dimensions !== hidden) {
      return send(reply, failure(400, 'invalid_request_error', 'InvalidOptions', `dimensions ${JSON.stringify(body.dimensions)}: this model's embeddings have ${hidden} (they are not shortened)`, 'dimensions'));
    }
    const done = await host.queued(async (): Promise<WireFailure | { data: unknown[]; tokens: number }> => {
      const m = admitted.model as EmbeddingModel;
      const data: unknown[] = [];
      let tokens = 0;
      for (const [index, x] of inputs.entries()) {
        let ids: number[];
        let v: Float32Array;
        try {
          ids = 'text' in x ? await m.encodePrompt({ prompt: x.text }) : (x.ids as number[]);
          v = await m.embed(ids, host.pooling, x.field);
        } catch (e) {
          return inputFailure(e, x.field);
        }
        tokens += ids.length;
        data.push({ object: 'embedding', index, embedding: format === 'base64' ? base64Of(v) : Array.from(v) });
      }
      return { data, tokens };
    });
    if (done === undefined) return send(reply, SHUTTING_DOWN);
    const r = done.value;
    if ('status' in r) return send(reply, r);
    return { object: 'list', data: r.data, model: host.modelId, usage: { prompt_tokens: r.tokens, total_tokens: r.tokens } };
  });
}
