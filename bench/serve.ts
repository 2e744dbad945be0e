/**
 * `npm run bench` (serve): the server on the demo model (random weights, Qwen3's tokenizer, host
 * target), driven by the official openai client over loopback. Requests per second and time to first
 * token with 1 and with 8 concurrent clients (streamed chat, 32 tokens each; with 8 clients the time to
 * first token includes the wait in the queue, as one generation runs at a time), and the server's
 * overhead per token: a request's time per generated token against `generate` on the same model.
 *
 * Then the prefix cache (src/model/qwen3/prefix.ts): time to first token of a 1200-token prompt and of
 * the same prompt again (its prefix taken from the cache), on a Qwen3-0.6B-shaped Q4_0 file (--model
 * PATH, else one generated), ctx 2048, 2 threads; the goal is the second under a quarter of the first,
 * with the same answer.
 *
 * Flags: --requests N per client (default 4), --tokens N (default 32), --model PATH, --prompt N (1200).
 * Never part of `npm test`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadModel } from '../src/model/qwen3/model.js';
import { QWEN3_0_6B_SHAPE, writeTinyQwen3 } from '../src/model/qwen3/tiny.js';
import { DEFAULT_PREFIX_CACHE_BYTES } from '../src/model/qwen3/prefix.js';
import { mulberry32 } from '../src/numerics/random.js';
import { demoModel } from '../src/serve/demo.js';
import { createServer } from '../src/serve/server.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const REQUESTS = arg('requests', 4);
const TOKENS = arg('tokens', 32);
const MESSAGES = [{ role: 'user' as const, content: 'Tell me about the sea.' }];

interface Sample { ttftMs: number; totalMs: number; tokens: number }

async function one(client: OpenAI): Promise<Sample> {
  const t0 = performance.now();
  let ttft = -1;
  let tokens = 0;
  const stream = await client.chat.completions.create({ model: 'qwen3-demo', messages: MESSAGES, max_tokens: TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } });
  for await (const ch of stream) {
    if (ttft < 0 && (ch.choices[0]?.delta.content ?? '') !== '') ttft = performance.now() - t0;
    if (ch.usage) tokens = ch.usage.completion_tokens;
  }
  return { ttftMs: ttft, totalMs: performance.now() - t0, tokens };
}

async function clients(client: OpenAI, n: number): Promise<{ reqS: number; ttftMs: number; msPerToken: number }> {
  const t0 = performance.now();
  const all = (await Promise.all(Array.from({ length: n }, async () => {
    const out: Sample[] = [];
    for (let i = 0; i < REQUESTS; i++) out.push(await one(client));
    return out;
  }))).flat();
  const wall = performance.now() - t0;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { reqS: (all.length * 1000) / wall, ttftMs: mean(all.map((s) => s.ttftMs)), msPerToken: mean(all.map((s) => s.totalMs / Math.max(1, s.tokens))) };
}

async function main(): Promise<void> {
  const cache = mkdtempSync(join(tmpdir(), 'npu-serve-bench-'));
  try {
    const demo = demoModel(cache);
    const model = await loadModel(demo.path, { target: 'host', ctx: 256, tokenizer: demo.tokenizer });
    // The server and the direct runs share the one model, so only the server's own work differs.
    const server = createServer({ modelId: 'qwen3-demo', open: async () => ({ generate: (r) => model.generate(r), close: async () => undefined }) });
    const url = await server.listen(0, '127.0.0.1');
    await server.loaded;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    await one(client); // warm: programs compiled, caches filled
    const c1 = await clients(client, 1);
    const c8 = await clients(client, 8);
    await model.complete({ messages: MESSAGES, maxTokens: TOKENS, temperature: 0 }); // warm, as the server was
    let direct = 0;
    let directTokens = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const r = await model.complete({ messages: MESSAGES, maxTokens: TOKENS, temperature: 0 });
      direct += performance.now() - t0;
      directTokens += Math.max(1, r.ids.length);
    }
    const directPerToken = direct / directTokens;
    console.log(`serve bench: the demo model (random weights) on host, ${TOKENS} tokens per request, ${REQUESTS} requests per client`);
    console.log(`  1 client : ${c1.reqS.toFixed(2)} req/s, time to first token ${c1.ttftMs.toFixed(1)} ms`);
    console.log(`  8 clients: ${c8.reqS.toFixed(2)} req/s, time to first token ${c8.ttftMs.toFixed(1)} ms (queue wait included)`);
    console.log(`  per token: served ${c1.msPerToken.toFixed(2)} ms, generate ${directPerToken.toFixed(2)} ms, overhead ${(c1.msPerToken - directPerToken).toFixed(2)} ms`);
    await server.close();
    await model.close();
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/** Time to first token of a long prompt, then of the same prompt again (from the prefix cache). */
async function repeatedPrompt(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'npu-prefix-bench-'));
  try {
    const i = process.argv.indexOf('--model');
    let path = i >= 0 ? process.argv[i + 1]! : '';
    if (path === '') {
      path = join(dir, 'q06-Q4_0.gguf');
      writeTinyQwen3(path, { ...QWEN3_0_6B_SHAPE, type: 'Q4_0' });
    }
    const n = arg('prompt', 1200);
    const model = await loadModel(path, { target: 'host', threads: 2, ctx: 2048, cacheDir: join(dir, 'cache'), prefixCache: { bytes: DEFAULT_PREFIX_CACHE_BYTES } });
    await model.warm({ promptTokens: n });
    const r = mulberry32(7);
    const prompt = Array.from({ length: n }, () => Math.floor(r() * (model.config.vocab - 3)));
    // Wall time, and the process's CPU time (every thread's: the device's too), which a shared machine disturbs less.
    const once = async (): Promise<{ ttftMs: number; cpuMs: number; ids: number[]; cached: number }> => {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      let ttft = -1;
      let cpu = -1;
      const it = model.generate({ promptIds: prompt, maxTokens: 16, temperature: 0, ignoreEos: true });
      for (;;) {
        const x = await it.next();
        if (ttft < 0) { ttft = performance.now() - t0; const c = process.cpuUsage(c0); cpu = (c.user + c.system) / 1000; }
        if (x.done === true) return { ttftMs: ttft, cpuMs: cpu, ids: x.value.ids, cached: x.value.cachedTokens ?? 0 };
      }
    };
    const first = await once();
    const second = await once();
    const s = model.prefixCache?.stats();
    console.log(`prefix cache: a ${n}-token prompt twice, 0.6B-shaped Q4_0, ctx 2048, 2 threads`);
    console.log(`  time to first token: first ${first.ttftMs.toFixed(0)} ms, second ${second.ttftMs.toFixed(0)} ms (${second.cached} positions from the cache), ratio ${(second.ttftMs / first.ttftMs).toFixed(3)} (goal < 0.25); same answer: ${first.ids.join() === second.ids.join()}`);
    console.log(`  its CPU time: first ${first.cpuMs.toFixed(0)} ms, second ${second.cpuMs.toFixed(0)} ms, ratio ${(second.cpuMs / first.cpuMs).toFixed(3)} (${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`);
    if (s !== undefined) console.log(`  cache: ${s.blocks} blocks of ${s.block} positions, ${(s.bytes / 2 ** 20).toFixed(0)} MiB of ${(s.budget / 2 ** 20).toFixed(0)} MiB, cut at any ${s.cut}`);
    await model.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!process.argv.includes('--prefix-only')) await main();
await repeatedPrompt();
