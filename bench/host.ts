/**
 * `npm run bench`, the `host` target's kernels: this machine's memory read bandwidth (a native
 * streaming read of a buffer several times the last-level cache), decode-shaped matmul throughput
 * (one activation row against Qwen3-0.6B-sized weights) for q4_0, q8_0, q4_k and q4nx_q41 in GB/s of
 * weights read, with 1 and 2 threads, and its ratio to the bandwidth; and prefill-shaped matmul
 * (T = 256) in GFLOP/s; q4_0 and q8_0 also in the q8-activations class (matmul_wq). The decode working set also exceeds the caches, so every byte comes from
 * memory as in a real model step. Goal: decode at 60% of the bandwidth with 2 threads.
 */
import { randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, freemem, loadavg } from 'node:os';
import { hostWeightBytes, type HostWeightType, type KernelCall } from '../src/compiler/host/kernelList.js';
import { loadHostKernels, type HostKernels, type HostWeight } from '../src/devices/host/native.js';

const GIB = 2 ** 30;
const TYPES = ['q4_0', 'q8_0', 'q4_k', 'q4nx_q41'] as const satisfies readonly HostWeightType[];
/** The types also measured in the q8-activations class (matmul_wq), where it has its fast unpack. */
const Q8_TYPES: readonly HostWeightType[] = ['q4_0', 'q8_0'];
/** One Qwen3-0.6B layer's projections as [K, N]: q, k, v, o, gate, up, down. */
const LAYER: readonly [number, number][] = [[1024, 2048], [1024, 1024], [1024, 1024], [2048, 1024], [1024, 3072], [1024, 3072], [3072, 1024]];
const LM_HEAD: [number, number] = [1024, 151936];

/** The last-level cache in bytes, from sysfs (0 when unknown). */
function lastLevelCache(): number {
  for (const i of [3, 2]) {
    try {
      const s = readFileSync(`/sys/devices/system/cpu/cpu0/cache/index${i}/size`, 'utf8').trim();
      const m = /^(\d+)([KMG]?)$/.exec(s);
      if (m) return Number(m[1]) * { '': 1, K: 2 ** 10, M: 2 ** 20, G: GIB }[m[2] as '' | 'K' | 'M' | 'G'];
    } catch { /* not Linux, or no such level */ }
  }
  return 0;
}

/** Random weight bytes whose f16 scales are moderate (no infinities or NaNs to slow or skew a run). */
function weightBytes(type: HostWeightType, k: number, n: number): Uint8Array {
  const b = randomFillSync(new Uint8Array(hostWeightBytes(type, k, n)));
  const scale = (o: number) => { b[o] = 0; b[o + 1] = 0x20; }; // f16 2^-7; as bf16 bits it is tiny but finite
  const block = { q4_0: 18, q8_0: 34, q4_k: 144, q4nx_q41: 5120 }[type as (typeof TYPES)[number]];
  for (let o = 0; o < b.length; o += block) {
    if (type === 'q4nx_q41') for (let j = 0; j < 512; j++) { b[o + 2 * j] = 0; b[o + 2 * j + 1] = 0x3c; }
    else { scale(o); if (type === 'q4_k') scale(o + 2); }
  }
  return b;
}

const REPS = 5;

/**
 * The best of REPS runs of f with 1 and with 2 threads, interleaved so both see the same machine: on
 * shared cores the fastest run is the one least disturbed.
 */
function bestOf(h: HostKernels, f: () => number): Record<1 | 2, number> {
  const out = { 1: Infinity, 2: Infinity };
  for (let r = 0; r < REPS; r++) {
    for (const t of [1, 2] as const) {
      h.setThreads(t);
      out[t] = Math.min(out[t], f());
    }
  }
  return out;
}

interface Stack { weights: HostWeight[]; calls: KernelCall[]; bytes: number; arena: Uint8Array }

/** Layers of decode matmuls over distinct weights totalling at least `target` bytes. */
function decodeStack(h: HostKernels, type: HostWeightType, target: number, op: 'matmul_w' | 'matmul_wq' = 'matmul_w'): Stack {
  const weights: HostWeight[] = [];
  const calls: KernelCall[] = [];
  let bytes = 0;
  const arena = new Uint8Array(64 * 1024);
  new Float32Array(arena.buffer, 0, 4096).fill(0.5);
  while (bytes < target) {
    for (const [k, n] of LAYER) {
      weights.push(h.weightFromBytes(weightBytes(type, k, n), type, k, n));
      calls.push({ op, x: 0, y: 16384, T: 1, w: weights.length - 1 });
      bytes += hostWeightBytes(type, k, n);
    }
  }
  return { weights, calls, bytes, arena };
}

function seconds(f: () => void): number {
  const t0 = performance.now();
  f();
  return (performance.now() - t0) / 1000;
}

