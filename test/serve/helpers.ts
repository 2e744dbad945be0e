/** Shared pieces of the serve tests: a tiny Qwen3 on disk and a server on a loopback port. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
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
