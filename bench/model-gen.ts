/**
 * `npm run bench` (model generation): a generated Qwen3 with Qwen3-0.6B's shapes (28 layers, hidden
 * 1024, 16 query and 8 KV heads of 128, FFN 3072, vocab 151936, tied) in Q4_0 and Q8_0, run by the
 * engine on a target and by llama.cpp (node-llama-cpp 3.21.1) on the same file, 2 threads: a prompt of
 * 256 tokens (prefill tok/s), then 128 decoded tokens (decode tok/s), in a KV cache of `--ctx` positions
 * (1024, as users run it), the ratio to llama.cpp for each, each run's load time (the engine's with
 * `warm({ promptTokens })`: its decode and its prompt's prefill sessions opened and the weights read in;
 * a second prompt's prefill is printed beside the first's) and peak RSS beside the
 * file size, and (on host) a decode step's time by kernel, from the addon's per-step profile
 * (NPU_OFFLOAD_HOST_PROFILE, src/native/host/list.cc). Every run is a child process of its own, so a
 * peak is that run's alone.
 *
 * Flags: --target (default host, the fast one), --types Q4_0,Q8_0, --threads 2, --ctx 1024, --prompt 256,
 * --decode 128, --layers N and --vocab N (a smaller model of the same widths), --exact-matmul (host: the exact matmul
 * class rather than the default q8 activations, docs/HOST.md), --cache-type f32|f16 (the engine's KV cache: f32, the
 * default and the exact class, or f16 as llama.cpp's; docs/MODELS.md). The cpu target is the oracle (f64,
 * one thread): the full model would take hours there, so on cpu the default is 1 layer and a vocab of
 * 8192, and the output says so. Never part of `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Token } from 'node-llama-cpp';
import type { QuantType } from '../src/model/gguf/ggmlTypes.js';
import { loadModel } from '../src/model/qwen3/model.js';
import { QWEN3_0_6B_SHAPE, writeTinyQwen3 } from '../src/model/qwen3/tiny.js';
import { mulberry32 } from '../src/numerics/random.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

interface Run {
  side: 'engine' | 'llama.cpp';
  loadMs: number;
  prefillTokS: number;
  /** The engine's prefill of a second prompt, its program compiled and its session open. */
  warmPrefillTokS?: number;
  decodeTokS: number;
  rssMb: number;
  /** A decode step's median time per kernel op in ms (host only), from the addon's profile lines. */
  kernels?: Record<string, number>;
  note?: string;
}

/** The prompt: `n` ids drawn from the plain vocabulary (the last three ids are the specials). */
function promptIds(n: number, vocab: number): number[] {
  const r = mulberry32(42);
  return Array.from({ length: n }, () => Math.floor(r() * (vocab - 3)));
}

async function runEngine(path: string, target: string, threads: number, ctx: number, prompt: number[], decode: number): Promise<Run> {
  const t0 = performance.now();
  const cacheType = arg('cache-type', 'f32');
  if (cacheType !== 'f32' && cacheType !== 'f16') throw new Error(`--cache-type is f32 or f16, not ${cacheType}`);
  const model = await loadModel(path, { target, threads, ctx, cacheType, ...(process.argv.includes('--exact-matmul') ? { exactMatmul: true } : {}) });
  // As a server does while it says it is loading (and as llama.cpp warms its context up): the decode
  // program and the prefill program of a prompt this long compiled (or taken from the cache), their
  // sessions opened and the weights read in; all of it counted in the load time.
  await model.warm({ promptTokens: prompt.length });
  const loadMs = performance.now() - t0;
  try {
    const r = await model.complete({ promptIds: prompt, maxTokens: decode, ignoreEos: true, repetitionPenalty: 1 });
    // The first prompt also compiles (or reads from the cache) and opens its prefill program; a second
    // prompt of the same length shows the steady prefill.
    const again = await model.complete({ promptIds: prompt.map((id) => (id + 1) % 150000), maxTokens: 1, ignoreEos: true, repetitionPenalty: 1 });
    return { side: 'engine', loadMs, prefillTokS: r.timings.prefillTokS, warmPrefillTokS: again.timings.prefillTokS, decodeTokS: r.timings.decodeTokS, rssMb: process.resourceUsage().maxRSS / 1024 };
  } finally {
    await model.close();
  }
}

async function runLlama(path: string, threads: number, ctxSize: number, prompt: number[], decode: number): Promise<Run> {
  const { getLlama } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
  const l0 = performance.now();
  const model = await llama.loadModel({ modelPath: path });
  // llama.cpp's KV cache is f16 (its default) whatever --cache-type says.
  const ctx = await model.createContext({ contextSize: ctxSize, threads, batchSize: prompt.length });
  const loadMs = performance.now() - l0;
  const t0 = performance.now();
  let first = 0;
  let n = 0;
  // Greedy (temperature 0): the first token ends the prefill, each later one is a decode step.
  for await (const _ of ctx.getSequence().evaluate(prompt as Token[], { temperature: 0 })) {
    if (n === 0) first = performance.now();
    if (++n >= decode) break;
  }
  const end = performance.now();
  await ctx.dispose();
  await model.dispose();
  return { side: 'llama.cpp', loadMs, prefillTokS: (prompt.length * 1000) / (first - t0), decodeTokS: ((n - 1) * 1000) / (end - first), rssMb: process.resourceUsage().maxRSS / 1024 };
}

