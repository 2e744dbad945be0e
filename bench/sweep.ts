/**
 * `npm run bench` (after xdna2.ts): the exhaustive contract sweep's throughput, printed with the machine
 * it came from; never part of `npm test`, and nothing here asserts on time. The goal (issue 16) is all
 * 2^32 inputs of one unary op in under 60 s on 2 cores.
 *
 * 1. Full sweeps, every f32 input, of the ops in NPU_OFFLOAD_BENCH_SWEEP (a comma-separated list, or
 *    `all` for the seven unary ops; default `exp,neg`): seconds, inputs per second, pass or fail.
 * 2. The portable lane routines (what a CPU without AVX-512 runs) against the AVX-512 ones, on exp over
 *    the 2^28 patterns of [2^-16, 2^16); and the process's peak resident memory.
 *
 * Without the sweep's addon (npm run build:native) it says so and measures nothing.
 */
import { availableParallelism, cpus, totalmem } from 'node:os';
import { exhaustiveOps, runExhaustive } from '../src/contracts/exhaustive.js';
import { loadSweepAddon } from '../src/contracts/nativeSweep.js';
import { NoDevice } from '../src/errors/index.js';

const UNARY = ['neg', 'recip', 'exp', 'log', 'tanh', 'erf', 'sqrt'];

function ops(): string[] {
  const v = process.env.NPU_OFFLOAD_BENCH_SWEEP ?? 'exp,neg';
  const list = v === 'all' ? UNARY : v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const known = exhaustiveOps('xdna2');
  for (const op of list) if (!known.includes(op) || !UNARY.includes(op)) throw new Error(`NPU_OFFLOAD_BENCH_SWEEP: ${op} is not a unary xdna2 op (${UNARY.join(', ')})`);
  return list;
}

const pattern = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0]!;

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  let isa: string;
  try {
    isa = loadSweepAddon().isa;
  } catch (e) {
    if (!(e instanceof NoDevice)) throw e;
    console.log(`exhaustive sweep: skipped (${e.message})`);
    return;
  }
  const threads = Math.min(4, availableParallelism());
  console.log(`exhaustive sweep (contracts --exhaustive), ${threads} threads on ${availableParallelism()} cores, ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GB, lane routines: ${isa}`);
  for (const op of ops()) {
    const r = await runExhaustive({ target: 'xdna2', op, threads });
    console.log(`  ${op.padEnd(6)} all 2^32 inputs in ${(r.ms / 1000).toFixed(1)} s: ${(r.inputsPerSecond / 1e6).toFixed(1)} M inputs/s, ${(100 * r.share).toFixed(1)}% in the domain, ${r.pass ? 'pass' : `FAIL (${r.failures} failures)`}`);
  }
  const range = { from: pattern(2 ** -16), to: pattern(2 ** 16) };
  for (const generic of isa === 'avx512' ? [false, true] : [true]) {
    const r = await runExhaustive({ target: 'xdna2', op: 'exp', threads, range, generic });
    console.log(`  exp over [2^-16, 2^16) (2^28 inputs), ${generic ? 'portable' : 'AVX-512'} lane routines: ${(r.inputsPerSecond / 1e6).toFixed(1)} M inputs/s`);
  }
  // Memory stays that of a few chunks' tallies however many inputs are swept.
  console.log(`  peak resident memory of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

await main();
