/**
 * Who packed a model directory: this package's name and version, and the packer's own format version,
 * which is bumped whenever the bytes `gguf pack` writes for the same GGUF would change. A cached
 * directory stamped by any other identity is stale.
 */
import { readFileSync } from 'node:fs';

/** Bumped when pack's output for the same input changes (tensor set, rounding, config keys). */
export const PACKER_VERSION = 1;

/** The converter identity recorded in q4nx_source and repack-stamp.txt. */
export interface ConverterIdentity {
  readonly name: string;
  readonly version: string;
  readonly packer: number;
}

let identity: ConverterIdentity | undefined;

/** This build's converter identity (package.json is read once). */
export function converterIdentity(): ConverterIdentity {
  if (identity === undefined) {
    // dist/src/model/pack/identity.js -> the package root, whatever the out dir is called.
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
    identity = { name: typeof pkg.name === 'string' ? pkg.name : 'npu-offload', version: typeof pkg.version === 'string' ? pkg.version : '0.0.0', packer: PACKER_VERSION };
  }
  return identity;
}

/** The identity as one string: `npu-offload@0.1.0 pack/1`. */
export function converterLabel(id: ConverterIdentity = converterIdentity()): string {
  return `${id.name}@${id.version} pack/${id.packer}`;
}
