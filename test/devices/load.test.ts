import { expect } from 'chai';
import type { Device, DeviceKind } from '../../src/devices/device.js';
import { openEntry, type OpenDeviceOptions } from '../../src/devices/entry.js';
import { loadDeviceEntry } from '../../src/devices/load.js';
import { DEVICES, openDevice } from '../../src/devices/registry.js';
import { NoDevice } from '../../src/errors/index.js';

/** What a device open gives: the device's kind, name, class, simulation and contexts, or the error. */
function outcome(open: () => Device): unknown {
  try {
    const d = open();
    const seen = { kind: d.kind, name: d.name, class: d.constructor.name, simulated: d.simulated, contexts: d.maxContexts };
    d.drop();
    return seen;
  } catch (e) {
    return { error: (e as Error).constructor.name, message: (e as Error).message };
  }
}

describe('devices: loadDeviceEntry (the device worker\'s entry, imported per kind)', () => {
  const options: OpenDeviceOptions[] = [{}, { simulate: true }, { maxContexts: 3, name: 'd' }];
  for (const kind of Object.keys(DEVICES) as DeviceKind[]) {
    it(`${kind}: opens what openDevice opens, with and without the simulator (or fails as it does)`, async () => {
      const entry = await loadDeviceEntry(kind);
      expect(entry.contexts).to.equal(DEVICES[kind].contexts);
      expect(entry.simulate === undefined).to.equal(!('simulate' in DEVICES[kind]));
      for (const o of options) {
        expect(outcome(() => openEntry(entry, o)), JSON.stringify(o)).to.deep.equal(outcome(() => openDevice(kind, o)));
      }
    });
  }

  it('answers NoDevice for a kind no device has; control: the loaded kinds differ, so a swapped row would fail above', async () => {
    const e = await loadDeviceEntry('gpu' as DeviceKind).then(() => null, (x: unknown) => x);
    expect(e).to.be.instanceOf(NoDevice);
    expect((e as NoDevice).message).to.contain('unknown device kind');
    const sims = await Promise.all((['xdna2', 'npu4'] as const).map(async (k) => outcome(() => openEntry(DEVICES[k], { simulate: true }))));
    expect(sims[0]).to.not.deep.equal(sims[1]);
  });
});
