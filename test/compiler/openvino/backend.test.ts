import { expect } from 'chai';
import { VendorCompilerError } from '../../../src/errors/index.js';
import { program } from '../../../src/ops/builder.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { planProgram } from '../../../src/planner/plan.js';
import { wholeProgramWiring } from '../../../src/compiler/wiring.js';
import { NPU4_BACKEND, NPU4_COMPILER, irOf, npu4Backend } from '../../../src/compiler/openvino/backend.js';
import { readIr } from '../../../src/compiler/openvino/irReader.js';
import { compileIrToBlob } from '../../../src/compiler/openvino/vendorCompiler.js';
import { VENDOR_COMPILER } from '../../../src/compiler/openvino/blobFormat.js';
import { NPU4_TARGET, npu4Target } from '../../../src/targets/npu4/index.js';
import { representative } from './programs.js';

describe('compiler/openvino/backend', () => {
  it('plans one unit whose region is the IR, the vendor compiler version and the options', () => {
    const checked = representative();
    const units = NPU4_BACKEND.units(checked, planProgram(checked, NPU4_TARGET));
    expect(units).to.have.length(1);
    const ir = irOf(checked);
    expect(units[0]!.region).to.deep.equal({
      xml: ir.xml, bin: Buffer.from(ir.bin).toString('base64'), vendorCompiler: VENDOR_COMPILER.version,
      options: { narrow: true, contract: NPU4_TARGET.contract },
    });
    expect(NPU4_BACKEND.compiler).to.deep.equal(NPU4_COMPILER);
    expect(NPU4_BACKEND.target).to.equal(NPU4_TARGET);
  });

  it('wires the unit by the original program\'s whole-program ABI (F32 in, F32 out)', () => {
    const checked = representative();
    const [unit] = NPU4_BACKEND.units(checked, planProgram(checked, NPU4_TARGET));
    expect(unit!.wiring).to.deep.equal(wholeProgramWiring(checked));
    const m = readIr(irOf(checked).xml, irOf(checked).bin);
    const bindings = m.layers.filter((l) => l.type === 'Parameter' || l.type === 'Result').map((l) => l.name);
    expect(bindings).to.deep.equal(unit!.wiring.map((w) => w.binding));
  });

  it('compiles through the vendor compiler into its blob, the same bytes every time', () => {
    const checked = representative();
    const plan = planProgram(checked, NPU4_TARGET);
    const a = NPU4_BACKEND.compile(checked, plan, 0);
    const b = NPU4_BACKEND.compile(checked, plan, 0);
    expect(new TextDecoder().decode(a.subarray(0, 8))).to.equal('NPUOVPU1');
    expect(Buffer.from(a).equals(Buffer.from(b))).to.equal(true);
  });

  it('builds every admitted op into a graph the vendor compiler accepts', () => {
    const p = program('every');
    const x = p.activation('x', 'f32', [2, 4]);
    const w = p.weight('w', 'f32', [4, 3]);
    const i = p.activation('i', 'i32', [2]);
    const pos = p.activation('pos', 'i32', []);
    const kv = p.state('kv', 'f32', [4, 3]);
    const a = p.div(p.max(p.mul(p.sub(p.add(x, x), x), 2), x), p.add(x, 8));
    const e = p.sqrt(p.exp(p.neg(a)));
    const m = p.matmul(e, w);
    const r = p.add(p.reduceSum(m, [1]), p.reduceMax(m, [1]));
    const g = p.gather(w, i, 0);
    const t = p.reshape(p.transpose(g, [1, 0]), [6]);
    const b = p.broadcast(r, [2, 3], [0]);
    const c = p.concat([p.slice(m, [0, 0], [2, 3], [1, 2]), b], 1);
    const io = p.convert(p.iota([2, 3], 1, 'f32'), 'f16');
    const ge = p.convert(p.ge(m, 0), 'f32');
    const kv2 = p.dynamicUpdateSlice(kv, p.slice(c, [0, 0], [1, 3]), [pos, 0]);
    p.results(t, io, ge, p.add(x, -1e9));
    p.carry(kv, kv2);
    const checked = checkProgram(p.build());
    const blob = NPU4_BACKEND.compile(checked, planProgram(checked, NPU4_TARGET), 0);
    expect(blob.length).to.be.greaterThan(20);
  });

  it('does not narrow on a target without a contract: an F16 graph is written as it is', () => {
    const target = npu4Target({ contract: null });
    const p = program('h');
    const x = p.activation('x', 'f16', [3]);
    p.results(p.named('y').exp(x));
    const checked = checkProgram(p.build());
    const backend = npu4Backend(target);
    expect(backend.options).to.deep.equal({ narrow: false, contract: null });
    const m = readIr(irOf(checked, target).xml, irOf(checked, target).bin);
    expect(m.layers.map((l) => l.type)).to.deep.equal(['Parameter', 'Exp', 'Result']);
    expect(backend.compile(checked, planProgram(checked, target), 0).length).to.be.greaterThan(20);
  });

  it('hands the vendor compiler\'s refusal on as its typed error, with its log', () => {
    const xml = irOf(representative()).xml.replace('type="MatMul" version="opset1"', 'type="MatMul" version="opset13"');
    expect(() => compileIrToBlob(xml, irOf(representative()).bin)).to.throw(VendorCompilerError).with.property('log').that.matches(/MatMul/);
  });
});
