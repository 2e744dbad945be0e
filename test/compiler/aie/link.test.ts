/** The link step: an artifact at each bound links, one past it is refused as the toolchain refuses it. */
import { expect } from 'chai';
import type { AieManifest } from '../../../src/compiler/aie/artifact.js';
import type { AieBounds } from '../../../src/compiler/aie/bounds.js';
import { AIE_BOUNDS } from '../../../src/compiler/aie/bounds.js';
import { AieArtifactError, decodeAieArtifact, linkRegion } from '../../../src/compiler/aie/link.js';
import { regionManifest } from '../../../src/compiler/aie/manifest.js';
import { planRegions } from '../../../src/compiler/aie/regions.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import type { RegionLimitName } from '../../../src/errors/index.js';
import { check, drainedChain, expectRefusal, freshReads, negChain, wideCore } from './helpers.js';
import { program } from '../../../src/ops/builder.js';

/** The one-region manifest of a program, planned under `bounds` (looser ones build designs past the real bounds). */
function manifestOf(c: CheckedProgram, bounds: AieBounds = AIE_BOUNDS): AieManifest {
  const rs = planRegions(c, { bounds });
  expect(rs).to.have.length(1);
  return regionManifest(c, rs[0]!);
}

const cases: { limit: RegionLimitName; key: keyof AieBounds; at: () => CheckedProgram; past: () => CheckedProgram; needed: number }[] = [
  { limit: 'tiles', key: 'tiles', at: () => negChain(32), past: () => negChain(33), needed: 33 },
  { limit: 'streams-in', key: 'streamsIn', at: () => freshReads(16), past: () => freshReads(17), needed: 17 },
  { limit: 'streams-out', key: 'streamsOut', at: () => drainedChain(16), past: () => drainedChain(17), needed: 17 },
  { limit: 'streams-per-tile', key: 'streamsPerTile', at: () => wideCore(2), past: () => wideCore(3), needed: 3 },
  // One f32 row more per buffer: 4 buffers x 4 bytes past 64512.
  { limit: 'tile-local-bytes', key: 'tileLocalBytes', at: () => negChain(1, [1, 3968]), past: () => negChain(1, [1, 3969]), needed: 64528 },
];

describe('AIE link', () => {
  for (const c of cases) {
    it(`links an artifact exactly at ${c.limit} and refuses one past it`, () => {
      const at = linkRegion(manifestOf(c.at()), { toolchain: null });
      const usage = at.manifest.usage as unknown as Record<string, number>;
      expect(usage[c.key]).to.equal(AIE_BOUNDS[c.key]);
      expect(at.manifest.linked).to.equal('simulated');
      expect(decodeAieArtifact(at.bytes)).to.deep.equal(at.manifest);
      const loose = { ...AIE_BOUNDS, [c.key]: c.needed };
      const past = manifestOf(c.past(), loose);
      expectRefusal(() => linkRegion(past, { toolchain: null }), 'RegionLimit', { limit: c.limit, needed: c.needed, max: AIE_BOUNDS[c.key] });
    });
  }

  it('counts usage from the cores and arguments, not from the manifest\'s own usage field', () => {
    const past = manifestOf(negChain(33), { ...AIE_BOUNDS, tiles: 33 });
    const lying = { ...past, usage: { ...past.usage, tiles: 1 } };
    expectRefusal(() => linkRegion(lying, { toolchain: null }), 'RegionLimit', { limit: 'tiles', needed: 33, max: 32 });
  });

  it('writes the header per artifact.ts and refuses damaged bytes', () => {
    const { bytes, manifest } = linkRegion(manifestOf(negChain(2)), { toolchain: null });
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).to.equal('NPUOAIE2');
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect(view.getUint32(8, true)).to.equal(1);
    expect(view.getUint32(12, true)).to.equal(bytes.length - 20);
    expect(JSON.parse(new TextDecoder().decode(bytes.subarray(20)))).to.have.property('program', manifest.program);
    const flipped = bytes.slice();
    flipped[bytes.length - 3] = flipped[bytes.length - 3]! ^ 1;
    expect(() => decodeAieArtifact(flipped)).to.throw(AieArtifactError, /checksum/);
    expect(() => decodeAieArtifact(bytes.subarray(0, 30))).to.throw(AieArtifactError);
    const foreign = bytes.slice();
    foreign[0] = 0x58;
    expect(() => decodeAieArtifact(foreign)).to.throw(AieArtifactError, /magic/);
  });

  it('keeps NaN, infinite and negative-zero literals through the bytes', () => {
    const p = program('lits');
    const x = p.activation('x', 'f32', [2, 8]);
    p.results(p.add(p.mul(p.max(x, -0), NaN), -Infinity));
    const m = decodeAieArtifact(linkRegion(manifestOf(check(p)), { toolchain: null }).bytes);
    const lits = m.cores.map((c) => c.ins[1]!);
    expect(lits.map((e) => (e.kind === 'literal' ? e.lit : undefined))).to.deep.equal([-0, NaN, -Infinity]);
    expect(Object.is((lits[0] as { lit: number }).lit, -0)).to.equal(true);
  });
});
