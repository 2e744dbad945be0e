/**
 * The XDNA2 (AIE2P) artifact: one region of a program, linked. This is the contract between the region
 * compiler (src/compiler/aie/), which writes it, and the device that loads it (the simulator in
 * src/devices/xdna2/, later the XRT addon, which would load `xclbin` and `instructions` instead).
 *
 * A region is a contiguous run of planned equations. Each equation is one core on its own compute tile;
 * a value only the region's own equations read moves tile to tile through an ObjectFifo and never
 * reaches host memory; every other tensor the region reads or writes sits at a fixed offset in one of a
 * few host arenas, and is an argument (binding) of the artifact.
 *
 * Bytes: 'NPUOAIE2' (8), u32 format version, u32 manifest length, u32 CRC-32 of the manifest, then the
 * manifest as UTF-8 JSON (AieManifest). Everything a loader needs is in the manifest. All integers are
 * little-endian. encodeAieArtifact / decodeAieArtifact (src/compiler/aie/link.ts) write and read it.
 *
 * Changes by the region compiler (format version still 1):
 * - Numbers JSON cannot hold (NaN, Infinity, -Infinity, -0: literals, body literals in `attrs`) are
 *   written as `{"$f64": "nan" | "inf" | "-inf" | "-0"}` (the cache's canonical tags); decodeAieArtifact
 *   restores them, so a decoded manifest holds plain numbers. aieJsonReplacer / aieJsonReviver below
 *   are the two halves; pass the reviver to JSON.parse.
 * - A host endpoint may carry `fifo`: the core's result is drained to its host slot AND feeds that
 *   tile-to-tile fifo (a broadcast in the IRON design), because the region's later cores read it too.
 *   Those later cores' endpoints name the host slot (the output argument), not the fifo: the bytes are
 *   the same, and cores run in `cores` order. A `fifo` endpoint is only ever a value no host sees.
 * - AieFifo gained `value`; its `from` and `to` are indices into `cores`, `bytes` is one element (one
 *   row of the value: its last axis, or one element for a scalar), `depth` the element count.
 * - AieArg.offset is aligned to 64 bytes; arena indices are dense (0 = inputs when the region reads any
 *   host tensor, then outputs); an arena's `bytes` is a multiple of 64.
 * - AieManifest gained `compiler`, `closedBy` (the bound that closed the region, or 'end') and `bounds`
 *   (what link checked it against); with `linked: 'aiecc'` also `xclbin` and `insts` (base64).
 * - AieCore.localBytes also counts gather's whole tables and a row kernel's body temporaries.
 */
import type { DType, Shape } from '../../ir/types.js';
import type { AieBounds } from './bounds.js';

export const AIE_ARTIFACT_MAGIC = 'NPUOAIE2';
export const AIE_ARTIFACT_VERSION = 1;

/** Where a core reads an operand from, or writes its result to. */
export type Endpoint =
  /** A host arena slot: an argument of the artifact. */
  | { readonly kind: 'host'; readonly arena: number; readonly offset: number; readonly value: string; readonly fifo?: number }
  /** An ObjectFifo between two cores of this region (the value never reaches host memory). */
  | { readonly kind: 'fifo'; readonly fifo: number; readonly value: string }
  /** An inline scalar literal, compiled into the core. */
  | { readonly kind: 'literal'; readonly lit: number; readonly dtype: DType };

/** One core: one equation of the region on one compute tile. */
export interface AieCore {
  /** The compute tile, [column, row]. */
  readonly tile: readonly [number, number];
  /** The equation's index in the program. */
  readonly eqn: number;
  readonly op: string;
  /** The equation's attributes, decoded (axes, axis, body, ...). */
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly ins: readonly Endpoint[];
  readonly inTypes: readonly { readonly dtype: DType; readonly shape: Shape }[];
  readonly outs: readonly Endpoint[];
  readonly outTypes: readonly { readonly dtype: DType; readonly shape: Shape }[];
  /** The kernel symbol the core calls (its source is in `kernels`). */
  readonly kernel: string;
  /** Tile-local bytes the core needs: its fifo buffers (double-buffered), stack, tables and temporaries. */
  readonly localBytes: number;
}

