/**
 * Turns a decoded manifest into the steps the simulated array runs, refusing at load (LoadFailed) what
 * the hardware could not run: a region past the measured bounds, a core whose op, dtypes or attributes
 * no core kernel implements, a host endpoint that is no argument, a fifo read before any core wrote it.
 * Checking all of it at load keeps run() to the failures the documents list for a run.
 */
import { LoadFailed } from '../../errors/index.js';
import type { AieArg, AieCore, AieManifest, Endpoint } from '../../compiler/aie/artifact.js';
import { manifestUsage } from '../../compiler/aie/link.js';
import type { DType, RowBody, Shape } from '../../ir/types.js';
import { dtypeBytes, numel } from '../../ir/types.js';
import { XDNA2_BOUNDS } from '../../targets/xdna2/index.js';
import type { CoreMath } from './coreMath.js';
import type { CoreValue } from './kernels.js';
import { binaryKernel, gatherKernel, isCoreBinary, isCoreUnary, rowMaxKernel, rowSumKernel, unaryKernel } from './kernels.js';
import { isCoreRowStep, rowKernelCore } from './rowKernel.js';

/** Where a core's operand comes from, resolved at load. */
type Source =
  | { readonly kind: 'host'; readonly arg: AieArg }
  | { readonly kind: 'fifo'; readonly fifo: number }
  | { readonly kind: 'literal'; readonly bytes: Uint8Array };

/** Where a core's result goes, resolved at load: a host slot (and maybe a fifo too), or a fifo. */
type Sink = { readonly kind: 'host'; readonly arg: AieArg; readonly fifo?: number } | { readonly kind: 'fifo'; readonly fifo: number };

/** One core, ready to run: its sources, its sinks, and its kernel over the operands' bytes. */
export interface CoreStep {
  readonly core: AieCore;
  readonly sources: readonly Source[];
  readonly sinks: readonly Sink[];
  readonly compute: (m: CoreMath, ins: readonly CoreValue[]) => Uint8Array[];
}

function bytesOf(t: { readonly dtype: DType; readonly shape: Shape }): number {
  return numel(t.shape) * dtypeBytes(t.dtype);
}

function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** The bytes of a literal as the core's literal pool holds it. */
function literalBytes(lit: number, dtype: DType): Uint8Array | undefined {
  const out = new Uint8Array(4);
  if (dtype === 'f32') new DataView(out.buffer).setFloat32(0, lit, true);
  else if (dtype === 'i32') new DataView(out.buffer).setInt32(0, lit, true);
  else return undefined;
  return out;
}

/** Checks a manifest against the hardware and the core kernels; returns the cores' steps in order. */
export function planCores(m: AieManifest, device: string): CoreStep[] {
  const fail = (detail: string): never => { throw new LoadFailed(device, detail); };
  checkBounds(m, fail);
  const written = new Set<number>();
  const steps = m.cores.map((core, i) => {
    const at = `core ${i} (${core.op}, equation ${core.eqn})`;
    const sources = core.ins.map((e, j) => source(m, e, core.inTypes[j]!, `${at} operand ${j}`, written, fail));
    const sinks = core.outs.map((e, j) => sink(m, e, core.outTypes[j]!, `${at} result ${j}`, fail));
    for (const s of sinks) if (s.fifo !== undefined) written.add(s.fifo);
    return { core, sources, sinks, compute: kernelOf(core, at, fail) };
  });
  // An output no core writes would hand the host whatever its buffer held: a broken link, not a run.
  const hostOuts = new Set(steps.flatMap((s) => s.sinks.flatMap((k) => (k.kind === 'host' ? [k.arg] : []))));
  for (const a of m.args) if (a.direction === 'out' && !hostOuts.has(a)) fail(`no core writes the output argument ${a.name}`);
  return steps;
}

