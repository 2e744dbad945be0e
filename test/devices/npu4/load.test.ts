import { expect } from 'chai';
import { program } from '../../../src/ops/builder.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { ArgumentMismatch, LoadFailed, NoDevice, VendorCompilerError, type ArgumentField } from '../../../src/errors/index.js';
import { writeIr } from '../../../src/compiler/openvino/irWriter.js';
import { compileIrToBlob } from '../../../src/compiler/openvino/vendorCompiler.js';
import { VENDOR_COMPILER, encodeBlob } from '../../../src/compiler/openvino/blobFormat.js';
import { decodeBlob } from '../../../src/devices/npu4/blob.js';
import { Npu4SimDevice } from '../../../src/devices/npu4/simDevice.js';
import { openDevice } from '../../../src/devices/registry.js';
import { npu4Artifact, rejection, thrown } from './helpers.js';

// y = exp(x) * w + acc, acc carried as y: every direction and role, F16 so nothing is narrowed.
function prog() {
  const p = program('abi');
  const x = p.activation('x', 'f16', [2, 3]);
  const w = p.weight('w', 'f16', [2, 3]);
  const acc = p.state('acc', 'f16', [2, 3]);
  const y = p.named('y').add(p.named('e').mul(p.named('ex').exp(x), w), acc);
  p.results(y);
  p.carry(acc, y);
  return checkProgram(p.build());
}

