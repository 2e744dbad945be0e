/**
 * The host arena's layout (src/compiler/host/arena.ts): a value's bytes are handed out again after its
 * last reader, so a many-layer program needs its widest moment, not the sum of its values.
 */
import { expect } from 'chai';
import { ArenaPlan } from '../../src/compiler/host/arena.js';
import { lowerHost } from '../../src/compiler/host/lower.js';
import { checkProgram } from '../../src/ops/validate.js';
import { program } from '../../src/ops/builder.js';
import { storageBytes } from '../../src/ir/types.js';

describe('compiler/host: the arena plan', () => {
  it('hands a freed block out again, merges neighbouring holes, and never gives a fresh block from a hole', () => {
    const a = new ArenaPlan();
    const x = a.alloc(100);
    const y = a.alloc(64);
    const z = a.alloc(10);
    expect([x, y, z]).to.deep.equal([0, 128, 192]);
    a.release(x);
    a.release(y);
    expect(a.alloc(190)).to.equal(0);
    a.release(0);
    expect(a.alloc(4, true)).to.equal(256);
    expect(a.bytes).to.equal(320);
  });

  it('a chain of 40 layers needs a few layers\' bytes, and every result keeps its own slot', () => {
    const p = program('chain');
    let v = p.activation('x', 'f32', [64, 64]);
    const outs = [];
    for (let i = 0; i < 40; i++) {
      v = p.exp(p.mul(p.add(v, 1), 0.5));
      if (i % 10 === 9) outs.push(v);
    }
    p.results(...outs);
    const checked = checkProgram(p.build());
    const l = lowerHost(checked);
    const sum = checked.eqns.reduce((n, e) => n + storageBytes(e.outs[0]!.dtype, e.outs[0]!.shape), 0);
    expect(l.arenaBytes).to.be.below(sum / 5);
    const resultSlots = checked.program.results.map((r) => l.slots[r]);
    expect(new Set(resultSlots).size).to.equal(4);
  });

  it('a reshape is its operand\'s slot: no copy kernel, and the slot lives while either holds it', () => {
    const p = program('alias');
    const x = p.activation('x', 'f32', [4, 16]);
    const e = p.exp(x);
    const r = p.reshape(e, [64]);
    const later = p.neg(p.neg(p.neg(x)));
    p.results(p.named('y').add(p.reshape(later, [64]), r));
    const checked = checkProgram(p.build());
    const l = lowerHost(checked);
    const [exp, rs] = checked.eqns.filter((q) => q.op === 'exp' || q.op === 'reshape').map((q) => q.eqn.out as string);
    expect(l.slots[rs!]).to.equal(l.slots[exp!]);
    // e dies at the reshape, r lives on to the add: no neg may take their bytes.
    const negSlots = checked.eqns.filter((q) => q.op === 'neg').map((q) => l.slots[q.eqn.out as string]);
    expect(negSlots).to.not.include(l.slots[exp!]);
  });
});