function checkBounds(m: AieManifest, fail: (d: string) => never): void {
  const b = XDNA2_BOUNDS;
  const tiles = new Set(m.cores.map((c) => `${c.tile[0]},${c.tile[1]}`));
  if (tiles.size !== m.cores.length) fail('two cores share one compute tile');
  if (tiles.size > b.tiles) fail(`the region uses ${tiles.size} compute tiles, the array has ${b.tiles}`);
  m.cores.forEach((c, i) => {
    if (c.localBytes > b.tileLocalBytes) fail(`core ${i} needs ${c.localBytes} tile-local bytes, a tile has ${b.tileLocalBytes}`);
  });
  // Counted from the cores and arguments, never from the manifest's own `usage` claim.
  const u = manifestUsage(m).usage;
  if (u.streamsIn > b.streamsIn) fail(`the region reads ${u.streamsIn} host streams, the shim has ${b.streamsIn}`);
  if (u.streamsOut > b.streamsOut) fail(`the region writes ${u.streamsOut} host streams, the shim has ${b.streamsOut}`);
  if (u.streamsPerTile > b.streamsPerTile) fail(`a tile terminates ${u.streamsPerTile} host streams, a tile has ${b.streamsPerTile}`);
  m.args.forEach((a) => {
    const arena = m.arenas[a.arena];
    if (!arena) fail(`argument ${a.name} sits in arena ${a.arena}, which the manifest does not declare`);
    if (a.offset + a.bytes > arena.bytes) fail(`argument ${a.name} runs past the end of its arena`);
    if (a.bytes !== bytesOf(a)) fail(`argument ${a.name} is ${a.bytes} bytes, its type needs ${bytesOf(a)}`);
  });
}

function hostArg(m: AieManifest, e: { arena: number; offset: number; value: string }, dir: 'in' | 'out' | 'any'): AieArg | undefined {
  const here = m.args.filter((a) => a.arena === e.arena && a.offset === e.offset && (dir === 'any' || a.direction === dir));
  return here.find((a) => a.name === e.value) ?? here[0];
}

function source(m: AieManifest, e: Endpoint, t: { dtype: DType; shape: Shape }, at: string, written: ReadonlySet<number>, fail: (d: string) => never): Source {
  switch (e.kind) {
    case 'host': {
      // A core may read a value an earlier core of the region wrote to the host (a result it also uses).
      const arg = hostArg(m, e, 'any') ?? fail(`${at} reads arena ${e.arena} at ${e.offset}, which is no argument`);
      if (arg.dtype !== t.dtype || !sameShape(arg.shape, t.shape)) fail(`${at} reads ${arg.name} as another type`);
      return { kind: 'host', arg };
    }
    case 'fifo':
      if (!m.fifos[e.fifo]) fail(`${at} reads fifo ${e.fifo}, which the manifest does not declare`);
      if (!written.has(e.fifo)) fail(`${at} reads fifo ${e.fifo} before any earlier core writes it`);
      return { kind: 'fifo', fifo: e.fifo };
    case 'literal': {
      if (t.shape.length !== 0) fail(`${at} is a literal of a non-scalar type`);
      const bytes = literalBytes(e.lit, e.dtype) ?? fail(`${at}: the core holds f32 and i32 literals, not ${e.dtype}`);
      return { kind: 'literal', bytes };
    }
  }
}

function sink(m: AieManifest, e: Endpoint, t: { dtype: DType; shape: Shape }, at: string, fail: (d: string) => never): Sink {
  switch (e.kind) {
    case 'host': {
      const arg = hostArg(m, e, 'out') ?? fail(`${at} writes arena ${e.arena} at ${e.offset}, which is no output argument`);
      if (arg.bytes !== bytesOf(t)) fail(`${at} writes ${bytesOf(t)} bytes into ${arg.name} of ${arg.bytes}`);
      // A value the host sees and a later core reads may also leave by a fifo.
      if (e.fifo === undefined) return { kind: 'host', arg };
      if (!m.fifos[e.fifo]) fail(`${at} also writes fifo ${e.fifo}, which the manifest does not declare`);
      return { kind: 'host', arg, fifo: e.fifo };
    }
    case 'fifo':
      if (!m.fifos[e.fifo]) fail(`${at} writes fifo ${e.fifo}, which the manifest does not declare`);
      return { kind: 'fifo', fifo: e.fifo };
    case 'literal':
      return fail(`${at} writes to a literal`);
  }
}