/** A tile-to-tile ObjectFifo: `from` and `to` are indices into `cores`; `bytes` is one element (a row). */
export interface AieFifo {
  readonly name: string;
  /** The program value it carries. */
  readonly value: string;
  readonly from: number;
  readonly to: readonly number[];
  readonly bytes: number;
  readonly depth: number;
}

/** A host arena: one block of host memory; its tensors sit at fixed offsets. */
export interface AieArena {
  readonly name: string;
  readonly bytes: number;
  readonly direction: 'in' | 'out';
}

/** One argument (binding) of the artifact: a tensor in a host arena. */
export interface AieArg {
  /** The binding name: the program value's name. */
  readonly name: string;
  readonly direction: 'in' | 'out';
  readonly dtype: DType;
  readonly shape: Shape;
  readonly bytes: number;
  readonly arena: number;
  readonly offset: number;
}

/** What the region uses against the measured bounds. */
export interface AieUsage {
  readonly tiles: number;
  readonly streamsIn: number;
  readonly streamsOut: number;
  /** The most streams any one tile uses. */
  readonly streamsPerTile: number;
  /** The most tile-local bytes any one tile uses. */
  readonly tileLocalBytes: number;
}

export interface AieManifest {
  readonly part: 'aie2p';
  readonly compiler: { readonly name: string; readonly version: string };
  readonly program: string;
  readonly region: number;
  readonly eqns: readonly number[];
  readonly cores: readonly AieCore[];
  readonly fifos: readonly AieFifo[];
  readonly arenas: readonly AieArena[];
  readonly args: readonly AieArg[];
  readonly usage: AieUsage;
  /** The bound the region's next equation would have broken, or 'end' for the program's last region. */
  readonly closedBy: 'tiles' | 'streams-in' | 'streams-out' | 'streams-per-tile' | 'tile-local-bytes' | 'end';
  /** The bounds link checked the region against. */
  readonly bounds: AieBounds;
  /** The IRON design (Python, mlir-aie's IRON API) that builds this region. */
  readonly iron: string;
  /** Each kernel's C++ source by symbol: the ordinary kernel body, its thread grid turned into loops. */
  readonly kernels: Readonly<Record<string, string>>;
  /** The runtime sequence the host issues per run (DMA in, core starts, DMA out, sync), in order. */
  readonly instructions: readonly string[];
  /** How it was linked: 'aiecc' when the real toolchain ran, else 'simulated'. */
  readonly linked: 'aiecc' | 'simulated';
  /** With `linked: 'aiecc'`: the xclbin and the instruction stream aiecc built, base64. */
  readonly xclbin?: string;
  readonly insts?: string;
}


const F64_TAG = '$f64';

/** JSON.stringify replacer of the manifest: tags NaN, the infinities and -0 (plain JSON loses them). */
export function aieJsonReplacer(_key: string, v: unknown): unknown {
  if (typeof v !== 'number' || (Number.isFinite(v) && !Object.is(v, -0))) return v;
  return { [F64_TAG]: Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf' : v === -Infinity ? '-inf' : '-0' };
}

/** JSON.parse reviver of the manifest: restores the numbers aieJsonReplacer tagged; throws on an unknown tag. */
export function aieJsonReviver(_key: string, v: unknown): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  if (keys.length !== 1 || keys[0] !== F64_TAG) return v;
  switch ((v as Record<string, unknown>)[F64_TAG]) {
    case 'nan': return NaN;
    case 'inf': return Infinity;
    case '-inf': return -Infinity;
    case '-0': return -0;
    default: throw new Error(`unknown ${F64_TAG} tag in an AIE manifest`);
  }
}
