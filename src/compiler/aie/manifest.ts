/**
 * A planned region as an unlinked manifest: its cores with their endpoints, fifos, arenas, arguments,
 * the IRON design, the kernels and the instruction stream. link() checks it against the bounds and
 * turns it into artifact bytes.
 */
import type { CheckedProgram } from '../../ir/checked.js';
import { elementDtype, eqnOuts, isLiteral } from '../../ir/types.js';
import type { AieCore, AieManifest, Endpoint } from './artifact.js';
import { AIE_BOUNDS } from './bounds.js';
import { instructionStream } from './instructions.js';
import { ironDesign } from './iron.js';
import { coreKernel } from './kernels.js';
import type { RegionPlan } from './regions.js';

/** The compiler identity recorded in every cache key and manifest. */
export const AIE_COMPILER = { name: 'poot-aie', version: '1' } as const;

/** The manifest of one planned region, before link (`linked: 'simulated'` until a toolchain runs). */
export function regionManifest(checked: CheckedProgram, r: RegionPlan): AieManifest {
  const kernels = r.cores.map((c) => coreKernel(checked.eqns[c.eqn]!, c.model));
  const argOf = new Map(r.args.map((a) => [`${a.direction}:${a.name}`, a]));
  const fifoOf = new Map(r.fifos.map((f, i) => [f.value, i]));
  const host = (direction: 'in' | 'out', v: string): Endpoint | undefined => {
    const a = argOf.get(`${direction}:${v}`);
    if (!a) return undefined;
    const fifo = direction === 'out' ? fifoOf.get(v) : undefined;
    return fifo === undefined ? { kind: 'host', arena: a.arena, offset: a.offset, value: v } : { kind: 'host', arena: a.arena, offset: a.offset, value: v, fifo };
  };
  const cores: AieCore[] = r.cores.map((c, i) => {
    const ce = checked.eqns[c.eqn]!;
    const ins = ce.eqn.in.map((o, k): Endpoint => {
      if (isLiteral(o)) return { kind: 'literal', lit: o.lit, dtype: elementDtype(ce.ins[k]!.dtype, `literal ${k} of equation ${ce.index}`) };
      // A value the host also sees is read from its slot (artifact.ts); one only this region sees, by its fifo.
      const drained = argOf.get(`out:${o}`);
      if (drained) return { kind: 'host', arena: drained.arena, offset: drained.offset, value: o };
      const f = fifoOf.get(o);
      if (f !== undefined && r.fifos[f]!.to.includes(i)) return { kind: 'fifo', fifo: f, value: o };
      return host('in', o)!;
    });
    const outs = eqnOuts(ce.eqn).map((v): Endpoint => host('out', v) ?? { kind: 'fifo', fifo: fifoOf.get(v)!, value: v });
    return {
      tile: c.tile, eqn: c.eqn, op: ce.op, attrs: ce.eqn.attrs,
      ins, inTypes: ce.ins.map((t, k) => ({ dtype: elementDtype(t.dtype, `operand ${k} of equation ${ce.index}`), shape: [...t.shape] })),
      outs, outTypes: ce.outs.map((t) => ({ dtype: t.dtype, shape: [...t.shape] })),
      kernel: kernels[i]!.symbol, localBytes: c.model.localBytes,
    };
  });
  const sources: Record<string, string> = {};
  for (const k of kernels) sources[k.symbol] = k.source;
  return {
    part: 'aie2p',
    compiler: { ...AIE_COMPILER },
    program: checked.program.name,
    region: r.index,
    eqns: [...r.eqns],
    cores,
    fifos: r.fifos.map((f) => ({ name: f.name, value: f.value, from: f.from, to: [...f.to], bytes: f.bytes, depth: f.depth })),
    arenas: r.arenas.map((a) => ({ ...a })),
    args: r.args.map((a) => ({ ...a, shape: [...a.shape] })),
    usage: { ...r.usage },
    closedBy: r.closedBy,
    bounds: { ...AIE_BOUNDS },
    iron: ironDesign(checked, r, kernels),
    kernels: sources,
    instructions: instructionStream(r, kernels),
    linked: 'simulated',
  };
}
