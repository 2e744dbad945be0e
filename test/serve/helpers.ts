/** Shared pieces of the serve tests: a tiny Qwen3 on disk and a server on a loopback port. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { createEngine } from '../../src/jobs/engine.js';
import { loadModel, type LoadModelOptions } from '../../src/model/qwen3/model.js';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { createServer, type Server, type ServerOptions } from '../../src/serve/server.js';

/** A directory holding a tiny Qwen3 GGUF (1 layer, hidden 64). */
export function tinyModel(): { dir: string; path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'npu-serve-'));
  const path = join(dir, 'tiny.gguf');
  writeTinyQwen3(path, { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, contextLength: 256, std: 0.3 });
  return { dir, path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A server of the model at `path` on the host target, listening on a loopback port, and a client of it. */
export async function startServer(path: string, o: Partial<ServerOptions> & { load?: LoadModelOptions } = {}): Promise<{ server: Server; url: string; client: OpenAI }> {
  const server = createServer({ modelId: 'tiny', open: () => loadModel(path, { target: 'host', ctx: 64, ...o.load }), ...o });
  const url = await server.listen(0, '127.0.0.1');
  await server.loaded;
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: o.apiKey ?? 'none', maxRetries: 0 });
  return { server, url, client };
}

/**
 * How long a fresh engine takes here, now, to load the model at `path` on host and serve one 6-token
 * completion: what a server's open and first request cost. Tests of deadlines scale theirs by it, so
 * a loaded machine moves both.
 */
export async function coldLoadAndRequestMs(path: string): Promise<number> {
  const t0 = performance.now();
  const engine = createEngine({});
  try {
    // The server closes the model it opened.
    const server = createServer({ modelId: 'tiny', open: () => loadModel(path, { target: 'host', ctx: 64, engine }) });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
      const r = await client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0 });
      expect(r.usage!.completion_tokens).to.equal(6);
    } finally { await server.close(); }
  } finally { await engine.close(); }
  return performance.now() - t0;
}

/** The value of an unlabelled metric `name` in a /metrics page (NaN where it is absent). */
export const metric = (text: string, name: string): number => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2]);
