import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Q4nxError } from '../../../src/errors/index.js';
import { chunkAt, isQuantized, logicalShapeFromMetadata, logicalShapeKey, quantLayout } from '../../../src/model/q4nx/chunks.js';
import { readQ4nx, readQ4nxHeader, tensorData } from '../../../src/model/q4nx/container.js';
import { decodeTile } from '../../../src/model/q4nx/decode.js';
import { encodeTensor, quantizedTensor } from '../../../src/model/q4nx/encode.js';
import { writeQ4nx } from '../../../src/model/q4nx/writer.js';
import { rng } from './reference.js';

function seedFile(): Uint8Array {
  const m = Float64Array.from({ length: 40 * 300 }, (_, i) => Math.sin(i / 17));
  return writeQ4nx([
    quantizedTensor('model.layers.0.mlp.up_proj.weight', encodeTensor('q4_1', m, 40, 300)),
    quantizedTensor('lm_head.weight', encodeTensor('q8', m.subarray(0, 32 * 256), 32, 256, 'b'), true),
    quantizedTensor('model.layers.0.self_attn.q_proj.weight', encodeTensor('q4k', m.subarray(0, 32 * 256), 32, 256)),
    { name: 'model.norm.weight', dtype: 'BF16', shape: [64], data: new Uint8Array(128).fill(0x3f) },
  ], { format: 'q4nx', [logicalShapeKey('model.layers.0.mlp.up_proj.weight')]: '40,300' });
}

const HOSTILE_VALUES: unknown[] = [-1, 0, 1, 1.5, 2 ** 53, 2 ** 64, 1e300, 'x', null, [], {}, [1, 2, 3], 5120, 8704, 4736, '40,300', '9999999,1'];

/** One mutation of a valid file, chosen by `rand`. */
function mutate(good: Uint8Array, rand: () => number): Uint8Array {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const n = Number(new DataView(good.buffer, good.byteOffset).getBigUint64(0, true));
  const b = good.slice();
  switch (Math.floor(rand() * 7)) {
    case 0: { // flip bytes inside the JSON header
      for (let i = 0, m = 1 + Math.floor(rand() * 8); i < m; i++) b[8 + Math.floor(rand() * n)] = Math.floor(rand() * 256);
      return b;
    }
    case 1: { // flip bytes anywhere, the length prefix included
      for (let i = 0, m = 1 + Math.floor(rand() * 4); i < m; i++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      return b;
    }
    case 2: return b.subarray(0, Math.floor(rand() * b.length));
    case 3: {
      const more = new Uint8Array(b.length + 1 + Math.floor(rand() * 64));
      more.set(b);
      for (let i = b.length; i < more.length; i++) more[i] = Math.floor(rand() * 256);
      return more;
    }
    case 4: {
      const v = pick([0n, 1n, BigInt(n - 1), BigInt(n + 1), BigInt(b.length), 100_000_000n, 100_000_001n, 2n ** 63n, BigInt(Math.floor(rand() * 2 ** 32))]);
      new DataView(b.buffer).setBigUint64(0, v, true);
      return b;
    }
    default: { // rewrite one field of the JSON with a hostile value, keeping the rest valid
      const json = JSON.parse(new TextDecoder().decode(good.subarray(8, 8 + n))) as Record<string, Record<string, unknown>>;
      const names = Object.keys(json);
      const t = json[pick(names)]!;
      const keys = Object.keys(t);
      const key = pick(keys);
      const v = t[key];
      if (Array.isArray(v) && rand() < 0.7) {
        const arr = [...(v as unknown[])];
        arr[Math.floor(rand() * (arr.length + 1))] = pick(HOSTILE_VALUES);
        t[key] = arr;
      } else if (rand() < 0.2) {
        // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the fuzz drops a key it picked
        delete t[key];
      } else {
        t[key] = pick([...HOSTILE_VALUES, 'I8', 'BF16', 'F4', 'U8']);
      }
      const h = new TextEncoder().encode(JSON.stringify(json));
      const out = new Uint8Array(8 + h.length + good.length - 8 - n);
      new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
      out.set(h, 8);
      out.set(good.subarray(8 + n), 8 + h.length);
      return out;
    }
  }
}

/** Everything a reader of the file would do: parse, lay out each quantized tensor, decode its first tile. */
function consume(bytes: Uint8Array): void {
  const f = readQ4nx(bytes);
  for (const t of f.header.tensors) {
    if (!isQuantized(t)) continue;
    const layout = quantLayout(t, logicalShapeFromMetadata(f.header.metadata, t.name));
    decodeTile(layout.kind, chunkAt(tensorData(f, t.name), layout, 0), 'a');
  }
}

/**
 * What the fuzz loop's work takes on the undamaged file in this process now, scaled to `iterations`, and
 * its slowest single file: each of `sample` iterations consumes the good file, and every tenth also
 * writes it and reads its header back, as the loop does with a mutant.
 */
function normalMs(good: Uint8Array, dir: string, iterations: number, sample = 300): { total: number; slowest: number } {
  const t0 = performance.now();
  let slowest = 0;
  for (let i = 0; i < sample; i++) {
    const s = performance.now();
    consume(good);
    if (i % 10 === 0) { const p = join(dir, 'model.q4nx'); writeFileSync(p, good); readQ4nxHeader(p); }
    slowest = Math.max(slowest, performance.now() - s);
  }
  return { total: ((performance.now() - t0) * iterations) / sample, slowest };
}

describe('q4nx fuzz: mutated containers end in a valid parse or a Q4nxError', () => {
  it('3000 mutations, bounded in time and memory', function () {
    // Synchronous: mocha's timeout could only fail it after the fact; the bounds below are what count.
    this.timeout(600_000);
    const good = seedFile();
    consume(good);
    const rand = rng(20250101);
    const dir = mkdtempSync(join(tmpdir(), 'q4nx-fuzz-'));
    // The time bounds catch a mutant the reader loops or allocates on: 20 s in all and 1 s for one file on
    // an idle machine, or, on a loaded one, 10 times what the same work on the good file takes here now.
    const normal = normalMs(good, dir, 3000);
    const totalBoundMs = Math.max(20_000, 10 * normal.total);
    const fileBoundMs = Math.max(1_000, 10 * normal.slowest);
    const heap0 = process.memoryUsage().heapUsed;
    const t0 = Date.now();
    let ok = 0;
    let refused = 0;
    let slowest = 0;
    try {
      for (let i = 0; i < 3000; i++) {
        const bytes = mutate(good, rand);
        const s = Date.now();
        for (const run of [() => consume(bytes), ...(i % 10 === 0 ? [() => { const p = join(dir, 'model.q4nx'); writeFileSync(p, bytes); readQ4nxHeader(p); }] : [])]) {
          try {
            run();
            ok++;
          } catch (e) {
            if (!(e instanceof Q4nxError)) expect.fail(`mutation ${i} threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
            expect(e.code).to.equal('Q4nxError');
            refused++;
          }
        }
        slowest = Math.max(slowest, Date.now() - s);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const elapsed = Date.now() - t0;
    expect(elapsed, `total time (bound ${Math.round(totalBoundMs)} ms)`).to.be.below(totalBoundMs);
    expect(slowest, `slowest single file (bound ${Math.round(fileBoundMs)} ms)`).to.be.below(fileBoundMs);
    expect(process.memoryUsage().heapUsed - heap0, 'heap growth').to.be.below(256 * 1024 * 1024);
    // Neither outcome may be empty, or the fuzzer is not reaching both sides of the reader.
    expect(ok).to.be.greaterThan(50);
    expect(refused).to.be.greaterThan(1000);
  });
});
