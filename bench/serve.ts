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
 * Flags: --requests N per client (default 4), --tokens N (default 32), --model PATH, --prompt N (1200)
 * (--prefix-only runs the prefix cache's part alone).
 *
 * Then aggregate decode with 1, 2, 4 and 8 concurrent streams (`--streams 1,2,4,8`) on a generated
 * Qwen3 with Qwen3-0.6B's shapes (`--type Q4_0`, `--layers 28`, `--vocab 151936`), 2 threads, a KV cache of
 * `--ctx 1024` positions per sequence: the engine's model with `parallel` = the streams (its generations
 * decoded together, model/qwen3/batch.ts; 1 stream decodes alone) beside llama.cpp (node-llama-cpp) with a
 * context of that many `sequences`, each in a child process of its own. Each stream prefills its own
 * `--prompt 32`-token prompt and decodes `--decode 64` tokens greedily; the aggregate rate counts every
 * stream's tokens between the moment all have their first token and the moment the first ends (every
 * stream decoding), divided by that time. `--only demo|aggregate|prefix` runs one part. Never part of `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { Token } from 'node-llama-cpp';
import type { QuantType } from '../src/model/gguf/ggmlTypes.js';
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

function text(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

/** Stream `s`'s prompt: `n` ids drawn from the plain vocabulary (the last three ids are the specials). */
function streamPrompt(s: number, n: number, vocab: number): number[] {
  const r = mulberry32(1000 + s);
  return Array.from({ length: n }, () => Math.floor(r() * (vocab - 3)));
}

/**
 * The aggregate decode rate of streams whose tokens came at these times (ms): the tokens after the
 * moment every stream has its first (each stream's first token ends its prefill) up to the moment the
 * first stream ends, per second of that window.
 */
function aggregateRate(times: readonly (readonly number[])[]): number {
  const start = Math.max(...times.map((t) => t[0]!));
  const end = Math.min(...times.map((t) => t[t.length - 1]!));
  let n = 0;
  for (const t of times) n += t.filter((x) => x > start && x <= end).length;
  return end > start ? (n * 1000) / (end - start) : NaN;
}

/** One side's streams in this process (`--one-aggregate SIDE STREAMS PATH`): prints the token times as JSON. */
async function oneAggregate(): Promise<void> {
  const i = process.argv.indexOf('--one-aggregate');
  const side = process.argv[i + 1]!;
  const streams = Number(process.argv[i + 2]);
  const path = process.argv[i + 3]!;
  const vocab = Number(text('vocab-now', '151936'));
  const threads = Number(text('threads', '2'));
  const ctx = Number(text('ctx', '1024'));
  const decode = Number(text('decode', '64'));
  const prompts = Array.from({ length: streams }, (_, s) => streamPrompt(s, Number(text('prompt', '32')), vocab));
  let times: number[][];
  if (side === 'engine') {
    const model = await loadModel(path, { target: 'host', threads, ctx, parallel: streams });
    await model.warm({ promptTokens: prompts[0]!.length });
    // Every program of the run compiled and its sessions open before the clock starts.
    await Promise.all(prompts.map((p) => model.complete({ promptIds: p, maxTokens: 2, temperature: 0, ignoreEos: true })));
    times = await Promise.all(prompts.map(async (p) => {
      const t: number[] = [];
      for await (const _ of model.generate({ promptIds: p, maxTokens: decode, temperature: 0, ignoreEos: true })) t.push(performance.now());
      return t;
    }));
    await model.close();
  } else {
    const { getLlama } = await import('node-llama-cpp');
    const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
    const model = await llama.loadModel({ modelPath: path });
    const context = await model.createContext({ contextSize: ctx * streams, sequences: streams, threads, batchSize: Math.max(512, prompts[0]!.length * streams) });
    const seqs = prompts.map(() => context.getSequence());
    const run = async (k: number, p: number[], max: number): Promise<number[]> => {
      const t: number[] = [];
      for await (const _ of seqs[k]!.evaluate(p as Token[], { temperature: 0 })) {
        t.push(performance.now());
        if (t.length >= max) break;
      }
      return t;
    };
    await Promise.all(prompts.map((p, k) => run(k, p, 2)));
    for (const q of seqs) await q.clearHistory();
    times = await Promise.all(prompts.map((p, k) => run(k, p, decode)));
    await context.dispose();
    await model.dispose();
  }
  console.log(JSON.stringify({ times, rssMb: process.resourceUsage().maxRSS / 1024 }));
}

function aggregateChild(side: string, streams: number, path: string, vocab: number): { rate: number; rssMb: number; note?: string } {
  const args = [fileURLToPath(import.meta.url), '--one-aggregate', side, String(streams), path, '--vocab-now', String(vocab), ...process.argv.slice(2)];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  try {
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { times: number[][]; rssMb: number };
    return { rate: aggregateRate(out.times), rssMb: out.rssMb };
  } catch {
    return { rate: NaN, rssMb: NaN, note: `did not run: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ') || `exit ${r.status}`}` };
  }
}

async function aggregate(): Promise<void> {
  const layers = Number(text('layers', '28'));
  const vocab = Number(text('vocab', '151936'));
  const type = text('type', 'Q4_0') as QuantType;
  const streams = text('streams', '1,2,4,8').split(',').map(Number);
  const full = layers === 28 && vocab === 151936;
  console.log(`aggregate decode: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores; Qwen3-0.6B widths, ${layers} layers, vocab ${vocab}${full ? '' : ' (a SMALLER model than Qwen3-0.6B)'}, ${type}; ctx ${text('ctx', '1024')} per sequence, prompt ${text('prompt', '32')}, decode ${text('decode', '64')}, threads ${text('threads', '2')}`);
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-serve-'));
  try {
    const path = join(dir, `${type}.gguf`);
    writeTinyQwen3(path, { ...QWEN3_0_6B_SHAPE, layers, vocab, type });
    for (const n of streams) {
      const ours = aggregateChild('engine', n, path, vocab);
      const theirs = aggregateChild('llama.cpp', n, path, vocab);
      const ratio = Number.isFinite(ours.rate / theirs.rate) ? `${(ours.rate / theirs.rate).toFixed(2)}x` : 'n/a';
      console.log(`  ${String(n).padStart(2)} streams: engine ${ours.rate.toFixed(2)} tok/s (peak RSS ${ours.rssMb.toFixed(0)} MiB), llama.cpp ${theirs.rate.toFixed(2)} tok/s (peak RSS ${theirs.rssMb.toFixed(0)} MiB), ratio ${ratio}${ours.note ? `; engine ${ours.note}` : ''}${theirs.note ? `; llama.cpp ${theirs.note}` : ''}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--one-aggregate')) await oneAggregate();
else if (process.argv.includes('--prefix-only')) await repeatedPrompt();
else {
  const only = text('only', '');
  if (only !== 'aggregate' && only !== 'prefix') await main();
  if (only !== 'demo' && only !== 'prefix') await aggregate();
  if (only !== 'demo' && only !== 'aggregate') await repeatedPrompt();
}
