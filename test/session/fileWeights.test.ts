import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileCpu } from '../../src/compiler/cpu.js';
import { wholeProgramWiring } from '../../src/compiler/wiring.js';
import type { BufferId } from '../../src/devices/device.js';
import { CpuDevice } from '../../src/devices/index.js';
import { readFileWeightBytes, type FileWeight } from '../../src/ir/fileWeight.js';
import { decodeInputs } from '../../src/ir/inputsCodec.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { ResidentWeights, Session } from '../../src/session/session.js';
import { randomBlocks, refDequant } from '../numerics/quantRef.js';

/** A CPU device that says it maps files: it is given the file range, and counts what it was given. */
class MappingCpu extends CpuDevice {
  readonly mapped: FileWeight[] = [];
  mapFile(w: FileWeight, name: string): BufferId {
    this.mapped.push(w);
    const b = this.allocBuffer(w.length);
    this.write(b, 0, readFileWeightBytes(w, name));
    return b;
  }
}

function convertProgram(): CheckedProgram {
  const p = program('deq');
  const w = p.weight('w', 'q6_k', [2, 256]);
  p.results(p.named('y').convert(w, 'f32'));
  return checkProgram(p.build());
}

describe('session: weights bound from a file reach the device as a file range', () => {
  let dir: string;
  let file: string;
  let blocks: Uint8Array;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'npuo-session-fw-'));
    file = join(dir, 'w.bin');
    blocks = randomBlocks('q6_k', [2, 256], 21);
    writeFileSync(file, Buffer.concat([Buffer.alloc(7), Buffer.from(blocks)]));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function open(device: CpuDevice, checked: CheckedProgram, resident?: ResidentWeights) {
    const inputs = decodeInputs({ w: { dtype: 'q6_k', shape: [2, 256], file, offset: 7, length: blocks.length } }, checked);
    const loaded = await device.load({ target: 'cpu', bytes: compileCpu(checked).bytes });
    const init = { weights: inputs.weights, state: {}, activations: [], stateNext: {}, results: ['y'] };
    return Session.open(device, [{ loaded, wiring: wholeProgramWiring(checked) }], init, resident);
  }

  it('maps the range on a device that maps files, and reads it on one that does not', async () => {
    const checked = convertProgram();
    const want = Array.from(refDequant('q6_k', [2, 256], blocks), Math.fround);
    const mapping = new MappingCpu();
    const s = await open(mapping, checked);
    expect(mapping.mapped.map((w) => [w.file, w.offset, w.length])).to.deep.equal([[file, 7, blocks.length]]);
    expect(Array.from((await s.replay({}, ['y'], 5000)).results['y']!.data)).to.deep.equal(want);
    s.close();

    const plain = new CpuDevice();
    const t = await open(plain, checked);
    expect(t.fileWeights).to.deep.equal({ reused: 0, bound: 1 });
    expect(Array.from((await t.replay({}, ['y'], 5000)).results['y']!.data)).to.deep.equal(want);
    t.close();
    expect(plain.live().buffers).to.equal(0);
  });

  it('shares a resident weight between sessions by its key, and lets it go when no session uses it', async () => {
    const checked = convertProgram();
    const dev = new MappingCpu();
    const resident = new ResidentWeights(dev);
    const a = await open(dev, checked, resident);
    const b = await open(dev, checked, resident);
    expect([a.fileWeights, b.fileWeights]).to.deep.equal([{ reused: 0, bound: 1 }, { reused: 1, bound: 0 }]);
    expect(dev.mapped).to.have.length(1);
    a.close();
    b.close();
    // Closed sessions leave it resident for the next one; then a session of other weights evicts it.
    expect(resident.keys()).to.deep.equal([a.weightKeys[0]]);
    const buffers = dev.live().buffers;
    resident.evictIdle(new Set());
    expect(resident.keys()).to.deep.equal([]);
    expect(dev.live().buffers).to.equal(buffers - 1);
  });
});