describe('devices/npu4: loading a blob', () => {
  it('openDevice gives the simulator only when asked, and says it is one', () => {
    const d = openDevice('npu4', { simulate: true });
    expect(d).to.be.instanceOf(Npu4SimDevice);
    expect(d).to.include({ kind: 'npu4', simulated: true });
    expect(thrown(() => openDevice('npu4'))).to.be.instanceOf(NoDevice);
  });

  it('loads a blob into a context with the program\'s arguments, in the wiring\'s order', async () => {
    const dev = new Npu4SimDevice();
    const loaded = await dev.load(npu4Artifact(prog()));
    expect(loaded.args.map((a) => [a.name, a.direction, a.dtype, a.shape, a.bytes])).to.deep.equal([
      ['x', 'in', 'f16', [2, 3], 12], ['w', 'in', 'f16', [2, 3], 12], ['acc', 'in', 'f16', [2, 3], 12],
      ['result:y', 'out', 'f16', [2, 3], 12], ['state:acc', 'out', 'f16', [2, 3], 12],
    ]);
    expect(loaded).to.include({ target: 'npu4', name: 'abi' });
    expect(dev.live().contexts).to.equal(1);
  });

  it('refuses a damaged, truncated or foreign blob with LoadFailed, so the engine recompiles', async () => {
    const good = npu4Artifact(prog()).bytes;
    const flipped = good.slice();
    flipped[flipped.length - 5]! ^= 0x10;
    const cases: [string, Uint8Array, RegExp][] = [
      ['flipped', flipped, /checksum/],
      ['truncated', good.slice(0, good.length - 7), /payload bytes/],
      ['header only', good.slice(0, 10), /shorter/],
      ['bad magic', Uint8Array.from([...new TextEncoder().encode('NPUOCPU1'), ...good.slice(8)]), /magic/],
    ];
    for (const [what, bytes, detail] of cases) {
      const dev = new Npu4SimDevice();
      const e = await rejection(dev.load({ target: 'npu4', bytes }));
      expect(e, what).to.be.instanceOf(LoadFailed);
      expect((e as LoadFailed).detail, what).to.match(detail);
      expect(dev.live().contexts, what).to.equal(0);
    }
    const cpu = await rejection(new Npu4SimDevice().load({ target: 'cpu', bytes: good }));
    expect(cpu).to.be.instanceOf(LoadFailed);
  });

  it('refuses a blob another compiler version built (the driver refuses it: LoadFailed)', async () => {
    const blob = decodeBlob(npu4Artifact(prog()).bytes, 'test');
    const old = encodeBlob({ ...blob.graph, compiler: { name: VENDOR_COMPILER.name, version: '1.37.2' } }, blob.constants);
    const e = await rejection(new Npu4SimDevice().load({ target: 'npu4', bytes: old }));
    expect(e).to.be.instanceOf(LoadFailed);
    expect((e as LoadFailed).detail).to.match(/1\.37\.2/);
  });

  it('refuses a blob whose graph name is not a string (LoadFailed naming it), and loads one with no name', async () => {
    const blob = decodeBlob(npu4Artifact(prog()).bytes, 'test');
    const odd = encodeBlob({ ...blob.graph, name: { not: 'a string' } as unknown as string }, blob.constants);
    const e = await rejection(new Npu4SimDevice().load({ target: 'npu4', bytes: odd }));
    expect(e).to.be.instanceOf(LoadFailed);
    expect((e as LoadFailed).detail).to.match(/graph's name is not a string/);
    const { name: _name, ...unnamed } = blob.graph;
    const plain = encodeBlob(unnamed as typeof blob.graph, blob.constants);
    expect(decodeBlob(plain, 'test').graph.name).to.equal('');
  });

  for (const field of ['name', 'order', 'direction', 'extent', 'precision'] as const satisfies readonly ArgumentField[]) {
    it(`a compiler that got an argument's ${field} wrong is ArgumentMismatch(arg, '${field}') before anything runs`, async () => {
      for (const arg of ['w', 'result:y']) {
        const dev = new Npu4SimDevice();
        const e = await rejection(dev.load(npu4Artifact(prog(), { arg, field })));
        expect(e, arg).to.be.instanceOf(ArgumentMismatch);
        expect((e as ArgumentMismatch).toWire()).to.include({ code: 'ArgumentMismatch', arg, field });
        expect(dev.runs).to.equal(0);
        expect(dev.live().contexts, 'nothing was loaded').to.equal(0);
      }
    });
  }

  it('a layer the compiler cannot build is VendorCompilerError carrying its log', () => {
    const { xml, bin } = writeIr(prog());
    // An op outside the compiler's list, then a version it does not read, then an attribute it cannot take.
    const cases: [string, RegExp][] = [
      [xml.replace('type="Exp" version="opset1"', 'type="Erf" version="opset1"'), /layer \d+ "ex" \(Erf, opset1\): unsupported operation: Erf/],
      [xml.replace('type="Exp" version="opset1"', 'type="Exp" version="opset13"'), /layer \d+ "ex" \(Exp, opset13\): unsupported version/],
      [xml.replace('auto_broadcast="numpy"', 'auto_broadcast="pdpd"'), /\(Multiply, opset1\): attribute auto_broadcast="pdpd" is not supported/],
    ];
    for (const [bad, line] of cases) {
      expect(bad).to.not.equal(xml);
      const e = thrown(() => compileIrToBlob(bad, bin));
      expect(e).to.be.instanceOf(VendorCompilerError);
      const log = (e as VendorCompilerError).log;
      expect(log).to.match(line);
      expect(log.split('\n')[0]).to.contain(`${VENDOR_COMPILER.name} ${VENDOR_COMPILER.version}`);
      expect(log).to.match(/\[ERROR\] compilation failed: 1 of \d+ layers could not be built$/);
      expect((e as VendorCompilerError).toWire()).to.include({ code: 'VendorCompilerError', log });
    }
  });

  it('an IR the compiler cannot read is VendorCompilerError too, with the reader\'s complaint in the log', () => {
    const { xml, bin } = writeIr(prog());
    const e = thrown(() => compileIrToBlob(xml.replace('precision="FP16"', 'precision="BF16"'), bin));
    expect(e).to.be.instanceOf(VendorCompilerError);
    expect((e as VendorCompilerError).log).to.match(/could not be read: .*BF16/);
  });
});
