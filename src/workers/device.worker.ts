/** A device actor's worker entry: opens the device workerData describes, in this thread. */
import { workerData } from 'node:worker_threads';
import { serveActor } from '../actors/serve.js';
import { deviceApi, type DeviceActorOptions } from '../actors/deviceActor.js';

serveActor(deviceApi(workerData as DeviceActorOptions));
