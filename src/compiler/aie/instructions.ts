/**
 * The instruction stream of a region as text: what the host's runtime sequence issues per run, in
 * order. Each host tensor is one shim DMA buffer descriptor (its arena, byte offset and size) on the
 * shim column and channel of its stream; cores start before any data moves; the run ends with a sync on
 * every output descriptor, so the host reads an arena only after the whole region wrote it.
 */
import { shimOf } from './bounds.js';
import type { CoreKernel } from './kernels.js';
import { fifoNames } from './iron.js';
import type { RegionPlan } from './regions.js';

/** The runtime sequence of region `r`, one instruction per line. */
export function instructionStream(r: RegionPlan, kernels: readonly CoreKernel[]): string[] {
  const fifo = fifoNames(r);
  const lines: string[] = [`region ${r.index} cores=${r.cores.length} arenas=${r.arenas.map((a) => `${a.name}:${a.bytes}`).join(',')}`];
  r.cores.forEach((c, i) => lines.push(`core.start tile=${c.tile[0]},${c.tile[1]} eqn=${c.eqn} kernel=${kernels[i]!.symbol}`));
  const ins = r.args.filter((a) => a.direction === 'in');
  const outs = r.args.filter((a) => a.direction === 'out');
  let bd = 0;
  const syncs: string[] = [];
  const dma = (dir: 'mm2s' | 's2mm', list: typeof r.args) => list.forEach((a, j) => {
    const [col, ch] = shimOf(j);
    lines.push(`dma.bd id=${bd} ${dir} shim=${col},${ch} arena=${a.arena} offset=${a.offset} bytes=${a.bytes} fifo=${fifo.get(a.name)!} value=${JSON.stringify(a.name)}`);
    lines.push(`dma.push id=${bd} shim=${col},${ch}`);
    if (dir === 's2mm') syncs.push(`dma.sync id=${bd} shim=${col},${ch}`);
    bd++;
  });
  dma('mm2s', ins);
  dma('s2mm', outs);
  lines.push(...syncs, 'done');
  return lines;
}