/** One run in this process: `--one SIDE PATH`, printing its Run as JSON. */
async function one(): Promise<void> {
  const i = process.argv.indexOf('--one');
  const side = process.argv[i + 1]!;
  const path = process.argv[i + 2]!;
  const prompt = promptIds(Number(arg('prompt', '256')), Number(arg('vocab-now', '0')));
  const decode = Number(arg('decode', '128'));
  const threads = Number(arg('threads', '2'));
  const ctx = Number(arg('ctx', '1024'));
  const r = side === 'engine' ? await runEngine(path, arg('target', 'host'), threads, ctx, prompt, decode) : await runLlama(path, threads, ctx, prompt, decode);
  console.log(JSON.stringify(r));
}

/**
 * A decode step's median time per kernel op, from the addon's profile lines on stderr
 * (`host profile: op count/ms ...`, one per step): the last `steps` lines are the decode steps.
 */
function decodeKernelTimes(stderr: string, steps: number): Record<string, number> | undefined {
  const lines = stderr.split('\n').filter((l) => l.startsWith('host profile:')).slice(-steps);
  if (lines.length === 0) return undefined;
  const per = new Map<string, number[]>();
  for (const l of lines) {
    for (const m of l.matchAll(/ (\w+) \d+\/([\d.]+)ms/g)) per.set(m[1]!, [...(per.get(m[1]!) ?? []), Number(m[2])]);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return Object.fromEntries([...per].map(([op, xs]) => [op, median(xs)]));
}

function child(side: string, path: string, vocab: number): Run {
  const args = [fileURLToPath(import.meta.url), '--one', side, path, '--vocab-now', String(vocab), ...process.argv.slice(2)];
  // The engine's host runs print each step's time by kernel (the addon's profile: a clock read per
  // kernel, a few hundred per step, no measurable cost beside a step's milliseconds).
  const env = side === 'engine' ? { ...process.env, NPU_OFFLOAD_HOST_PROFILE: '1' } : process.env;
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26, env });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    const run = JSON.parse(line) as Run;
    const kernels = side === 'engine' ? decodeKernelTimes(r.stderr, Number(arg('decode', '128')) - 1) : undefined;
    return kernels === undefined ? run : { ...run, kernels };
  } catch {
    const why = (r.stderr || r.stdout).trim().split('\n').filter((l) => !l.startsWith('host profile:')).slice(-3).join(' ');
    return { side: side as Run['side'], loadMs: NaN, prefillTokS: NaN, decodeTokS: NaN, rssMb: NaN, note: `did not run: ${why || `exit ${r.status}`}` };
  }
}

async function main(): Promise<void> {
  const target = arg('target', 'host');
  const reduced = target === 'cpu';
  const layers = Number(arg('layers', reduced ? '1' : '28'));
  const vocab = Number(arg('vocab', reduced ? '8192' : '151936'));
  const types = arg('types', 'Q4_0,Q8_0').split(',') as QuantType[];
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`);
  const full = layers === 28 && vocab === 151936;
  console.log(`model: Qwen3-0.6B widths (hidden 1024, 16/8 heads of 128, ffn 3072, tied), ${layers} layers, vocab ${vocab}${full ? '' : ' (a SMALLER model than Qwen3-0.6B: the figures are not the 0.6B comparison)'}; target ${target}; ctx ${arg('ctx', '1024')}, prompt ${arg('prompt', '256')}, decode ${arg('decode', '128')}, threads ${arg('threads', '2')}, engine KV cache ${arg('cache-type', 'f32')}`);
  if (reduced) console.log('  the cpu target is the f64 oracle on one thread: its figures measure the harness, not a fast path (the host target is the one to compare)');
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-gen-'));
  try {
    for (const type of types) {
      const path = join(dir, `${type}.gguf`);
      writeTinyQwen3(path, { ...QWEN3_0_6B_SHAPE, layers, vocab, type });
      const mb = statSync(path).size / 2 ** 20;
      const ours = child('engine', path, vocab);
      const theirs = child('llama.cpp', path, vocab);
      // Two decimals: a 1.17x read as "1.2x" beside a goal of 1.2 would claim what was not reached.
      const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : 'n/a');
      console.log(`${type}: file ${mb.toFixed(0)} MiB`);
      for (const r of [ours, theirs]) {
        console.log(`  ${r.side.padEnd(10)} load ${r.loadMs.toFixed(0)} ms, prefill ${r.prefillTokS.toFixed(2)} tok/s${r.warmPrefillTokS === undefined ? '' : ` (a second prompt: ${r.warmPrefillTokS.toFixed(2)})`}, decode ${r.decodeTokS.toFixed(2)} tok/s, peak RSS ${r.rssMb.toFixed(0)} MiB (${ratio(r.rssMb, mb)} of the file)${r.note ? `; ${r.note}` : ''}`);
      }
      console.log(`  ratio to llama.cpp: prefill ${ratio(ours.prefillTokS, theirs.prefillTokS)}${ours.warmPrefillTokS === undefined ? '' : ` (a second prompt: ${ratio(ours.warmPrefillTokS, theirs.prefillTokS)})`} (goal >= 1.0), decode ${ratio(ours.decodeTokS, theirs.decodeTokS)} (goal >= 1.2), peak RSS ${ratio(ours.rssMb, theirs.rssMb)} (goal <= 1.0)`);
      if (ours.kernels !== undefined) {
        const byTime = Object.entries(ours.kernels).sort((a, b) => b[1] - a[1]);
        const total = byTime.reduce((s, [, ms]) => s + ms, 0);
        console.log(`  engine decode step by kernel (median ms of ${Number(arg('decode', '128')) - 1} steps, ${total.toFixed(1)} ms in kernels of ${(1000 / ours.decodeTokS).toFixed(1)} ms a step): ${byTime.map(([op, ms]) => `${op} ${ms.toFixed(2)}`).join(', ')}`);
      }
      rmSync(path);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await (process.argv.includes('--one') ? one() : main());
