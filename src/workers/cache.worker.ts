/** The blob cache actor's worker entry: opens the cache named by workerData.dir in this thread. */
import { workerData } from 'node:worker_threads';
import { serveActor } from '../actors/serve.js';
import { cacheApi } from '../actors/cacheActor.js';

const dir: unknown = (workerData as { dir?: unknown } | null)?.dir;
if (typeof dir !== 'string') throw new Error('the cache worker needs workerData.dir');
serveActor(cacheApi(dir));
