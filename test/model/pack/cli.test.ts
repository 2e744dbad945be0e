/** `gguf pack`, `gguf verify` and `gguf check-stamp` through commander: exit codes, files on disk, output. */
import { expect } from 'chai';
import { closeSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { readQ4nxHeader } from '../../../src/model/q4nx/container.js';
import { Workspace, capture, runGguf } from './helpers.js';

/** XORs one byte of a file in place. */
function flipByte(path: string, at: number, mask: number): void {
  const fd = openSync(path, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] = b[0]! ^ mask;
    writeSync(fd, b, 0, 1, at);
  } finally { closeSync(fd); }
}

/** The file offset of byte `off` of a tensor's data in model.q4nx. */
function tensorByte(dir: string, name: string, off: number): number {
  const h = readQ4nxHeader(join(dir, 'model.q4nx'));
  const t = h.tensors.find((x) => x.name === name)!;
  return h.dataStart + t.begin + off;
}

describe('gguf pack / verify / check-stamp commands', () => {
  let ws: Workspace;
  beforeEach(() => { ws = new Workspace(); });
  afterEach(() => ws.remove());

  it('pack then verify: exit 0, a table row per tensor, --json', async () => {
    const g = ws.tiny('m.gguf', { type: 'Q6_K' });
    const io = capture();
    expect(await runGguf(io, ['pack', g, ws.path('out'), '--tokenizer', ws.tokenizer])).to.equal(0);
    expect(io.outs.at(-1)).to.match(/^packed 14 tensors \(.* MB of GGUF, .* MB of model\.q4nx\) into .*out in \d+ ms$/);
    const v = capture();
    expect(await runGguf(v, ['verify', g, ws.path('out')])).to.equal(0);
    expect(v.outs[0]).to.match(/^NAME\s+SOURCE\s+KIND\s+OVER\s+MAX ERR\s+ERR\/BOUND\s+COSINE\s+REL RMS$/);
    expect(v.outs.find((l) => l.startsWith('model.layers.0.mlp.down_proj.weight'))).to.match(/Q6_K\s+requant\s+0\s.*\sok$/);
    expect(v.outs.at(-1)).to.match(/^ok: all 14 tensors within their bounds; requantized: worst cosine 0\.99\d+ \(threshold 0\.99\)$/);
    const j = capture();
    expect(await runGguf(j, ['verify', g, ws.path('out'), '--json', '--min-cosine', '0.9999'])).to.equal(1);
    const doc = JSON.parse(j.outs[0]!) as { ok: boolean; minCosine: number; tensors: { name: string; pass: boolean; method: string }[] };
    expect(doc.minCosine).to.equal(0.9999);
    expect(doc.ok).to.equal(false);
    expect(doc.tensors.filter((t) => !t.pass).every((t) => t.method === 'requant')).to.equal(true);
  });

  it('verify exits 1 on a corrupted tile, naming the tensor, for a repacked and a requantized tensor', async () => {
    for (const type of ['Q4_K', 'Q8_0'] as const) {
      const g = ws.tiny(`${type}.gguf`, { type });
      const dir = ws.path(type);
      expect(await runGguf(capture(), ['pack', g, dir, '--tokenizer', ws.tokenizer])).to.equal(0);
      // Flip the low bit of both nibbles of one code byte of tile 1: each code moves by one step.
      flipByte(join(dir, 'model.q4nx'), tensorByte(dir, 'model.layers.0.self_attn.q_proj.weight', 5120 + 1024 + 777), 0x11);
      const io = capture();
      expect(await runGguf(io, ['verify', g, dir])).to.equal(1);
      const bad = io.outs.filter((l) => l.endsWith('FAIL'));
      expect(bad, type).to.have.length(1);
      expect(bad[0]).to.match(/^model\.layers\.0\.self_attn\.q_proj\.weight\s+\S+\s+\S+\s+2\s/);
      expect(io.outs.at(-1)).to.match(/^failed: 1 of 14 tensors failed/);
    }
  });

  it('verify reports a config.json that differs from the GGUF and a missing model.q4nx', async () => {
    const g = ws.tiny('m.gguf');
    const dir = ws.path('out');
    await runGguf(capture(), ['pack', g, dir, '--tokenizer', ws.tokenizer]);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, rope_theta: 10000 }));
    const io = capture();
    expect(await runGguf(io, ['verify', g, dir])).to.equal(1);
    expect(io.outs).to.include('problem: config.json rope_theta is 10000, the GGUF gives 1000000');
    rmSync(join(dir, 'model.q4nx'));
    const j = capture();
    expect(await runGguf(j, ['verify', g, dir, '--json'])).to.equal(1);
    expect(JSON.parse(j.outs[0]!)).to.have.nested.property('error.code', 'Q4nxError');
  });

  it('pack needs an output directory or --cache, and --tokenizer with a directory', async () => {
    const g = ws.tiny('m.gguf');
    const io = capture();
    expect(await runGguf(io, ['pack', g])).to.equal(2);
    expect(await runGguf(io, ['pack', g, ws.path('o')])).to.equal(2);
    expect(io.errs.at(-1)).to.contain('needs --tokenizer DIR');
    expect(await runGguf(io, ['pack', g, ws.path('o'), '--tokenizer', ws.path('nowhere')])).to.equal(2);
    expect(io.errs.at(-1)).to.contain('no such file or directory');
    expect(ws.list()).to.deep.equal(['m.gguf', 'tokenizer']);
  });
});
