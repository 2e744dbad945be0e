/**
 * A GGUF served on an NPU target goes through the repack cache of `gguf pack --cache`: each open packs
 * the file into its slot or reuses the slot when its stamp and declared-scale guard pass (packCached
 * checks both on every hit). When the checker itself cannot run (the GGUF unreadable for its metadata,
 * the cache's lock or files failing) and a slot exists, it is reused with one warning per process.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError, messageOf } from '../errors/index.js';
import { cacheKey, packCached, q4nxCacheRoot } from '../model/pack/cache.js';

/** The targets whose models are Q4NX directories. */
export const REPACK_TARGETS: readonly string[] = ['npu4', 'xdna2'];

let warned = false;

/** The cached directory of `gguf` (packed now when missing or stale); `log` gets warnings and what was done. */
export function repacked(gguf: string, log: (line: string) => void, cacheRoot?: string): string {
  try {
    const r = packCached(gguf, cacheRoot === undefined ? {} : { cacheRoot });
    for (const w of r.warnings) log(`gguf pack: ${w}`);
    log(r.hit ? `repack cache hit: ${r.dir}` : `packed into the repack cache (${r.reasons.join('; ')}): ${r.dir}`);
    return r.dir;
  } catch (e) {
    // A refusal of the model itself (another architecture, a dropped critical scale) is not the checker failing.
    if (e instanceof EngineError && (e.code === 'InvalidInput' || e.code === 'UsageError' || e.code === 'Q4nxError' || e.code === 'GgufError')) throw e;
    const dir = join(cacheRoot ?? q4nxCacheRoot(), cacheKey(gguf));
    if (!existsSync(join(dir, 'model.q4nx'))) throw e;
    if (!warned) { warned = true; log(`warning: the repack cache's checker could not run (${messageOf(e)}); reusing ${dir} unchecked`); }
    return dir;
  }
}
