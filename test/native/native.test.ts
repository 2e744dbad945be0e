/**
 * The native addons as a user meets them: a build without them (a fresh `npm ci`, CI) answers NoDevice
 * saying the addon is absent; a build with them (`npm run build:native`) answers the driver's own
 * result; either way the engine's 'auto' mode runs the NPU targets on their simulators and says so.
 * The cases that need one state or the other skip, saying why, in the other.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../src/jobs/engine.js';
import { openDevice } from '../../src/devices/registry.js';
import { NATIVE_BUILD_DIR, nativeClass, probeNative, type NativeKind } from '../../src/devices/native.js';
import { NoDevice } from '../../src/errors/index.js';
import { STEP_PROGRAM, rejectsWith, stepInputs, tempDir } from '../jobs/helpers.js';

const ABSENT = 'no native addon in this build (npm run build:native)';
const FILES = { xdna2: 'xrt_device.node', npu4: 'ze_device.node' } as const satisfies Record<NativeKind, string>;
const built = (kind: NativeKind) => existsSync(join(NATIVE_BUILD_DIR, FILES[kind]));

/** What each driver answers on a machine without its device, as the addon words it. */
const DRIVER_ANSWER = {
  // XRT 2.13 throws when XILINX_XRT is unset or names no shim library; with a shim, it counts 0.
  xdna2: /xrt::system::enumerate_devices\(\) (found 0 devices|threw: .+); built against XRT \d+\.\d+/,
  // The loader without a driver: zeInit fails (ZE_RESULT_ERROR_UNINITIALIZED), or no driver or NPU is found.
  npu4: /zeInit\(ZE_INIT_FLAG_VPU_ONLY\) = ZE_RESULT_\w+ \(0x[0-9a-f]{8}\)|zeDriverGet found 0 drivers|none of type ZE_DEVICE_TYPE_VPU/,
} as const satisfies Record<NativeKind, RegExp>;

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('native addons', () => {
  for (const kind of ['xdna2', 'npu4'] as const) {
    describe(kind, () => {
      it('answers NoDevice saying the addon is absent when a build directory lacks it', () => {
        const empty = mkdtempSync(join(tmpdir(), 'npuo-native-'));
        try {
          const e = thrown(() => probeNative(kind, empty));
          expect(e).to.be.instanceOf(NoDevice);
          expect((e as NoDevice).device).to.equal(kind);
          expect((e as NoDevice).message).to.include(ABSENT);
        } finally {
          rmSync(empty, { recursive: true, force: true });
        }
      });

      it('openDevice without simulate: NoDevice saying the addon is absent (a build without addons)', function () {
        if (built(kind)) this.skip(); // this build has the addon: the driver's answer is checked below
        const e = thrown(() => openDevice(kind));
        expect(e).to.be.instanceOf(NoDevice);
        expect((e as NoDevice).toWire()).to.include({ code: 'NoDevice', device: kind });
        expect((e as NoDevice).message).to.equal(`no ${kind} device on this machine (${ABSENT})`);
      });

      it('probe() in a build with the addon: NoDevice thrown by the addon as the JS class, with the driver\'s answer', function () {
        if (!built(kind)) this.skip(); // no addon in this build: `npm run build:native` with the SDK headers
        let count: number;
        try {
          count = probeNative(kind);
        } catch (e) {
          expect(e).to.be.instanceOf(NoDevice);
          expect((e as NoDevice).device).to.equal(kind);
          expect((e as NoDevice).message).to.match(DRIVER_ANSWER[kind]);
          // openDevice passes the driver's answer on unchanged.
          expect((thrown(() => openDevice(kind)) as NoDevice).message).to.equal((e as NoDevice).message);
          return;
        }
        // A machine with the hardware: the count is real, and the device is still refused, not faked.
        expect(count).to.be.greaterThan(0);
        const e = thrown(() => openDevice(kind));
        expect(e).to.be.instanceOf(NoDevice);
        expect((e as NoDevice).message).to.include('cannot drive one yet');
      });

      it('opening a device by index in a build with the addon: NoDevice from the constructor too', function () {
        if (!built(kind)) this.skip(); // no addon in this build: `npm run build:native` with the SDK headers
        const Cls = nativeClass(kind) as unknown as new (index: number) => unknown;
        const e = thrown(() => new Cls(64));
        expect(e).to.be.instanceOf(NoDevice);
        expect((e as NoDevice).message).to.match(new RegExp(`${DRIVER_ANSWER[kind].source}|at index 64`));
        expect(thrown(() => new Cls('0' as unknown as number))).to.be.instanceOf(TypeError);
      });
    });
  }

  describe('the engine', function () {
    this.timeout(60_000);
    let tmp: ReturnType<typeof tempDir>;
    beforeEach(() => { tmp = tempDir('npuo-native-engine-'); });
    afterEach(() => { tmp.remove(); });

    it('in auto mode runs xdna2 and npu4 on their simulators, labelled simulated, whichever build this is', async () => {
      const engine = createEngine({ cacheDir: tmp.dir });
      try {
        for (const target of ['xdna2', 'npu4'] as const) {
          const r = await engine.submit({ program: STEP_PROGRAM, target, inputs: stepInputs(2), steps: 2, verify: true }).result;
          expect(r.target).to.equal(target);
          expect(r.simulated, target).to.equal(true);
          expect(r.verification?.pass, target).to.equal(true);
        }
      } finally {
        await engine.close();
      }
    });

    it('in native mode fails the job NoDevice with the reason: the absent addon or the driver\'s answer', async () => {
      const engine = createEngine({ cacheDir: tmp.dir, devices: { xdna2: { mode: 'native' }, npu4: { mode: 'native' } } });
      try {
        for (const target of ['xdna2', 'npu4'] as const) {
          const e = await rejectsWith(engine.submit({ program: STEP_PROGRAM, target, inputs: stepInputs(1) }).result, 'NoDevice');
          expect(e.message, target).to.match(built(target) ? DRIVER_ANSWER[target] : new RegExp(ABSENT.replace(/[()]/g, '\\$&')));
        }
      } finally {
        await engine.close();
      }
    });
  });
});
