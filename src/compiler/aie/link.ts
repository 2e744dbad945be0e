/**
 * The link step: checks a region's manifest against the bounds, as the real toolchain refuses a design
 * one past any of them (RegionLimit naming the limit), builds it with aiecc and Peano when they are
 * installed (toolchain.ts), and writes the artifact bytes (artifact.ts: magic, version, manifest length,
 * CRC-32 of the manifest, manifest JSON). decodeAieArtifact reads them back for the device; it throws
 * AieArtifactError, a plain Error the device wraps in its own LoadFailed.
 */
import { messageOf, RegionLimit } from '../../errors/index.js';
import { frame, unframe } from '../frame.js';
import type { AieManifest, AieUsage } from './artifact.js';
import { AIE_ARTIFACT_MAGIC, AIE_ARTIFACT_VERSION, aieJsonReplacer, aieJsonReviver } from './artifact.js';
import type { AieBounds } from './bounds.js';
import { AIE_BOUNDS } from './bounds.js';
import { breachOf } from './regions.js';
import type { Toolchain } from './toolchain.js';
import { findToolchain, linkWithAiecc } from './toolchain.js';


/** A damaged or foreign AIE artifact. */
export class AieArtifactError extends Error {
  constructor(readonly detail: string) {
    super(`not a loadable AIE artifact: ${detail}`);
    this.name = 'AieArtifactError';
  }
}

/** What a manifest uses, counted from its cores and arguments (never from its own `usage` field). */
export function manifestUsage(m: AieManifest): { usage: AieUsage; cores: { eqn: number; streams: number; localBytes: number }[] } {
  // A core reading a slot an earlier core drained takes the value by its fifo, not a host stream.
  const inputs = new Set(m.args.filter((a) => a.direction === 'in').map((a) => `${a.arena}:${a.offset}`));
  const cores = m.cores.map((c) => {
    const hostIn = new Set(c.ins.flatMap((e) => (e.kind === 'host' && inputs.has(`${e.arena}:${e.offset}`) ? [e.value] : [])));
    const hostOut = new Set(c.outs.flatMap((e) => (e.kind === 'host' ? [e.value] : [])));
    return { eqn: c.eqn, streams: Math.max(hostIn.size, hostOut.size), localBytes: c.localBytes };
  });
  const usage: AieUsage = {
    tiles: m.cores.length,
    streamsIn: m.args.filter((a) => a.direction === 'in').length,
    streamsOut: m.args.filter((a) => a.direction === 'out').length,
    streamsPerTile: Math.max(0, ...cores.map((c) => c.streams)),
    tileLocalBytes: Math.max(0, ...cores.map((c) => c.localBytes)),
  };
  return { usage, cores };
}

/** Refuses a manifest one past any bound with RegionLimit, as the toolchain does. */
function checkBounds(m: AieManifest, bounds: AieBounds = AIE_BOUNDS): AieUsage {
  const { usage, cores } = manifestUsage(m);
  const b = breachOf(usage, cores, bounds);
  if (b) throw new RegionLimit(b.eqn, b.limit, b.needed, b.max);
  return usage;
}

/** The artifact bytes of a manifest (no checks: link() checks first). */
export function encodeAieArtifact(m: AieManifest): Uint8Array {
  return frame(AIE_ARTIFACT_MAGIC, AIE_ARTIFACT_VERSION, new TextEncoder().encode(JSON.stringify(m, aieJsonReplacer)));
}

/** Reads artifact bytes back into their manifest; AieArtifactError on any damage. */
export function decodeAieArtifact(bytes: Uint8Array): AieManifest {
  const framed = unframe(bytes, AIE_ARTIFACT_MAGIC, AIE_ARTIFACT_VERSION, 'an XDNA2 artifact');
  if ('problem' in framed) throw new AieArtifactError(framed.problem);
  const payload = framed.payload;
  let m: unknown;
  try {
    m = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload), aieJsonReviver);
  } catch (e) {
    throw new AieArtifactError(`the manifest is not JSON: ${messageOf(e)}`);
  }
  const r = m as Partial<AieManifest> | null;
  if (r === null || typeof r !== 'object' || r.part !== 'aie2p' || !Array.isArray(r.cores) || !Array.isArray(r.args) || !Array.isArray(r.arenas) || !Array.isArray(r.fifos)) {
    throw new AieArtifactError('the manifest lacks its part, cores, fifos, arenas or args');
  }
  return r as AieManifest;
}

/** How to link: the bounds to check, and the toolchain (found on PATH unless given; null for none). */
export interface LinkOptions {
  readonly bounds?: AieBounds;
  readonly toolchain?: Toolchain | null;
}

/** Checks a manifest against the bounds and links it: the final manifest and the artifact's bytes. */
export function linkRegion(m: AieManifest, opts: LinkOptions = {}): { manifest: AieManifest; bytes: Uint8Array } {
  const bounds = opts.bounds ?? AIE_BOUNDS;
  const usage = checkBounds(m, bounds);
  const tc = opts.toolchain === undefined ? findToolchain() : opts.toolchain ?? undefined;
  const base: AieManifest = { ...m, usage, bounds: { ...bounds } };
  const linked: AieManifest = tc ? { ...base, ...linkWithAiecc(base, tc), linked: 'aiecc' } : { ...base, linked: 'simulated' };
  return { manifest: linked, bytes: encodeAieArtifact(linked) };
}
