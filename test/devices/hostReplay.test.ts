import { expect } from 'chai';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileHost } from '../../src/compiler/host/backend.js';
import { resultBinding } from '../../src/compiler/wiring.js';
import type { BufferId } from '../../src/devices/device.js';
import { HostDevice } from '../../src/devices/host/device.js';
import { loadHostKernels } from '../../src/devices/host/native.js';
import { tensorToBytes } from '../../src/ir/bytes.js';
import { bindFileWeight } from '../../src/ir/fileWeight.js';
import { InvalidInput } from '../../src/errors/index.js';
import { tensor } from '../../src/ir/tensor.js';
import { createEngine } from '../../src/jobs/engine.js';
import { openGguf } from '../../src/model/gguf/reader.js';
import { quantizedTensor, writeGguf } from '../../src/model/gguf/writer.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { tempDir } from '../jobs/helpers.js';

function hostBuilt(): boolean {
  try { loadHostKernels(); return true; } catch { return false; }
}

/** A block of five equations (matmul, add, logistic, sub, mul) repeated `blocks` times. */
function deepProgram(blocks: number) {
  const p = program('deep');
  const x = p.activation('x', 'f32', [1, 32]);
  const w = p.weight('w', 'f32', [32, 32]);
  let h = x;
  for (let b = 0; b < blocks; b++) {
    const m = p.matmul(h, w);
    const s = p.logistic(p.add(m, 0.125));
    h = p.mul(p.sub(s, 0.5), 2);
  }
  p.results(h);
  return checkProgram(p.build());
}

