/**
 * Where the cache lives when the caller names no directory. Always an absolute path: a cache relative
 * to the working directory would follow whoever embeds the library (a server, an Electron app) around.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { CacheError } from '../errors/index.js';

/** `$NPU_OFFLOAD_CACHE_DIR`, else `$XDG_CACHE_HOME/npu-offload`, else `~/.cache/npu-offload`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const own = env['NPU_OFFLOAD_CACHE_DIR'];
  if (own !== undefined && own !== '') {
    if (!isAbsolute(own)) throw new CacheError(own, 'NPU_OFFLOAD_CACHE_DIR must be an absolute path');
    return own;
  }
  const xdg = env['XDG_CACHE_HOME'];
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and is to be ignored.
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'npu-offload');
  if (!isAbsolute(home)) throw new CacheError(home, 'no absolute home directory to put the cache in; set NPU_OFFLOAD_CACHE_DIR');
  return join(home, '.cache', 'npu-offload');
}
