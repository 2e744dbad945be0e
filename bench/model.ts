/**
 * `npm run bench` (second part): pack and verify throughput, in MB/s of GGUF input, on a generated
 * model the size of Qwen3-0.6B (hidden 1024, 28 layers, intermediate 3072, 16 heads, 8 kv heads,
 * head_dim 128, vocab 151936, tied lm_head), streamed to a temp file so memory stays flat. Q4_K
 * exercises the exact repack, Q8_0 the dequantize-and-requantize path. `--layers N` packs a fraction
 * (figures for the full model are then extrapolated by bytes, and labelled so); `--types a,b` picks
 * the source types. Prints the machine it ran on; never part of `npm test`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import type { QuantType } from '../src/model/gguf/ggmlTypes.js';
import { packGguf } from '../src/model/pack/pack.js';
import { verifyPack } from '../src/model/pack/verify.js';
import { QWEN3_0_6B_SHAPE, writeTinyQwen3 } from '../src/model/qwen3/tiny.js';

const FULL = { layers: 28, hidden: 1024, intermediate: 3072, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936 };

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const MB = 1e6;
const secs = (t0: number): number => (performance.now() - t0) / 1000;

/** The weight count of the model with `layers` layers: the embedding is fixed, each layer adds the same. */
function weights(layers: number): number {
  const c = FULL;
  return c.vocab * c.hidden + layers * (c.hidden * c.heads * c.headDim * 2 + c.hidden * c.kvHeads * c.headDim * 2 + 3 * c.hidden * c.intermediate);
}

function main(): void {
  const layers = Number(arg('layers', String(FULL.layers)));
  const types = arg('types', 'Q4_K,Q8_0').split(',') as QuantType[];
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`);
  console.log(`model: Qwen3-0.6B shape (hidden 1024, intermediate 3072, 16/8 heads of 128, vocab 151936, tied), ${layers} of 28 layers${layers === FULL.layers ? '' : ' (a fraction: full-size times below are extrapolated by weight count)'}`);
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-model-'));
  try {
    for (const type of types) {
      const g = join(dir, `${type}.gguf`);
      let t0 = performance.now();
      // The generator the model tests use, streamed to the file: Qwen3-0.6B's shapes, std 0.02, seed 1.
      writeTinyQwen3(g, { ...QWEN3_0_6B_SHAPE, layers, type });
      const gen = secs(t0);
      const size = statSync(g).size;
      t0 = performance.now();
      packGguf(g, join(dir, type));
      const pack = secs(t0);
      t0 = performance.now();
      const report = verifyPack(g, join(dir, type));
      const verify = secs(t0);
      // Throughput is GGUF input: the file's size over the time (lm_head re-reads the tied embedding).
      const src = size;
      const requant = report.tensors.filter((t) => t.method === 'requant');
      const quality = requant.length === 0
        ? `repack: ${report.tensors.filter((t) => t.method === 'repack').reduce((n, t) => n + t.overBound, 0)} weights over the bound`
        : `requant: worst cosine ${Math.min(...requant.map((t) => t.cosine)).toFixed(5)}, worst rel RMS ${Math.max(...requant.map((t) => t.relRms)).toFixed(4)}`;
      console.log(`${type}: GGUF ${(size / MB).toFixed(0)} MB generated in ${gen.toFixed(1)} s; pack ${pack.toFixed(1)} s = ${(src / MB / pack).toFixed(1)} MB/s; verify ${verify.toFixed(1)} s = ${(src / MB / verify).toFixed(1)} MB/s; ${report.ok ? 'verify ok' : 'VERIFY FAILED'}; ${quality}; rss peak ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
      if (layers !== FULL.layers) {
        const full = size * (weights(FULL.layers) / weights(layers));
        console.log(`  EXTRAPOLATED to 28 layers (~${(full / MB).toFixed(0)} MB of ${type} GGUF) at the same MB/s: pack ~${(full / MB / (src / MB / pack)).toFixed(0)} s, verify ~${(full / MB / (src / MB / verify)).toFixed(0)} s`);
      }
      rmSync(g);
      rmSync(join(dir, type), { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
