/** Splitting programs into AIE regions: which bounds close regions, and what fits no region. */
import { expect } from 'chai';
import { AIE_BOUNDS, STACK_BYTES } from '../../../src/compiler/aie/bounds.js';
import { planRegions } from '../../../src/compiler/aie/regions.js';
import { program } from '../../../src/ops/builder.js';
import { eqnOuts } from '../../../src/ir/types.js';
import { planProgram } from '../../../src/planner/plan.js';
import { XDNA2_TARGET } from '../../../src/targets/xdna2/index.js';
import { check, expectRefusal, negChain, twentyEquations } from './helpers.js';
import { programToJson } from '../../../src/ir/codec.js';
import { tensor } from '../../../src/ir/tensor.js';
import { Xdna2SimDevice } from '../../../src/devices/xdna2/simDevice.js';
import { Session } from '../../../src/session/session.js';
import { runProgram } from '../../../src/oracle/index.js';
import { compileXdna2, loadAll } from '../../devices/xdna2/helpers.js';

describe('AIE regions', () => {
  it('splits twenty equations of twenty distinct shapes into three regions, closed by streams-in, then streams-out', () => {
    const c = twentyEquations();
    expect(c.eqns).to.have.length(20);
    expect(new Set(c.eqns.map((e) => e.outs[0]!.shape.join('x'))).size).to.equal(20);
    planProgram(c, XDNA2_TARGET); // every equation is one the XDNA2 admits
    const rs = planRegions(c);
    expect(rs.map((r) => r.eqns)).to.deep.equal([[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19]]);
    expect(rs.map((r) => r.closedBy)).to.deep.equal(['streams-in', 'streams-out', 'end']);
    expect(rs[0]!.usage).to.include({ tiles: 8, streamsIn: 16, streamsOut: 8, streamsPerTile: 2 });
    expect(rs[1]!.usage).to.include({ tiles: 8, streamsIn: 8, streamsOut: 16, streamsPerTile: 2 });
    expect(rs[2]!.usage).to.include({ tiles: 4, streamsIn: 3, streamsOut: 2 });
  });

  it('moves a value only the region reads tile to tile, and puts every other tensor in a host arena', () => {
    const c = twentyEquations();
    const r = planRegions(c)[2]!;
    const exp = eqnOuts(c.eqns[16]!.eqn)[0]!;
    const gathered = eqnOuts(c.eqns[18]!.eqn)[0]!;
    expect(r.fifos.map((f) => [f.value, f.from, f.to])).to.deep.equal([[exp, 0, [1]], [gathered, 2, [3]]]);
    expect(r.args.map((a) => [a.name, a.direction, a.arena, a.offset])).to.deep.equal([
      ['z', 'in', 0, 0], ['table', 'in', 0, 512], ['idx', 'in', 0, 1024],
      [eqnOuts(c.eqns[17]!.eqn)[0]!, 'out', 1, 0], [eqnOuts(c.eqns[19]!.eqn)[0]!, 'out', 1, 64],
    ]);
    expect(r.arenas).to.deep.equal([{ name: 'arena_in', bytes: 1088, direction: 'in' }, { name: 'arena_out', bytes: 128, direction: 'out' }]);
    expect(r.cores.map((k) => k.tile)).to.deep.equal([[0, 2], [0, 3], [0, 4], [0, 5]]);
  });

  it('drains a value later regions read, even when its own region reads it too', () => {
    const p = program('drain');
    const x = p.activation('x', 'f32', [2, 8]);
    const a = p.named('a').exp(x);
    p.results(p.named('b').neg(a), a);
    const r = planRegions(check(p))[0]!;
    expect(r.fifos.map((f) => f.value)).to.deep.equal(['a']);
    expect(r.args.filter((g) => g.direction === 'out').map((g) => g.name)).to.deep.equal(['a', 'b']);
    expect(r.cores[1]!.hostIn).to.deep.equal([]);
  });

  it('drains a value its own region and a later region read, and the replay matches the oracle', async () => {
    // v is read by eqn 1 (region 0, tile to tile) and by eqn 32 (region 1): it must also reach host memory.
    const p = program('reread');
    const x = p.activation('x', 'f32', [2, 8]);
    const v = p.named('v').neg(x);
    let c = v;
    for (let i = 0; i < 31; i++) c = p.neg(c);
    p.results(p.named('m').max(c, v));
    const c32 = check(p);
    const rs = planRegions(c32);
    expect(rs.map((r) => r.eqns.length)).to.deep.equal([32, 1]);
    expect(rs[0]!.fifos.map((f) => f.value)).to.include('v');
    expect(rs[0]!.args.filter((a) => a.direction === 'out').map((a) => a.name)).to.include('v');
    expect(rs[1]!.args.filter((a) => a.direction === 'in').map((a) => a.name)).to.include('v');

    const compiled = compileXdna2(programToJson(c32.program));
    expect(compiled.units).to.have.length(2);
    const dev = new Xdna2SimDevice();
    const xs = tensor('f32', [2, 8], Array.from({ length: 16 }, (_, k) => (k % 2 === 0 ? k + 0.5 : -k - 0.25)));
    const session = Session.open(dev, await loadAll(dev, compiled), { weights: {}, state: {}, activations: ['x'], stateNext: {}, results: ['m'] });
    try {
      const got = await session.replay({ x: xs }, ['m'], 10_000);
      const [want] = runProgram(c32, { weights: {}, state: {}, steps: [{ x: xs }] });
      // neg and max are exact on the XDNA2: max(x, -x) = |x| element for element.
      expect([...got.results['m']!.data]).to.deep.equal([...want!.results['m']!.data]);
      expect([...got.results['m']!.data]).to.deep.equal([...xs.data].map(Math.abs));
    } finally {
      session.close();
      dev.drop();
    }
  });

  it('closes a region at 32 tiles', () => {
    const rs = planRegions(negChain(33));
    expect(rs.map((r) => r.cores.length)).to.deep.equal([32, 1]);
    expect(rs.map((r) => r.closedBy)).to.deep.equal(['tiles', 'end']);
    // The value crossing the split is the first region's output and the second's input.
    expect(rs[0]!.args.map((a) => a.direction)).to.deep.equal(['in', 'out']);
    expect(rs[1]!.args[0]!.name).to.equal(rs[0]!.args[1]!.name);
  });

  it('counts a core\'s host streams per direction: three host operands fit no region', () => {
    const p = program('three');
    const [x, y, z] = ['x', 'y', 'z'].map((n) => p.activation(n, 'f32', [2, 8]));
    p.results(...p.rowKernel([x!, y!, z!], (b, u, v, w) => b.mul(b.mul(u, v), w)));
    expectRefusal(() => planRegions(check(p)), 'RegionLimit', { eqn: 0, limit: 'streams-per-tile', needed: 3, max: 2 });
  });

  it('does not count tile-to-tile operands against a core\'s streams', () => {
    const p = program('three-local');
    const x = p.activation('x', 'f32', [2, 8]);
    const [u, v, w] = [p.neg(x), p.exp(x), p.mul(x, 2)];
    p.results(...p.rowKernel([u, v, w], (b, a, c, d) => b.mul(b.mul(a, c), d)));
    const [r] = planRegions(check(p));
    expect(r!.cores[3]!.hostIn).to.deep.equal([]);
    expect(r!.usage.streamsPerTile).to.equal(1);
  });

  it('refuses an equation whose row buffers outgrow a tile', () => {
    // neg of one row of C f32: stack + 2 buffers in + 2 out = 1024 + 16 C bytes; C = 3969 is one row past.
    expect(STACK_BYTES + 16 * 3968).to.equal(AIE_BOUNDS.tileLocalBytes);
    expectRefusal(() => planRegions(negChain(1, [1, 3969])), 'RegionLimit', { eqn: 0, limit: 'tile-local-bytes', needed: 64528, max: 64512 });
    expect(planRegions(negChain(1, [1, 3968]))[0]!.usage.tileLocalBytes).to.equal(64512);
  });

  it('holds a gather\'s whole source table in tile memory', () => {
    const p = program('gather');
    const t = p.weight('t', 'f32', [500, 16]);
    const i = p.activation('i', 'i32', [4]);
    p.results(p.gather(t, i, 0));
    const [r] = planRegions(check(p));
    // stack + 2 x (src row 64 + idx row 16 + out row 64) + table 32000 + indices 16
    expect(r!.usage.tileLocalBytes).to.equal(1024 + 2 * (64 + 16 + 64) + 32000 + 16);
    const big = program('gather-big');
    big.results(big.gather(big.weight('t', 'f32', [1000, 64]), big.activation('i', 'i32', [4]), 0));
    expectRefusal(() => planRegions(check(big)), 'RegionLimit', { eqn: 0, limit: 'tile-local-bytes' });
  });
});