function main(): void {
  const h = loadHostKernels();
  const llc = lastLevelCache();
  const size = Math.min(Math.max(GIB, 4 * llc), Math.floor(freemem() / 4 / GIB) * GIB || GIB);
  const info = h.info();
  console.log(`host kernels on ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores, last-level cache ${(llc / 2 ** 20).toFixed(0)} MiB), SIMD ${info.isa}`);
  console.log(`  load average at start: ${loadavg().map((l) => l.toFixed(1)).join(', ')} (other processes share these cores; each figure is the best of ${REPS} runs)`);
  const buf = randomFillSync(new Uint8Array(size));
  h.streamRead(buf, 1);
  const bwSeconds = bestOf(h, () => h.streamRead(buf, 1));
  const bw = { 1: size / bwSeconds[1] / 1e9, 2: size / bwSeconds[2] / 1e9 };
  for (const t of [1, 2] as const) {
    console.log(`  memory read bandwidth, ${t} thread${t > 1 ? 's' : ''}: ${bw[t].toFixed(1)} GB/s (streaming ${(size / GIB).toFixed(1)} GiB)`);
  }
  console.log(`  decode matmul (x [1, K] by Qwen3-0.6B projections, ${(size / GIB).toFixed(1)} GiB of distinct weights per pass; lm_head [${LM_HEAD.join(', ')}] alone):`);
  for (const type of TYPES) {
    const stack = decodeStack(h, type, size);
    const list = h.encode(stack.calls);
    const [hk, hn] = LM_HEAD;
    const head = h.weightFromBytes(weightBytes(type, hk, hn), type, hk, hn);
    const headArena = new Uint8Array(4 * (hk + hn) + 64);
    const headList = h.encode([{ op: 'matmul_w', x: 0, y: 4 * hk, T: 1, w: 0 }]);
    h.run(stack.arena, list, stack.weights);
    const s = bestOf(h, () => seconds(() => h.run(stack.arena, list, stack.weights)));
    const hs = bestOf(h, () => seconds(() => h.run(headArena, headList, [head])));
    const line = ([1, 2] as const).map((t) => {
      const gbs = stack.bytes / s[t] / 1e9;
      const hgbs = hostWeightBytes(type, hk, hn) / hs[t] / 1e9;
      return `${t}T ${gbs.toFixed(1)} GB/s = ${(100 * gbs / bw[t]).toFixed(0)}% of bandwidth (lm_head ${hgbs.toFixed(1)} GB/s)`;
    });
    console.log(`    ${type.padEnd(9)} ${line.join('; ')}`);
    for (const w of [...stack.weights, head]) w.close();
    // The same stack in the q8-activations class (matmul_wq).
    if (!Q8_TYPES.includes(type)) continue;
    const q8 = decodeStack(h, type, size, 'matmul_wq');
    const q8List = h.encode(q8.calls);
    h.run(q8.arena, q8List, q8.weights);
    const qs = bestOf(h, () => seconds(() => h.run(q8.arena, q8List, q8.weights)));
    console.log(`    ${`${type} q8`.padEnd(9)} ${([1, 2] as const).map((t) => `${t}T ${(q8.bytes / qs[t] / 1e9).toFixed(1)} GB/s = ${(100 * q8.bytes / qs[t] / 1e9 / bw[t]).toFixed(0)}% of bandwidth`).join('; ')}`);
    for (const w of q8.weights) w.close();
  }
  const [T, K, N] = [256, 1024, 3072];
  console.log(`  prefill matmul (x [${T}, ${K}] by [${K}, ${N}]):`);
  const arena = new Uint8Array(4 * T * (K + N) + 64);
  const xs = new Float32Array(arena.buffer, 0, T * K);
  for (let i = 0; i < xs.length; i++) xs[i] = Math.sin(i);
  for (const op of ['matmul_w', 'matmul_wq'] as const) {
    const pre = h.encode([{ op, x: 0, y: 4 * T * K, T, w: 0 }]);
    for (const type of op === 'matmul_w' ? TYPES : TYPES.filter((t) => Q8_TYPES.includes(t))) {
      const w = h.weightFromBytes(weightBytes(type, K, N), type, K, N);
      h.run(arena, pre, [w]);
      const s = bestOf(h, () => seconds(() => h.run(arena, pre, [w])));
      console.log(`    ${(op === 'matmul_w' ? type : `${type} q8`).padEnd(12)} ${([1, 2] as const).map((t) => `${t}T ${(2 * T * K * N / s[t] / 1e9).toFixed(1)} GFLOP/s`).join('; ')}`);
      w.close();
    }
  }
  console.log(`  load average at end: ${loadavg().map((l) => l.toFixed(1)).join(', ')}`);
  h.setThreads(cpus().length);
}

main();
