/**
 * The blob cache actor's worker entry: opens the cache named by workerData.dir in this thread, with the
 * remote tier workerData.remote when given. A cache that cannot open for a cause no restart fixes is
 * refused once, typed; anything else thrown here is a crash, restarted under the engine's restart
 * intensity. The remote tier's warnings go to the engine as 'warning' events.
 */
import { workerData } from 'node:worker_threads';
import { refuseStart, serveActor, type ActorContext } from '../actors/serve.js';
import { openCacheApi } from '../actors/cacheActor.js';
import { CacheUnavailable } from '../errors/index.js';

const data = workerData as { dir?: unknown; remote?: unknown } | null;
const dir: unknown = data?.dir;
const remote: unknown = data?.remote;
if (typeof dir !== 'string') throw new Error('the cache worker needs workerData.dir');
if (remote !== undefined && typeof remote !== 'string') throw new Error('the cache worker\'s workerData.remote is a URL string');
let ctx: ActorContext<{ warning: string }> | null = null;
const api = openCacheApi(dir, remote === undefined ? undefined : { url: remote, onWarning: (m) => ctx?.emit('warning', m) });
if (api instanceof CacheUnavailable) refuseStart(api);
else {
  ctx = serveActor<typeof api, { warning: string }>(api);
  // Calls that arrive meanwhile wait their turn in this thread; a failure only leaves the rows to the
  // next verify, gc or clear, so it must not take the actor down.
  if (api.repairedIndex() !== null) setImmediate(() => { try { api.reindex(); } catch { /* retried by the next sweep */ } });
}