describe('devices/host: one native call per step, and weights from a GGUF', function () {
  before(function () { if (!hostBuilt()) this.skip(); });

  it('replays a program of several hundred equations with one runList call per step', async () => {
    const checked = deepProgram(100);
    expect(checked.eqns.length).to.be.greaterThanOrEqual(400);
    const dev = new HostDevice();
    const loaded = await dev.load({ target: 'host', bytes: compileHost(checked) });
    const bind: Record<string, BufferId> = {};
    for (const a of loaded.args) bind[a.name] = dev.allocBuffer(a.bytes);
    dev.write(bind['x']!, 0, tensorToBytes(tensor('f32', [1, 32], Array.from({ length: 32 }, (_, i) => i / 32))));
    dev.write(bind['w']!, 0, tensorToBytes(tensor('f32', [32, 32], Array.from({ length: 1024 }, (_, i) => Math.sin(i) / 8))));
    const before = dev.kernels.info();
    const steps = 3;
    for (let s = 0; s < steps; s++) await dev.run(loaded, bind, { deadlineMs: Infinity });
    const after = dev.kernels.info();
    expect(after.calls - before.calls).to.equal(steps);
    expect(after.kernels - before.kernels).to.equal(steps * checked.eqns.length);
    const out = new Float32Array(dev.read(bind[resultBinding(checked.program.results[0]!)]!, 0, 128).slice().buffer);
    expect(out.some((v) => v !== 0)).to.equal(true);
    dev.drop();
  });

  it('runs a q4_k matmul over a q8_0 embedding row bound from a GGUF file, within the contract', async () => {
    const tmp = tempDir('npuo-host-gguf-');
    const engine = createEngine({ cacheDir: join(tmp.dir, 'cache') });
    try {
      const rand = mulberry32(7);
      const values = (k: number) => Array.from({ length: k }, () => rand() * 2 - 1);
      const path = join(tmp.dir, 'tiny.gguf');
      writeFileSync(path, writeGguf({
        metadata: { 'general.architecture': { type: 'string', value: 'tiny' } },
        tensors: [
          quantizedTensor('token_embd.weight', 'Q8_0', [256, 6], values(256 * 6)),
          quantizedTensor('output.weight', 'Q4_K', [256, 5], values(256 * 5)),
        ],
      }));
      const f = openGguf(path);
      const range = (name: string) => {
        const t = f.tensor(name)!;
        return { dtype: t.typeName.toLowerCase(), shape: [...t.dims].reverse(), file: path, offset: f.dataOffset + t.offset, length: t.byteSize };
      };
      const inputs = { ids: { dtype: 'i32', shape: [3], data: [4, 0, 4] }, embd: range('token_embd.weight'), proj: range('output.weight') };
      f.close();
      const p = program('tiny');
      const ids = p.activation('ids', 'i32', [3]);
      const embd = p.weight('embd', 'q8_0', [6, 256]);
      const proj = p.weight('proj', 'q4_k', [5, 256]);
      p.results(p.named('logits').matmul(p.gather(embd, ids, 0), proj));
      const r = await engine.submit({ program: p.build(), target: 'host', inputs, verify: true }).result;
      expect(r.verification?.pass, JSON.stringify(r.verification)).to.equal(true);
      const logits = Array.from(r.results['logits']!.data);
      expect(logits).to.have.length(15);
      // Rows 0 and 2 gather the same embedding row: the same logits.
      expect(logits.slice(0, 5)).to.deep.equal(logits.slice(10, 15));
      expect(logits.some((v) => v !== 0)).to.equal(true);
    } finally {
      await engine.close();
      tmp.remove();
    }
  });

  it('maps a quantized file weight in place: the same result as its bytes uploaded, and a changed file refused', async () => {
    const tmp = tempDir('npuo-host-map-');
    try {
      const rand = mulberry32(11);
      const path = join(tmp.dir, 'w.gguf');
      writeFileSync(path, writeGguf({
        metadata: { 'general.architecture': { type: 'string', value: 'tiny' } },
        tensors: [quantizedTensor('w', 'Q4_0', [64, 3], Array.from({ length: 192 }, () => rand() * 2 - 1))],
      }));
      const f = openGguf(path);
      const t = f.tensor('w')!;
      const range = { dtype: 'q4_0', shape: [3, 64], file: path, offset: f.dataOffset + t.offset, length: t.byteSize };
      f.close();
      const p = program('mm');
      p.results(p.matmul(p.activation('x', 'f32', [1, 64]), p.weight('w', 'q4_0', [3, 64])));
      const checked = checkProgram(p.build());
      const dev = new HostDevice();
      const loaded = await dev.load({ target: 'host', bytes: compileHost(checked) });
      const x = tensorToBytes(tensor('f32', [1, 64], Array.from({ length: 64 }, (_, i) => Math.cos(i))));
      const runWith = async (w: BufferId): Promise<number[]> => {
        const bind: Record<string, BufferId> = { w };
        for (const a of loaded.args) if (a.name !== 'w') bind[a.name] = dev.allocBuffer(a.bytes);
        dev.write(bind['x']!, 0, x);
        await dev.run(loaded, bind, { deadlineMs: Infinity });
        return Array.from(new Float32Array(dev.read(bind[resultBinding(checked.program.results[0]!)]!, 0, 12).slice().buffer));
      };
      const mapped = dev.mapFile(bindFileWeight(range, '/w'), 'w');
      // The buffer standing for a mapped weight is never written: the kernels read the file.
      expect(Array.from(dev.read(mapped, 0, 8))).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0]);
      const uploaded = dev.allocBuffer(range.length);
      dev.write(uploaded, 0, readFileSync(path).subarray(range.offset, range.offset + range.length));
      const fromFile = await runWith(mapped);
      expect(fromFile.some((v) => v !== 0)).to.equal(true);
      expect(fromFile).to.deep.equal(await runWith(uploaded));
      const stale = bindFileWeight(range, '/w');
      utimesSync(path, new Date(), new Date(Date.now() + 5000));
      expect(() => dev.mapFile(stale, 'w')).to.throw(InvalidInput).with.property('path', '/w/file');
      dev.drop();
    } finally {
      tmp.remove();
    }
  });
});
