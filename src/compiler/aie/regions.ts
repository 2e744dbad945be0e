/**
 * Splitting a planned program into AIE regions (docs/AIE_REGIONS.md). A region is a contiguous run of
 * equations: one artifact, one hardware context, one run per step. Each equation is one core on its own
 * compute tile. A value only the region's own equations read moves tile to tile through an ObjectFifo;
 * every other tensor the region reads (program args, earlier regions' values) or writes (results, state
 * next values, values later equations read, values nothing reads) is a host tensor at a fixed, 64-byte
 * aligned offset in a host arena: arena 0 holds the inputs, the next the outputs (an empty arena is
 * left out, so indices stay dense).
 *
 * Resource model, checked against AieBounds in this order:
 *   tiles             cores (= equations)
 *   streams-in        distinct host tensors read: one shim MM2S stream each, broadcast to every reader
 *   streams-out       host tensors written: one shim S2MM stream each
 *   streams-per-tile  per core, the larger of its host inputs and its host outputs (a tile has two input
 *                     and two output DMA channels, so directions are counted separately); tile-to-tile
 *                     fifos are not counted
 *   tile-local-bytes  per core, coreModel's localBytes (double-buffered row chunks, stack, tables)
 * A region closes where adding the next equation would break a bound; an equation that breaks one even
 * alone is RegionLimit naming the limit, what it needs and the bound.
 */
import type { RegionLimitName } from '../../errors/index.js';
import { RegionLimit } from '../../errors/index.js';
import type { CheckedProgram } from '../../ir/checked.js';
import { dtypeBytes, eqnOuts, isLiteral, numel } from '../../ir/types.js';
import { elementType } from '../../ir/ops.js';
import type { AieArena, AieArg, AieFifo, AieUsage } from './artifact.js';
import type { AieBounds } from './bounds.js';
import { AIE_BOUNDS, FIFO_DEPTH, alignUp, tileOf } from './bounds.js';
import type { CoreModel } from './coreModel.js';
import { coreModel } from './coreModel.js';

/** One core of a region: its equation, tile, model and the host tensors it touches. */
interface RegionCore {
  readonly eqn: number;
  readonly tile: readonly [number, number];
  readonly model: CoreModel;
  /** Values it reads from host streams, and writes to them. */
  readonly hostIn: readonly string[];
  readonly hostOut: readonly string[];
}

/** A planned region: what becomes one artifact. Fifo `from`/`to` are indices into `cores`. */
export interface RegionPlan {
  readonly index: number;
  readonly eqns: readonly number[];
  readonly cores: readonly RegionCore[];
  readonly fifos: readonly AieFifo[];
  readonly arenas: readonly AieArena[];
  readonly args: readonly AieArg[];
  readonly usage: AieUsage;
  /** The bound the next equation would have broken, or 'end' for the program's last region. */
  readonly closedBy: RegionLimitName | 'end';
}

/** What a planner needs of the program beyond one region: who reads what, and what must reach host. */
interface Context {
  readonly checked: CheckedProgram;
  readonly models: readonly CoreModel[];
  readonly readers: ReadonlyMap<string, readonly number[]>;
  readonly needed: ReadonlySet<string>;
}

/** A bound broken by a region: which, by which equation, how much it needs. */
export interface Breach {
  readonly limit: RegionLimitName;
  readonly eqn: number;
  readonly needed: number;
  readonly max: number;
}

function contextOf(checked: CheckedProgram): Context {
  const readers = new Map<string, number[]>();
  for (const ce of checked.eqns) {
    for (const o of ce.eqn.in) {
      if (isLiteral(o)) continue;
      const list = readers.get(o) ?? [];
      if (list[list.length - 1] !== ce.index) list.push(ce.index);
      readers.set(o, list);
    }
  }
  const needed = new Set([...checked.program.results, ...Object.values(checked.program.state)]);
  return { checked, models: checked.eqns.map(coreModel), readers, needed };
}

