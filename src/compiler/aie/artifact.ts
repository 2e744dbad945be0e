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
 * manifest as UTF-8 JSON (AieManifest). Everything a loader needs is in the manifest.
 */
import type { DType, Shape } from '../../ir/types.js';
import type { Operand } from '../../ir/types.js';

export const AIE_ARTIFACT_MAGIC = 'NPUOAIE2';
export const AIE_ARTIFACT_VERSION = 1;

/** Where a core reads an operand from, or writes its result to. */
export type Endpoint =
  /** A host arena slot: an argument of the artifact. */
  | { readonly kind: 'host'; readonly arena: number; readonly offset: number; readonly value: string }
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
  /** Tile-local bytes the core needs: its fifo buffers (double-buffered) and its stack. */
  readonly localBytes: number;
}

/** A tile-to-tile ObjectFifo. */
export interface AieFifo {
  readonly name: string;
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
  readonly program: string;
  readonly region: number;
  readonly eqns: readonly number[];
  readonly cores: readonly AieCore[];
  readonly fifos: readonly AieFifo[];
  readonly arenas: readonly AieArena[];
  readonly args: readonly AieArg[];
  readonly usage: AieUsage;
  /** The IRON design (Python, mlir-aie's IRON API) that builds this region. */
  readonly iron: string;
  /** Each kernel's C++ source by symbol: the ordinary kernel body, its thread grid turned into loops. */
  readonly kernels: Readonly<Record<string, string>>;
  /** The runtime sequence the host issues per run (DMA in, core starts, DMA out, sync), in order. */
  readonly instructions: readonly string[];
  /** How it was linked: 'aiecc' when the real toolchain ran, else 'simulated'. */
  readonly linked: 'aiecc' | 'simulated';
}

export type { Operand };
