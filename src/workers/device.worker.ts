/**
 * A device actor's worker entry: opens the device workerData describes, in this thread. Only its kind's
 * modules are imported (devices/load.ts), before the worker says it is ready, so no call's deadline
 * counts their loading; a kind that cannot load is the error of every call that opens the device.
 */
import { workerData } from 'node:worker_threads';
import { serveActor } from '../actors/serve.js';
import { deviceApi, type DeviceActorOptions } from '../actors/deviceActor.js';
import { loadDeviceEntry } from '../devices/load.js';

const opts = workerData as DeviceActorOptions;
const entry = await loadDeviceEntry(opts.kind).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
serveActor(deviceApi(opts, entry));