function sanitize(v: string): string {
  return v.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Places `args` (already ordered) at aligned offsets in one arena; returns the arena's bytes. */
function place(specs: readonly Omit<AieArg, 'arena' | 'offset'>[], arena: number, out: AieArg[]): number {
  let offset = 0;
  for (const s of specs) {
    out.push({ ...s, arena, offset });
    offset = alignUp(offset + s.bytes);
  }
  return offset;
}

/** The region of equations [start, end] (inclusive), numbered `index`, with `closedBy` unset. */
function regionOf(ctx: Context, start: number, end: number, index: number): Omit<RegionPlan, 'closedBy'> {
  const { checked, models, readers, needed } = ctx;
  const inside = (e: number) => e >= start && e <= end;
  const producer = new Map<string, number>();
  for (let e = start; e <= end; e++) for (const v of eqnOuts(checked.eqns[e]!.eqn)) producer.set(v, e - start);
  const typeOf = (v: string) => elementType(checked.types.get(v)!, v);
  const spec = (v: string, direction: 'in' | 'out') => {
    const t = typeOf(v);
    return { name: v, direction, dtype: t.dtype, shape: [...t.shape], bytes: numel(t.shape) * dtypeBytes(t.dtype) };
  };
  const inputs: string[] = [];
  const outputs: string[] = [];
  const fifos: AieFifo[] = [];
  const cores: RegionCore[] = [];
  for (let e = start; e <= end; e++) {
    const m = models[e]!;
    const hostIn = m.reads.filter((r) => !producer.has(r.value)).map((r) => r.value);
    for (const v of hostIn) if (!inputs.includes(v)) inputs.push(v);
    const hostOut: string[] = [];
    for (const w of m.writes) {
      const rs = readers.get(w.value) ?? [];
      const local = rs.filter(inside).map((r) => r - start);
      // A value nothing in the region reads still leaves the array: a core cannot drop its output.
      if (needed.has(w.value) || rs.some((r) => !inside(r)) || local.length === 0) hostOut.push(w.value);
      if (local.length > 0) {
        fifos.push({ name: `of${fifos.length}_${sanitize(w.value)}`, value: w.value, from: e - start, to: local, bytes: w.chunk * dtypeBytes(w.dtype), depth: FIFO_DEPTH });
      }
    }
    outputs.push(...hostOut);
    cores.push({ eqn: e, tile: tileOf(e - start), model: m, hostIn, hostOut });
  }
  const args: AieArg[] = [];
  const arenas: AieArena[] = [];
  if (inputs.length > 0) arenas.push({ name: 'arena_in', bytes: place(inputs.map((v) => spec(v, 'in')), arenas.length, args), direction: 'in' });
  if (outputs.length > 0) arenas.push({ name: 'arena_out', bytes: place(outputs.map((v) => spec(v, 'out')), arenas.length, args), direction: 'out' });
  const usage: AieUsage = {
    tiles: cores.length,
    streamsIn: inputs.length,
    streamsOut: outputs.length,
    streamsPerTile: Math.max(0, ...cores.map((c) => Math.max(c.hostIn.length, c.hostOut.length))),
    tileLocalBytes: Math.max(0, ...cores.map((c) => c.model.localBytes)),
  };
  return { index, eqns: cores.map((c) => c.eqn), cores, fifos, arenas, args, usage };
}

/**
 * The first bound a region breaks, in the model's order; per-core limits name the offending core's
 * equation, region-wide ones the region's last.
 */
export function breachOf(usage: AieUsage, cores: readonly { readonly eqn: number; readonly streams: number; readonly localBytes: number }[], bounds: AieBounds): Breach | undefined {
  const last = cores[cores.length - 1]?.eqn ?? 0;
  if (usage.tiles > bounds.tiles) return { limit: 'tiles', eqn: last, needed: usage.tiles, max: bounds.tiles };
  if (usage.streamsIn > bounds.streamsIn) return { limit: 'streams-in', eqn: last, needed: usage.streamsIn, max: bounds.streamsIn };
  if (usage.streamsOut > bounds.streamsOut) return { limit: 'streams-out', eqn: last, needed: usage.streamsOut, max: bounds.streamsOut };
  const wide = cores.find((c) => c.streams > bounds.streamsPerTile);
  if (wide) return { limit: 'streams-per-tile', eqn: wide.eqn, needed: wide.streams, max: bounds.streamsPerTile };
  const big = cores.find((c) => c.localBytes > bounds.tileLocalBytes);
  if (big) return { limit: 'tile-local-bytes', eqn: big.eqn, needed: big.localBytes, max: bounds.tileLocalBytes };
  return undefined;
}

function breach(r: Omit<RegionPlan, 'closedBy'>, bounds: AieBounds): Breach | undefined {
  const cores = r.cores.map((c) => ({ eqn: c.eqn, streams: Math.max(c.hostIn.length, c.hostOut.length), localBytes: c.model.localBytes }));
  return breachOf(r.usage, cores, bounds);
}

/** Splits a checked program into regions under `bounds`; RegionLimit for an equation that fits no region. */
export function planRegions(checked: CheckedProgram, opts: { readonly bounds?: AieBounds } = {}): RegionPlan[] {
  const bounds = opts.bounds ?? AIE_BOUNDS;
  const ctx = contextOf(checked);
  const n = checked.eqns.length;
  const out: RegionPlan[] = [];
  let start = 0;
  let current: Omit<RegionPlan, 'closedBy'> | undefined;
  for (let e = 0; e < n; e++) {
    const grown = regionOf(ctx, start, e, out.length);
    const broken = breach(grown, bounds);
    if (!broken) {
      current = grown;
      continue;
    }
    if (current === undefined) throw new RegionLimit(broken.eqn, broken.limit, broken.needed, broken.max);
    out.push({ ...current, closedBy: broken.limit });
    start = e;
    const alone = regionOf(ctx, e, e, out.length);
    const refused = breach(alone, bounds);
    if (refused) throw new RegionLimit(refused.eqn, refused.limit, refused.needed, refused.max);
    current = alone;
  }
  if (current) out.push({ ...current, closedBy: 'end' });
  return out;
}
