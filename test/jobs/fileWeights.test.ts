import { expect } from 'chai';
import { appendFileSync, openSync, readFileSync, statSync, utimesSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import type { JobSpec } from '../../src/jobs/engine.js';
import { quantTensor, tensor } from '../../src/ir/tensor.js';
import { openGguf } from '../../src/model/gguf/reader.js';
import { quantizedTensor, writeGguf } from '../../src/model/gguf/writer.js';
import { program } from '../../src/ops/builder.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { refDequant } from '../numerics/quantRef.js';
import { rejectsWith, tempDir } from './helpers.js';

const VOCAB = 6;
const HIDDEN = 256;
const OUT = 5;

/** ids -> embedding rows (q8_0) -> times a norm (f32) -> projection (q4_k): three GGUF tensors bound as weights. */
function model() {
  const p = program('tiny');
  const ids = p.activation('ids', 'i32', [3]);
  const embd = p.weight('embd', 'q8_0', [VOCAB, HIDDEN]);
  const norm = p.weight('norm', 'f32', [HIDDEN]);
  const proj = p.weight('proj', 'q4_k', [OUT, HIDDEN]);
  const rows = p.gather(embd, ids, 0);
  const scaled = p.mul(rows, p.broadcast(norm, [3, HIDDEN], [1]));
  p.results(p.named('logits').matmul(scaled, proj));
  return p.build();
}

function ggufBytes(seed: number): Uint8Array {
  const rand = mulberry32(seed);
  const values = (n: number) => Array.from({ length: n }, () => rand() * 2 - 1);
  return writeGguf({
    metadata: { 'general.architecture': { type: 'string', value: 'tiny' } },
    tensors: [
      // ne[0] first: a GGUF tensor of ne = [K, N] is the weight [N, K].
      quantizedTensor('token_embd.weight', 'Q8_0', [HIDDEN, VOCAB], values(HIDDEN * VOCAB)),
      quantizedTensor('output_norm.weight', 'F32', [HIDDEN], values(HIDDEN)),
      quantizedTensor('output.weight', 'Q4_K', [HIDDEN, OUT], values(HIDDEN * OUT)),
    ],
  });
}

const NAMES = { embd: 'token_embd.weight', norm: 'output_norm.weight', proj: 'output.weight' } as const;

/** The weights as ranges of the GGUF, computed as docs/MODELS.md says: offset, length, dims reversed. */
function bound(path: string): Record<string, unknown> {
  const f = openGguf(path);
  try {
    const out: Record<string, unknown> = {};
    for (const [arg, name] of Object.entries(NAMES)) {
      const t = f.tensor(name)!;
      out[arg] = { dtype: t.typeName.toLowerCase(), shape: [...t.dims].reverse(), file: path, offset: f.dataOffset + t.offset, length: t.byteSize };
    }
    return out;
  } finally {
    f.close();
  }
}

/** The same weights given inline, from the file's bytes. */
function inline(path: string) {
  const bytes = readFileSync(path);
  const w = bound(path) as Record<string, { offset: number; length: number }>;
  const at = (k: string) => new Uint8Array(bytes.subarray(w[k]!.offset, w[k]!.offset + w[k]!.length));
  return {
    embd: quantTensor('q8_0', [VOCAB, HIDDEN], at('embd')),
    norm: tensor('f32', [HIDDEN], Array.from(new Float32Array(at('norm').slice().buffer))),
    proj: quantTensor('q4_k', [OUT, HIDDEN], at('proj')),
  };
}

const IDS = { dtype: 'i32', shape: [3], data: [4, 0, 4] };

describe('engine: weights bound from a file on the CPU target', function () {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  let gguf: string;
  beforeEach(() => {
    tmp = tempDir('npuo-fw-engine-');
    engine = createEngine({ cacheDir: join(tmp.dir, 'cache') });
    gguf = join(tmp.dir, 'tiny.gguf');
    writeFileSync(gguf, ggufBytes(1));
  });
  afterEach(async () => { await engine.close(); tmp.remove(); });

  async function run(spec: Partial<JobSpec>) {
    const job = engine.submit({ program: model(), target: 'cpu', inputs: { ids: IDS, ...bound(gguf) }, ...spec });
    let fileWeights: unknown;
    job.on('loaded', (e) => { fileWeights = e.fileWeights; });
    const r = await job.result;
    return { logits: Array.from(r.results['logits']!.data), fileWeights, r };
  }

  it('gives the result of the same weights inline, and of the oracle over the independently dequantized tensors', async () => {
    const fromFile = await run({ verify: true });
    expect(fromFile.r.verification?.pass).to.equal(true);
    const given = await run({ inputs: { ids: IDS, ...inline(gguf) } });
    expect(fromFile.logits).to.deep.equal(given.logits);
    // The oracle's meaning, computed here: exact rows rounded to f32, times the norm, then f64 dot products.
    const w = bound(gguf) as Record<string, { offset: number; length: number }>;
    const bytes = readFileSync(gguf);
    const slice = (k: string) => bytes.subarray(w[k]!.offset, w[k]!.offset + w[k]!.length);
    const embd = refDequant('q8_0', [VOCAB, HIDDEN], slice('embd'));
    const proj = refDequant('q4_k', [OUT, HIDDEN], slice('proj'));
    const norm = new Float32Array(new Uint8Array(slice('norm')).buffer);
    const want: number[] = [];
    for (const id of IDS.data) {
      for (let j = 0; j < OUT; j++) {
        let acc = -0;
        for (let k = 0; k < HIDDEN; k++) acc += Math.fround(Math.fround(embd[id * HIDDEN + k]!) * norm[k]!) * proj[j * HIDDEN + k]!;
        want.push(Math.fround(acc));
      }
    }
    expect(fromFile.logits).to.deep.equal(want);
  });

  it('reads an unchanged file once: a later job finds its weights resident on the device', async () => {
    const first = await run({});
    expect(first.fileWeights).to.deep.equal({ reused: 0, bound: 3 });
    const second = await run({});
    expect(second.fileWeights).to.deep.equal({ reused: 3, bound: 0 });
    expect(second.logits).to.deep.equal(first.logits);
    expect(second.r.cacheHit).to.equal(true);
  });

  it('reads the file again when its mtime, its contents or its size changed', async () => {
    const first = await run({});
    const st = statSync(gguf);
    utimesSync(gguf, st.atime, new Date(st.mtimeMs + 10_000));
    const touched = await run({});
    expect(touched.fileWeights).to.deep.equal({ reused: 0, bound: 3 });
    expect(touched.logits).to.deep.equal(first.logits);

    // Other weights of the same size in place, the mtime put back: the sampled digest tells.
    const before = statSync(gguf);
    const other = ggufBytes(2);
    expect(other.length).to.equal(before.size);
    const fd = openSync(gguf, 'r+');
    writeSync(fd, other, 0, other.length, 0);
    closeSync(fd);
    utimesSync(gguf, before.atime, before.mtime);
    const rewritten = await run({});
    expect(rewritten.fileWeights).to.deep.equal({ reused: 0, bound: 3 });
    expect(rewritten.logits).to.not.deep.equal(first.logits);
    expect(rewritten.logits).to.deep.equal((await run({ inputs: { ids: IDS, ...inline(gguf) } })).logits);

    appendFileSync(gguf, Buffer.alloc(64));
    expect((await run({})).fileWeights).to.deep.equal({ reused: 0, bound: 3 });
    expect((await run({})).fileWeights).to.deep.equal({ reused: 3, bound: 0 });
  });

  it('refuses a weight whose file is missing or too short, typed, naming the place', async () => {
    const inputs = { ids: IDS, ...bound(gguf) } as Record<string, Record<string, unknown>>;
    const missing = { ...inputs, proj: { ...inputs['proj'], file: join(tmp.dir, 'gone.gguf') } };
    const e = await rejectsWith(engine.submit({ program: model(), target: 'cpu', inputs: missing }).result, 'InvalidInput');
    expect(e.toWire()['path']).to.equal('/proj/file');
    const past = { ...inputs, proj: { ...inputs['proj'], offset: statSync(gguf).size - 10 } };
    const p = await rejectsWith(engine.submit({ program: model(), target: 'cpu', inputs: past }).result, 'InvalidInput');
    expect(p.toWire()['path']).to.equal('/proj/offset');
  });
});