/** The kernel of one core, after checking the core kernels implement its op on its types. */
function kernelOf(core: AieCore, at: string, fail: (d: string) => never): CoreStep['compute'] {
  const ins = core.inTypes;
  const out = core.outTypes;
  const f32In = () => { if (!ins.every((t) => t.dtype === 'f32')) fail(`${at}: the core computes ${core.op} on f32 only`); };
  const one = (n: number) => { if (ins.length !== n || out.length !== 1) fail(`${at}: ${core.op} takes ${n} operands and gives one result`); };
  if (isCoreBinary(core.op)) {
    one(2);
    f32In();
    const n = numel(out[0]!.shape);
    const fits = (s: Shape) => s.length === 0 || sameShape(s, out[0]!.shape);
    if (!ins.every((t) => fits(t.shape))) fail(`${at}: operands are neither the result's shape nor scalars`);
    if (out[0]!.dtype !== (core.op === 'ge' ? 'bool' : 'f32')) fail(`${at}: ${core.op} gives ${core.op === 'ge' ? 'bool' : 'f32'}`);
    const op = core.op;
    return (mm, v) => [binaryKernel(op, mm, v[0]!.bytes, v[1]!.bytes, n)];
  }
  if (isCoreUnary(core.op)) {
    one(1);
    f32In();
    const op = core.op;
    return (mm, v) => [unaryKernel(op, mm, v[0]!.bytes)];
  }
  switch (core.op) {
    case 'reduce_sum':
    case 'reduce_max': {
      one(1);
      f32In();
      const shape = ins[0]!.shape;
      const axes = core.attrs['axes'];
      if (!Array.isArray(axes) || axes.length !== 1 || axes[0] !== shape.length - 1) fail(`${at}: the core reduces the last axis only`);
      return core.op === 'reduce_sum' ? (mm, v) => [rowSumKernel(mm, v[0]!.bytes, shape)] : (_mm, v) => [rowMaxKernel(v[0]!.bytes, shape)];
    }
    case 'gather': {
      one(2);
      const axis = core.attrs['axis'];
      if (!Number.isInteger(axis) || (axis as number) < 0 || (axis as number) >= ins[0]!.shape.length) fail(`${at}: gather needs an axis of its source`);
      if (ins[0]!.dtype !== 'f32' && ins[0]!.dtype !== 'i32') fail(`${at}: the core gathers f32 or i32 elements`);
      if (ins[1]!.dtype !== 'i32') fail(`${at}: gather indices are i32`);
      return (_mm, v) => [gatherKernel(v[0]!, v[1]!.bytes, axis as number)];
    }
    case 'row_kernel': {
      f32In();
      const body = core.attrs['body'] as RowBody | undefined;
      if (!body || !Array.isArray(body.steps) || !Array.isArray(body.params) || !Array.isArray(body.results)) fail(`${at}: row_kernel has no body`);
      for (const s of body.steps) if (!isCoreRowStep(s.op)) fail(`${at}: the core has no row step ${s.op}`);
      if (body.params.length !== ins.length || body.results.length !== out.length) fail(`${at}: the body does not match the core's operands`);
      const rows = ins.reduce((a, t) => (t.shape.length > a.length ? t.shape : a), ins[0]?.shape ?? []);
      const vector = out.map((t) => t.shape.length === rows.length);
      return (mm, v) => rowKernelCore(mm, body, v.map((x) => ({ bytes: x.bytes, shape: x.shape })), rows, vector);
    }
    default:
      return fail(`${at}: no core kernel implements ${core.op}`);
  }
}
