/** The XDNA2 backend: units, contexts, cache identity, wiring and the emitted design. */
import { expect } from 'chai';
import { XDNA2_BACKEND } from '../../../src/compiler/aie/backend.js';
import { decodeAieArtifact } from '../../../src/compiler/aie/link.js';
import { resolveIdentity } from '../../../src/cache/identity.js';
import { program } from '../../../src/ops/builder.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import { eqnOuts } from '../../../src/ir/types.js';
import { planProgram } from '../../../src/planner/plan.js';
import { check, expectRefusal, freshAdds, twentyEquations } from './helpers.js';

const plan = (c: CheckedProgram) => planProgram(c, XDNA2_BACKEND.target);

function keys(c: CheckedProgram): string[] {
  const b = XDNA2_BACKEND;
  return b.units(c, plan(c)).map((u) => resolveIdentity({
    device: b.target.part, compiler: b.compiler.name, compilerVersion: b.compiler.version, options: b.options, region: u.region,
  }).key);
}

function scaled(lit: number): CheckedProgram {
  const p = program('scaled');
  p.results(p.mul(p.exp(p.activation('x', 'f32', [4, 64])), lit));
  return check(p);
}

describe('XDNA2 backend', () => {
  it('is the poot-aie compiler for the xdna2 target, linking simulated here', () => {
    expect(XDNA2_BACKEND.compiler).to.deep.equal({ name: 'poot-aie', version: '1' });
    expect(XDNA2_BACKEND.target.name).to.equal('xdna2');
    expect(XDNA2_BACKEND.options).to.deep.equal({ link: 'simulated' });
  });

  it('runs the twenty-equation graph as three units, one hardware context each', () => {
    const c = twentyEquations();
    const units = XDNA2_BACKEND.units(c, plan(c));
    expect(units).to.have.length(3);
    const ms = units.map((_, i) => decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), i)));
    expect(ms.map((m) => m.closedBy)).to.deep.equal(['streams-in', 'streams-out', 'end']);
    expect(ms.map((m) => m.linked)).to.deep.equal(['simulated', 'simulated', 'simulated']);
    expect(ms.flatMap((m) => m.eqns)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
  });

  it('refuses a program of 17 regions with ContextLimit, and takes one of 16', () => {
    expect(XDNA2_BACKEND.units(freshAdds(128), plan(freshAdds(128)))).to.have.length(16);
    const c = freshAdds(129);
    expectRefusal(() => XDNA2_BACKEND.units(c, plan(c)), 'ContextLimit', { needed: 17, max: 16 });
  });

  it('compiles the same program to the same bytes and key; a changed literal changes the key', () => {
    const a = twentyEquations();
    const b = twentyEquations();
    for (let i = 0; i < 3; i++) expect(Buffer.from(XDNA2_BACKEND.compile(a, plan(a), i)).equals(Buffer.from(XDNA2_BACKEND.compile(b, plan(b), i)))).to.equal(true);
    expect(keys(a)).to.deep.equal(keys(b));
    expect(keys(scaled(0.5))).to.deep.equal(keys(scaled(0.5)));
    expect(keys(scaled(0.5))).to.not.deep.equal(keys(scaled(0.25)));
    expect(keys(scaled(0))).to.not.deep.equal(keys(scaled(-0)));
    const bytes = (c: CheckedProgram) => Buffer.from(XDNA2_BACKEND.compile(c, plan(c), 0));
    expect(bytes(scaled(0.5)).equals(bytes(scaled(0.25)))).to.equal(false);
  });

  it('wires each host tensor to its value at its arena offset, as the artifact places it', () => {
    const c = twentyEquations();
    XDNA2_BACKEND.units(c, plan(c)).forEach((u, i) => {
      const m = decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), i));
      expect(u.wiring.map((w) => [w.binding, w.value, w.direction, w.dtype, w.shape, w.arena])).to.deep.equal(
        m.args.map((a) => [a.name, a.name, a.direction, a.dtype, a.shape, { index: a.arena, offset: a.offset, arenaBytes: m.arenas[a.arena]!.bytes }]),
      );
      for (const w of u.wiring) {
        expect(w.arena!.offset % 64).to.equal(0);
        expect(w.arena!.offset + m.args.find((a) => a.name === w.value)!.bytes).to.be.at.most(w.arena!.arenaBytes);
      }
      // Every core endpoint on the host names exactly its argument's arena and offset.
      for (const core of m.cores) {
        for (const e of [...core.ins, ...core.outs]) {
          if (e.kind !== 'host') continue;
          const w = u.wiring.find((x) => x.value === e.value)!;
          expect([e.arena, e.offset]).to.deep.equal([w.arena!.index, w.arena!.offset]);
        }
      }
    });
    // The exp in the last region feeds only the row sum: it is wired nowhere.
    const exp = eqnOuts(c.eqns[16]!.eqn)[0]!;
    expect(XDNA2_BACKEND.units(c, plan(c)).flatMap((u) => u.wiring.map((w) => w.value))).to.not.include(exp);
  });

  it('emits an IRON design with one Worker per core and the ObjectFifos of its streams', () => {
    const c = twentyEquations();
    const m = decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), 2));
    const out = (e: number) => eqnOuts(c.eqns[e]!.eqn)[0]!;
    expect(m.iron.match(/= Worker\(/g)).to.have.length(4);
    expect([...m.iron.matchAll(/^(\w+) = ObjectFifo\(/gm)].map((x) => x[1])).to.deep.equal([
      'in0_z', 'in1_table', 'in2_idx', `of0_${out(16)}`, `of1_${out(18)}`, `out0_${out(17)}`, `out1_${out(19)}`,
    ]);
    expect(m.iron).to.include('from aie.iron import Buffer, Kernel, ObjectFifo, Program, Runtime, Worker');
    expect(m.iron).to.include('from aie.iron.device import NPU2, Tile');
    expect(m.iron).to.include(`w_e17 = Worker(core_e17, [of0_${out(16)}.cons(), out0_${out(17)}.prod(), e17_reduce_sum_f32], placement=Tile(0, 3)`);
    expect(m.iron).to.include('rt.fill(in1_table.prod(), arena_in, TensorAccessPattern((1088,), 512, [1, 1, 1, 480], [0, 0, 0, 1]))');
    expect(m.iron).to.include('Program(NPU2(), rt).resolve_program(SequentialPlacer())');
    const first = decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), 0));
    expect(first.iron.match(/= Worker\(/g)).to.have.length(8);
  });

  it('emits each core\'s kernel as a loop over its row, and the instruction stream with arena offsets', () => {
    const c = twentyEquations();
    const m = decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), 0));
    expect(Object.keys(m.kernels)).to.deep.equal(m.cores.map((k) => k.kernel));
    expect(m.kernels['e0_add_f32']).to.include('extern "C" void e0_add_f32(const float* r0, const float* r1, float* w0, int32_t n) {\n  for (int32_t i = 0; i < n; i++) w0[i] = (r0[i] + r1[i]);');
    const norm = decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), 1)).kernels['e8_row_kernel_f32']!;
    expect(norm).to.include('v1 = (v1 + v0[i]);').and.include('w1[k] = v4;').and.include('sqrtf(v3)');
    const last = decodeAieArtifact(XDNA2_BACKEND.compile(c, plan(c), 2));
    expect(last.kernels['e18_gather_f32']).to.include('w0[i] = t0[(o * 10 + t1[j]) * 12 + e];');
    expect(last.instructions).to.include('dma.bd id=1 mm2s shim=0,1 arena=0 offset=512 bytes=480 fifo=in1_table value="table"');
    expect(last.instructions.filter((l) => l.startsWith('core.start'))).to.have.length(4);
    expect(last.instructions.filter((l) => l.startsWith('dma.sync'))).to.have.length(2);
  });
});
