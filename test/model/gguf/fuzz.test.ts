/**
 * Mutation fuzz: thousands of damaged GGUF files (byte flips, truncations, inserted and removed bytes,
 * huge values written over count and length fields), each of which must end in a valid parse or a
 * GgufError, never another exception, a hang or a huge allocation; every tensor of a file that parses
 * must dequantize or refuse with a GgufError too.
 */
import { expect } from 'chai';
import { GgufError } from '../../../src/errors/index.js';
import { QUANT_TYPES } from '../../../src/model/gguf/ggmlTypes.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { gv } from '../../../src/model/gguf/types.js';
import { quantizedTensor, writeGguf } from '../../../src/model/gguf/writer.js';
import { tinyQwen3Gguf } from '../../../src/model/qwen3/tiny.js';
import { EVERY_TYPE, seeded } from './helpers.js';

// Overridable for a longer soak: GGUF_FUZZ_ITERATIONS=100000 GGUF_FUZZ_SEED=7 npx mocha ...
const ITERATIONS = Number(process.env.GGUF_FUZZ_ITERATIONS ?? 3000);
const SEED = Number(process.env.GGUF_FUZZ_SEED ?? 20240601);

const HUGE = [2n ** 64n - 1n, 2n ** 63n, 2n ** 63n - 1n, 2n ** 62n, 2n ** 53n, 2n ** 32n, 2n ** 32n - 1n, 2n ** 31n, 65536n, 1n, 0n];

function bases(): Uint8Array[] {
  const rand = seeded(11);
  const small = writeGguf({
    metadata: new Map([...EVERY_TYPE, ['general.alignment', gv.u32(32)]]),
    tensors: QUANT_TYPES.map((t) => quantizedTensor(`t.${t}`, t, [256], Float32Array.from({ length: 256 }, () => rand() - 0.5))),
  });
  // A model-shaped header: real tensor names and shapes, a small vocabulary.
  const model = tinyQwen3Gguf({ type: 'Q4_K', layers: 1, hidden: 256, intermediate: 256, vocab: 8, heads: 4, kvHeads: 4, headDim: 64 });
  return [small, model];
}

function headerEnd(b: Uint8Array): number {
  return readGguf(b).dataOffset;
}

/** One random mutation of `b`; mostly aimed at the header, where the parser's decisions are. */
function mutate(b: Uint8Array, hdr: number, rand: () => number): Uint8Array {
  const pos = (): number => Math.floor(rand() * (rand() < 0.85 ? hdr : b.length));
  const kind = Math.floor(rand() * 6);
  const out = Uint8Array.from(b);
  switch (kind) {
    case 0: { // flip 1 to 4 bytes
      const n = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) { const p = pos(); out[p] = out[p]! ^ (1 << Math.floor(rand() * 8)); }
      return out;
    }
    case 1: return b.slice(0, pos()); // truncate
    case 2: { // insert bytes
      const at = pos();
      const ins = Uint8Array.from({ length: 1 + Math.floor(rand() * 16) }, () => Math.floor(rand() * 256));
      const r = new Uint8Array(b.length + ins.length);
      r.set(b.subarray(0, at)); r.set(ins, at); r.set(b.subarray(at), at + ins.length);
      return r;
    }
    case 3: { // remove bytes
      const at = pos();
      const end = Math.min(b.length, at + 1 + Math.floor(rand() * 16));
      const r = new Uint8Array(b.length - (end - at));
      r.set(b.subarray(0, at)); r.set(b.subarray(end), at);
      return r;
    }
    case 4: { // a huge u64 over a count field or anywhere in the header
      const at = rand() < 0.3 ? [8, 16][Math.floor(rand() * 2)]! : pos();
      const v = HUGE[Math.floor(rand() * HUGE.length)]!;
      const dv = new DataView(out.buffer);
      if (at + 8 <= out.length) dv.setBigUint64(at, v, true);
      return out;
    }
    default: { // a u32 over a type or n_dims field: small values hit real types
      const at = pos();
      const v = rand() < 0.7 ? Math.floor(rand() * 48) : Math.floor(rand() * 2 ** 32);
      if (at + 4 <= out.length) new DataView(out.buffer).setUint32(at, v, true);
      return out;
    }
  }
}

/**
 * What the fuzz loop's work takes on undamaged files in this process now, scaled to `iterations`: each of
 * `sample` iterations copies a base file, parses it and decodes its first tensors, as the loop does with
 * a mutant. A mutant that parses does no more than this, one that is refused does less.
 */
function normalMs(files: readonly Uint8Array[], iterations: number, sample = 300): number {
  const t0 = performance.now();
  for (let i = 0; i < sample; i++) {
    const f = readGguf(Uint8Array.from(files[i % files.length]!));
    for (const t of f.tensors.slice(0, 12)) f.tensorFloats(t);
  }
  return ((performance.now() - t0) * iterations) / sample;
}

describe('gguf fuzz', function () {
  // Synchronous: mocha's timeout could only fail it after the fact; the bounds below are what count.
  this.timeout(600_000);

  it(`${ITERATIONS} mutated files each parse or refuse with a GgufError, in bounded time and memory`, () => {
    const rand = seeded(SEED);
    const files = bases();
    const ends = files.map(headerEnd);
    // The time bound catches a mutant the parser loops or allocates on: 20 s for 3000 on an idle machine,
    // or, on a loaded one, 10 times what the same work on undamaged files takes here now.
    const boundMs = Math.max(20_000 * Math.max(1, ITERATIONS / 3000), 10 * normalMs(files, ITERATIONS));
    const rss0 = process.memoryUsage().rss;
    const t0 = Date.now();
    let parsed = 0;
    let refused = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const which = i % files.length;
      let m = mutate(files[which]!, ends[which]!, rand);
      if (rand() < 0.2) m = mutate(m, Math.min(ends[which]!, m.length), rand);
      try {
        const f = readGguf(m);
        parsed++;
        // Decode a few tensors: a mutated type id must still be decoded or refused, never crash.
        for (const t of f.tensors.slice(0, 12)) {
          try { f.tensorFloats(t); } catch (e) { if (!(e instanceof GgufError)) throw e; }
        }
      } catch (e) {
        if (!(e instanceof GgufError)) {
          throw new Error(`iteration ${i}: ${e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)}`, { cause: e });
        }
        refused++;
      }
    }
    const ms = Date.now() - t0;
    const grown = process.memoryUsage().rss - rss0;
    expect(parsed + refused).to.equal(ITERATIONS);
    // Both outcomes must occur, or the fuzz is not reaching the parser's decisions.
    expect(refused).to.be.above(ITERATIONS / 4);
    expect(parsed).to.be.above(ITERATIONS / 50);
    if (process.env.GGUF_FUZZ_ITERATIONS) console.log(`fuzz: ${parsed} parsed, ${refused} refused in ${ms} ms, rss +${Math.round(grown / 2 ** 20)} MB`);
    expect(ms, `bound ${Math.round(boundMs)} ms`).to.be.below(boundMs);
    expect(grown).to.be.below(500 * 2 ** 20);
  });
});
