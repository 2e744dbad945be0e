import { expect } from 'chai';
import { ContextLimit, DispatchRefused } from '../../src/errors/index.js';
import { CpuDevice } from '../../src/devices/index.js';
import { ADD_EXP, artifactOf, rejection, thrown } from './helpers.js';

describe('devices: hardware contexts', () => {
  it('defaults to 16 contexts and refuses the 17th artifact with ContextLimit', async () => {
    const dev = new CpuDevice();
    expect(dev.maxContexts).to.equal(16);
    const art = artifactOf(ADD_EXP);
    for (let i = 0; i < 16; i++) await dev.load(art);
    const e = await rejection(dev.load(art));
    expect(e).to.be.instanceOf(ContextLimit);
    expect((e as ContextLimit).toWire()).to.include({ code: 'ContextLimit', needed: 17, max: 16 });
    expect(dev.live().contexts).to.equal(16);
  });

  it('frees a context on unload, so the next load fits', async () => {
    const dev = new CpuDevice({ maxContexts: 2 });
    const art = artifactOf(ADD_EXP);
    const a = await dev.load(art);
    await dev.load(art);
    expect(await rejection(dev.load(art))).to.be.instanceOf(ContextLimit);
    dev.unload(a);
    expect(dev.live().contexts).to.equal(1);
    await dev.load(art);
    expect(dev.live().contexts).to.equal(2);
    // Unloading twice is a no-op; an artifact of another device is not this device's to unload.
    dev.unload(a);
    expect(dev.live().contexts).to.equal(2);
    const other = await new CpuDevice().load(art);
    const e = thrown(() => dev.unload(other));
    expect(e).to.be.instanceOf(DispatchRefused);
    expect((e as DispatchRefused).reason).to.equal('foreign-graph');
  });

  it('refuses a context count that is not a whole number >= 1', () => {
    expect(() => new CpuDevice({ maxContexts: 0 })).to.throw(RangeError);
    expect(() => new CpuDevice({ maxContexts: 1.5 })).to.throw(RangeError);
  });
});
