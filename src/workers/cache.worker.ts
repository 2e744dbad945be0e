/**
 * The blob cache actor's worker entry: opens the cache named by workerData.dir in this thread. A cache
 * that cannot open for a cause no restart fixes is refused once, typed; anything else thrown here is
 * a crash, restarted under the engine's restart intensity.
 */
import { workerData } from 'node:worker_threads';
import { refuseStart, serveActor } from '../actors/serve.js';
import { openCacheApi } from '../actors/cacheActor.js';
import { CacheUnavailable } from '../errors/index.js';

const dir: unknown = (workerData as { dir?: unknown } | null)?.dir;
if (typeof dir !== 'string') throw new Error('the cache worker needs workerData.dir');
const api = openCacheApi(dir);
if (api instanceof CacheUnavailable) refuseStart(api);
else {
  serveActor(api);
  // Calls that arrive meanwhile wait their turn in this thread; a failure only leaves the rows to the
  // next verify, gc or clear, so it must not take the actor down.
  if (api.repairedIndex() !== null) setImmediate(() => { try { api.reindex(); } catch { /* retried by the next sweep */ } });
}
