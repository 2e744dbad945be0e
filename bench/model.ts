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
import { gv, type GgufValue } from '../src/model/gguf/types.js';
import { writeGgufStream, type StreamGgufTensor } from '../src/model/pack/ggufStream.js';
import { packGguf } from '../src/model/pack/pack.js';
import { verifyPack } from '../src/model/pack/verify.js';
import { mulberry32 } from '../src/numerics/random.js';

const FULL = { layers: 28, hidden: 1024, intermediate: 3072, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936 };

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

function model(layers: number, type: QuantType): { metadata: Map<string, GgufValue>; tensors: StreamGgufTensor[] } {
  const c = { ...FULL, layers };
  const rand = mulberry32(1);
  // Uniform with std 0.02, in pieces of 64 rows: whole blocks for every type, a few MB at a time.
  const matrix = (name: string, cols: number, rows: number): StreamGgufTensor => ({
    name, dims: [cols, rows], type,
    fill: (emit) => {
      const a = 0.02 * Math.sqrt(3);
      for (let r = 0; r < rows; r += 64) {
        const v = new Float32Array(Math.min(64, rows - r) * cols);
        for (let i = 0; i < v.length; i++) v[i] = (rand() * 2 - 1) * a;
        emit(v);
      }
    },
  });
  const norm = (name: string, n: number): StreamGgufTensor => ({
    name, dims: [n], type: 'F32', fill: (emit) => emit(Float32Array.from({ length: n }, () => 1 + (rand() * 2 - 1) * 0.1)),
  });
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const tensors: StreamGgufTensor[] = [matrix('token_embd.weight', c.hidden, c.vocab)];
  for (let l = 0; l < c.layers; l++) {
    const p = `blk.${l}.`;
    tensors.push(
      norm(`${p}attn_norm.weight`, c.hidden), matrix(`${p}attn_q.weight`, c.hidden, q), matrix(`${p}attn_k.weight`, c.hidden, kv),
      matrix(`${p}attn_v.weight`, c.hidden, kv), matrix(`${p}attn_output.weight`, q, c.hidden),
      norm(`${p}attn_q_norm.weight`, c.headDim), norm(`${p}attn_k_norm.weight`, c.headDim), norm(`${p}ffn_norm.weight`, c.hidden),
      matrix(`${p}ffn_gate.weight`, c.hidden, c.intermediate), matrix(`${p}ffn_up.weight`, c.hidden, c.intermediate),
      matrix(`${p}ffn_down.weight`, c.intermediate, c.hidden),
    );
  }
  tensors.push(norm('output_norm.weight', c.hidden));
  const metadata = new Map<string, GgufValue>([
    ['general.architecture', gv.str('qwen3')], ['general.name', gv.str(`bench-qwen3-0.6b-${type}`)],
    ['qwen3.block_count', gv.u32(c.layers)], ['qwen3.context_length', gv.u32(40960)],
    ['qwen3.embedding_length', gv.u32(c.hidden)], ['qwen3.feed_forward_length', gv.u32(c.intermediate)],
    ['qwen3.attention.head_count', gv.u32(c.heads)], ['qwen3.attention.head_count_kv', gv.u32(c.kvHeads)],
    ['qwen3.attention.key_length', gv.u32(c.headDim)], ['qwen3.attention.value_length', gv.u32(c.headDim)],
    ['qwen3.rope.freq_base', gv.f32(1_000_000)], ['qwen3.attention.layer_norm_rms_epsilon', gv.f32(1e-6)],
    ['tokenizer.ggml.eos_token_id', gv.u32(151645)],
  ]);
  return { metadata, tensors };
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
      const { metadata, tensors } = model(layers, type);
      let t0 = performance.now();
      writeGgufStream(g, metadata, tensors);
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
