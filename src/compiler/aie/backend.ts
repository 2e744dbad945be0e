/**
 * The XDNA2 target's backend: a program is split into regions (regions.ts), one artifact and one
 * hardware context each. A unit's identity records everything its bytes depend on (each equation's op,
 * operands with their literals' values, attributes, types; the region's arguments, placement and
 * fifos; the bounds), so any change to the region changes its cache key. compile() emits the region's
 * IRON design, kernels and instruction stream and links them (link.ts).
 */
import { ContextLimit, RegionLimit } from '../../errors/index.js';
import type { CheckedProgram } from '../../ir/checked.js';
import { eqnOuts, isLiteral } from '../../ir/types.js';
import { XDNA2_TARGET } from '../../targets/xdna2/index.js';
import type { Backend, Layout, RegionSummary, UnitPlan } from '../backend.js';
import type { WiredArg } from '../wiring.js';
import type { AieBounds } from './bounds.js';
import { AIE_BOUNDS } from './bounds.js';
import { linkRegion } from './link.js';
import { AIE_COMPILER, regionManifest } from './manifest.js';
import type { RegionPlan } from './regions.js';
import { planRegions } from './regions.js';
import { findToolchain } from './toolchain.js';

// Compiling unit after unit of one checked program plans its regions once, not once per unit.
const planned = new WeakMap<CheckedProgram, { bounds: AieBounds; regions: RegionPlan[] }>();

/** The regions of a program, refusing more than the device's hardware contexts with ContextLimit. */
function aieRegions(checked: CheckedProgram, bounds: AieBounds = AIE_BOUNDS): RegionPlan[] {
  const have = planned.get(checked);
  const regions = have?.bounds === bounds ? have.regions : planRegions(checked, { bounds });
  planned.set(checked, { bounds, regions });
  if (regions.length > bounds.contexts) throw new ContextLimit(regions.length, bounds.contexts);
  return regions;
}

/** What a region's cache identity records: its equations in full, its placement and the bounds. */
function regionIdentity(checked: CheckedProgram, r: RegionPlan): unknown {
  return {
    format: 'aie-region@1',
    program: checked.program.name,
    region: r.index,
    eqns: r.eqns.map((e) => {
      const ce = checked.eqns[e]!;
      return {
        index: e,
        op: ce.op,
        in: ce.eqn.in.map((o, k) => (isLiteral(o) ? { lit: o.lit, dtype: ce.ins[k]!.dtype } : o)),
        out: [...eqnOuts(ce.eqn)],
        attrs: ce.eqn.attrs,
        ins: ce.ins.map((t) => ({ dtype: t.dtype, shape: [...t.shape] })),
        outs: ce.outs.map((t) => ({ dtype: t.dtype, shape: [...t.shape] })),
      };
    }),
    args: r.args.map((a) => ({ ...a, shape: [...a.shape] })),
    arenas: r.arenas.map((a) => ({ ...a })),
    fifos: r.fifos.map((f) => ({ ...f, to: [...f.to] })),
    closedBy: r.closedBy,
    bounds: { ...AIE_BOUNDS },
  };
}

/** The wiring of a region: each argument bound to the program value of its name, at its arena offset. */
function regionWiring(r: RegionPlan): WiredArg[] {
  return r.args.map((a) => ({
    binding: a.name, value: a.name, direction: a.direction, dtype: a.dtype, shape: [...a.shape],
    arena: { index: a.arena, offset: a.offset, arenaBytes: r.arenas[a.arena]!.bytes },
  }));
}

let linkMode: 'aiecc' | 'simulated' | undefined;

export const XDNA2_BACKEND: Backend = {
  target: XDNA2_TARGET,
  compiler: AIE_COMPILER,
  // Whether aiecc links is part of the identity: a simulated artifact is never served where a real one would be built.
  get options() {
    linkMode ??= findToolchain() ? 'aiecc' : 'simulated';
    return { link: linkMode };
  },
  units(checked): UnitPlan[] {
    return aieRegions(checked).map((r) => ({ region: regionIdentity(checked, r), wiring: regionWiring(r) }));
  },
  layout(checked, admitted) {
    return aieLayout(checked, admitted);
  },
  compile(checked, _plan, unit) {
    const r = aieRegions(checked)[unit];
    if (!r) throw new RangeError(`the program has no region ${unit}`);
    return linkRegion(regionManifest(checked, r)).bytes;
  },
};

// What `plan` shows of the regions: each one's equations, usage, tiles and host arenas.
function aieLayout(checked: CheckedProgram, admitted: boolean): Layout {
  const max = AIE_BOUNDS.contexts;
  if (!admitted) return { regions: [], contexts: { needed: 0, max } };
  try {
    const regions = planRegions(checked, { bounds: AIE_BOUNDS }).map((r): RegionSummary => ({
      index: r.index, eqns: [...r.eqns], usage: r.usage, closedBy: r.closedBy,
      tiles: r.cores.map((c) => ({ eqn: c.eqn, tile: c.tile })),
      arenas: r.arenas.map((a, i) => ({
        name: a.name, direction: a.direction, bytes: a.bytes,
        tensors: r.args.filter((g) => g.arena === i).map((g) => ({ value: g.name, offset: g.offset, bytes: g.bytes })),
      })),
    }));
    return { regions, contexts: { needed: regions.length, max } };
  } catch (e) {
    if (e instanceof RegionLimit) return { regions: [], limit: e, contexts: { needed: 0, max } };
    throw e;
  }
}
