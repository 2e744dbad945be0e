import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { q4nxCheckCommand, q4nxDetectQ8Command } from '../../../src/cli/q4nx.js';
import type { Io } from '../../../src/cli/output.js';
import { dequantize } from '../../../src/model/gguf/dequant.js';
import { quantizedTensor as ggufTensor, writeGguf } from '../../../src/model/gguf/writer.js';
import { logicalShapeKey } from '../../../src/model/q4nx/chunks.js';
import { encodeTensor, quantizedTensor } from '../../../src/model/q4nx/encode.js';
import { writeQ4nx, type Q4nxTensorInput } from '../../../src/model/q4nx/writer.js';
import { rng } from './reference.js';

function capture(): Io & { lines: string[]; errs: string[] } {
  const lines: string[] = [];
  const errs: string[] = [];
  return { lines, errs, out: (l) => lines.push(l), err: (l) => errs.push(l) };
}

const ROWS = 64;
const COLS = 512;
const smooth = Float64Array.from({ length: ROWS * COLS }, (_, i) => Math.sin(Math.floor(i / COLS) / 9 + (i % COLS) / 41));

describe('q4nx CLI commands', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'q4nx-cli-')); });
  afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

  function model(tensors: readonly Q4nxTensorInput[], metadata: Record<string, string> | null = null, sub = 'm'): string {
    const d = join(dir, sub);
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d);
    writeFileSync(join(d, 'model.q4nx'), writeQ4nx(tensors, metadata));
    return d;
  }

  const good = (): string => model([
    quantizedTensor('model.layers.0.mlp.up_proj.weight', encodeTensor('q4_1', smooth, ROWS, COLS)),
    quantizedTensor('model.layers.0.self_attn.q_proj.weight', encodeTensor('q4k', smooth, ROWS, COLS), true),
    quantizedTensor('lm_head.weight', encodeTensor('q8', smooth, ROWS, COLS, 'b'), true),
    quantizedTensor('model.embed_tokens.weight', encodeTensor('q8', smooth, ROWS, COLS, 'a'), true),
    { name: 'model.norm.weight', dtype: 'BF16', shape: [COLS], data: new Uint8Array(2 * COLS) },
  ], { [logicalShapeKey('model.layers.0.mlp.up_proj.weight')]: `${ROWS},${COLS}` });

  it('check names each chunk kind, as a table and as JSON', () => {
    const d = good();
    const io = capture();
    expect(q4nxCheckCommand(d, {}, io)).to.equal(0);
    expect(io.lines[0]).to.match(/^NAME\s+KIND\s+DTYPE\s+SHAPE\s+TILES\s+GRID$/);
    expect(io.lines.find((l) => l.startsWith('model.layers.0.self_attn.q_proj.weight'))).to.match(/q4k\s+I8\s+\[2, 2, 4736\]\s+4\s+2x2/);
    expect(io.lines.some((l) => /^ok: 5 tensors .*: 1 q4_1, 1 q4k, 2 q8, 1 plain$/.test(l))).to.equal(true);
    const js = capture();
    expect(q4nxCheckCommand(d, { json: true }, js)).to.equal(0);
    const doc = JSON.parse(js.lines[0]!) as { tensors: { name: string; kind: string; grid: number[] | null; logicalShape: number[] | null }[]; counts: Record<string, number> };
    expect(doc.counts).to.deep.equal({ q4_1: 1, q4k: 1, q8: 2, plain: 1 });
    const up = doc.tensors.find((t) => t.name === 'model.layers.0.mlp.up_proj.weight')!;
    expect(up).to.include({ kind: 'q4_1' });
    expect(up.grid).to.deep.equal([2, 2]);
    expect(up.logicalShape).to.deep.equal([ROWS, COLS]);
  });

  it('check refuses an unknown chunk size with exit 1 and a typed error', () => {
    const d = model([{ name: 'w', dtype: 'I8', shape: [2, 5000], data: new Uint8Array(10000) }]);
    const io = capture();
    expect(q4nxCheckCommand(d, { json: true }, io)).to.equal(1);
    expect(JSON.parse(io.lines[0]!)).to.deep.equal({ error: { code: 'Q4nxError', tensor: 'w', reason: 'unknown chunk size 5000 (known: 5120 q4_1, 4736 q4k, 8704 q8)' } });
    const txt = capture();
    expect(q4nxCheckCommand(d, {}, txt)).to.equal(1);
    expect(txt.errs[0]).to.match(/^error \[Q4nxError\]: q4nx tensor "w": unknown chunk size 5000/);
  });

  it('check refuses a tensor shorter than its layout needs', () => {
    const t = quantizedTensor('w', encodeTensor('q4_1', smooth, ROWS, COLS));
    const d = model([t], { [logicalShapeKey('w')]: '96,512' });
    const io = capture();
    expect(q4nxCheckCommand(d, { json: true }, io)).to.equal(1);
    const e = JSON.parse(io.lines[0]!) as { error: { code: string; reason: string } };
    expect(e.error.code).to.equal('Q4nxError');
    expect(e.error.reason).to.match(/shorter than its layout needs/);
  });

  it('check refuses a broken container, and a directory without one is a usage error', () => {
    const d = join(dir, 'broken');
    mkdirSync(d);
    writeFileSync(join(d, 'model.q4nx'), new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0, 123]));
    const io = capture();
    expect(q4nxCheckCommand(d, { json: true }, io)).to.equal(1);
    expect(io.lines[0]).to.include('"code":"Q4nxError"');
    const none = capture();
    expect(q4nxCheckCommand(join(dir, 'nothing'), {}, none)).to.equal(2);
    expect(none.errs[0]).to.match(/UsageError.*no model\.q4nx/);
  });

  it('detect-q8 decides each Q8 tensor from its data', () => {
    const d = good();
    const io = capture();
    expect(q4nxDetectQ8Command(d, { json: true }, io)).to.equal(0);
    const doc = JSON.parse(io.lines[0]!) as { tensors: { name: string; verdict: string; score: number; method: string }[] };
    expect(doc.tensors.map((t) => [t.name, t.verdict, t.method])).to.deep.equal([
      ['lm_head.weight', 'layout-b', 'data'],
      ['model.embed_tokens.weight', 'layout-a', 'data'],
    ]);
    expect(doc.tensors.every((t) => Math.abs(t.score) > 0.9)).to.equal(true);
    const txt = capture();
    expect(q4nxDetectQ8Command(d, {}, txt)).to.equal(0);
    expect(txt.lines.find((l) => l.startsWith('lm_head.weight'))).to.match(/layout-b \(data\)$/);
  });

  it('detect-q8 with a GGUF compares tile (0, 0) with the GGUF tensor', () => {
    const rand = rng(9);
    // Trained-like weights: noise with column magnitudes, quantized Q8_0 in the GGUF (ne[0] = columns).
    const colScale = Array.from({ length: COLS }, () => 0.1 + rand());
    const w = Float32Array.from({ length: ROWS * COLS }, (_, i) => (rand() - 0.5) * colScale[i % COLS]!);
    const gt = ggufTensor('output.weight', 'Q8_0', [COLS, ROWS], w);
    const ggufPath = join(dir, 'model.gguf');
    writeFileSync(ggufPath, writeGguf({ tensors: [gt] }));
    const deq = dequantize('Q8_0', gt.data, ROWS * COLS);
    const d = model([
      quantizedTensor('lm_head.weight', encodeTensor('q8', deq, ROWS, COLS, 'b'), true),
      quantizedTensor('model.layers.1.linear_attn.ssm_out_proj.weight', encodeTensor('q8', deq, ROWS, COLS, 'a'), true),
    ]);
    const io = capture();
    expect(q4nxDetectQ8Command(d, { json: true, gguf: ggufPath }, io)).to.equal(0);
    const doc = JSON.parse(io.lines[0]!) as { tensors: { name: string; verdict: string; method: string; gguf: { tensor: string | null; note?: string; detection: { correlation: { a: number; b: number } } | null } }[] };
    const lm = doc.tensors[0]!;
    expect(lm).to.include({ verdict: 'layout-b', method: 'reference' });
    expect(lm.gguf.tensor).to.equal('output.weight');
    expect(lm.gguf.detection!.correlation.b).to.be.above(0.9998);
    expect(Math.abs(lm.gguf.detection!.correlation.a)).to.be.below(0.1);
    // A tensor the GGUF does not hold falls back to the data's own verdict.
    const other = doc.tensors[1]!;
    expect(other.gguf.tensor).to.equal(null);
    expect(other).to.include({ verdict: 'layout-a', method: 'data' });
  });
});
