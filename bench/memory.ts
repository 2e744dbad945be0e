/**
 * `node dist/bench/memory.js FILE.gguf --ctx N --prompt N --tokens N [--chunk N] [--max-program-bytes N] [--cache-type f32|f16] [--warm]`: peak RSS (VmHWM) of one
 * generation on the host target, sampled around load, prefill and each decode step, and the time of
 * the first decode step against the steady ones. Prompt ids are 1..N (no tokenizer needed). Never part
 * of `npm test`. With `node --expose-gc` garbage is collected before each sample. `--warm` warms the model
 * first as bench/model-gen.ts does (its decode and its prompt's prefill programs ready, the weights read in).
 */
import { readFileSync } from 'node:fs';
import { loadModel } from '../src/model/qwen3/index.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

function status(): { rss: number; hwm: number; anon: number; file: number; threads: number } {
  const s = readFileSync('/proc/self/status', 'utf8');
  const field = (k: string): number => Number(/(\d+)/.exec(s.split('\n').find((l) => l.startsWith(k))?.slice(k.length) ?? '')?.[1] ?? 0);
  return { rss: field('VmRSS:') / 1024, hwm: field('VmHWM:') / 1024, anon: field('RssAnon:') / 1024, file: field('RssFile:') / 1024, threads: field('Threads:') };
}

const show = (what: string): void => {
  (globalThis as { gc?: () => void }).gc?.();
  const s = status();
  const m = process.memoryUsage();
  // anon: heaps, arenas and the KV cache; file: the mapped weights (and code); threads: the process's, workers' included.
  console.log(`${what.padEnd(22)} rss ${s.rss.toFixed(0)} MB, peak ${s.hwm.toFixed(0)} MB (anon ${s.anon.toFixed(0)}, file ${s.file.toFixed(0)} MB; ${s.threads} threads; heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MB, external ${(m.external / 2 ** 20).toFixed(0)} MB, arrayBuffers ${(m.arrayBuffers / 2 ** 20).toFixed(0)} MB)`);
};

async function main(): Promise<void> {
  const file = process.argv[2]!;
  const ctx = Number(arg('ctx', '1024'));
  const prompt = Number(arg('prompt', '256'));
  const tokens = Number(arg('tokens', '8'));
  const chunk = Number(arg('chunk', '512'));
  const maxBytes = arg('max-program-bytes', '');
  const cacheType = arg('cache-type', 'f32');
  if (cacheType !== 'f32' && cacheType !== 'f16') throw new Error(`--cache-type is f32 or f16, not ${cacheType}`);
  show('start');
  const model = await loadModel(file, { target: 'host', ctx, prefillChunk: chunk, cacheType, ...(maxBytes === '' ? {} : { limits: { programBytes: Number(maxBytes) } }) });
  show('loaded');
  if (process.argv.includes('--warm')) {
    await model.warm({ promptTokens: prompt });
    show('warmed');
  }
  const ids = Array.from({ length: prompt }, (_, i) => 1 + (i % 1000));
  const t0 = performance.now();
  let last = t0;
  const steps: number[] = [];
  const it = model.generate({ promptIds: ids, maxTokens: tokens, ignoreEos: true, temperature: 0 });
  for (;;) {
    const n = await it.next();
    const now = performance.now();
    if (n.done === true) {
      const t = n.value.timings;
      console.log(`prefill ${t.prefillMs.toFixed(0)} ms (${t.prefillTokS.toFixed(1)} tok/s), decode ${t.decodeMs.toFixed(0)} ms for ${t.decodeSteps} steps`);
      break;
    }
    steps.push(now - last);
    last = now;
    show(steps.length === 1 ? 'prefill + 1st token' : `token ${steps.length}`);
  }
  // The first token comes with the prefill; the second is the first decode step.
  if (steps.length > 2) {
    const steady = steps.slice(2).sort((a, b) => a - b)[Math.floor((steps.length - 2) / 2)]!;
    console.log(`first decode step ${steps[1]!.toFixed(0)} ms, steady (median) ${steady.toFixed(0)} ms`);
  }
  await model.close();
  show('closed');
}

main().catch((e: unknown) => { console.error(e); process.exit(1); });
