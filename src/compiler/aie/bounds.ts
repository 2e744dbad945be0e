/**
 * The region bounds the compiler splits at, and the fixed numbers of the resource model
 * (docs/AIE_REGIONS.md). The measured numbers belong to the target (src/targets/xdna2.ts XDNA2_BOUNDS);
 * this file re-exports them as AIE_BOUNDS so the region compiler reads them from one place.
 */
import { XDNA2_BOUNDS } from '../../targets/xdna2/index.js';

/** What one region may use, and how many regions (hardware contexts) a device holds. */
export interface AieBounds {
  /** Compute tiles, one core each. */
  readonly tiles: number;
  /** Host tensors a region reads: one shim MM2S stream each. */
  readonly streamsIn: number;
  /** Host tensors a region writes: one shim S2MM stream each. */
  readonly streamsOut: number;
  /** Host streams one core may terminate in each direction (a tile has 2 input and 2 output DMA channels). */
  readonly streamsPerTile: number;
  /** Bytes of data memory one core may use. */
  readonly tileLocalBytes: number;
  /** Loaded artifacts the device holds at once. */
  readonly contexts: number;
}

/** The bounds measured on the XDNA2 NPU: an artifact at each links and runs, one past is refused. */
export const AIE_BOUNDS: AieBounds = XDNA2_BOUNDS;

/** Every core's fixed stack, counted against its tile-local bytes. */
export const STACK_BYTES = 1024;
/** ObjectFifo depth: every fifo is double-buffered, so a core holds two chunks of each operand. */
export const FIFO_DEPTH = 2;
/** Host tensors sit at offsets aligned to this many bytes (a shim DMA burst). */
const ARENA_ALIGN = 64;
/** Compute rows per column on NPU2 (rows 2..5; row 0 is the shim, row 1 the memtile). */
const CORE_ROWS = 4;
/** The row of the first compute tile. */
const FIRST_CORE_ROW = 2;

/** The compute tile [column, row] of the region's core `i`: columns filled bottom to top, left to right. */
export function tileOf(i: number): readonly [number, number] {
  return [Math.floor(i / CORE_ROWS), FIRST_CORE_ROW + (i % CORE_ROWS)];
}

/** The shim [column, channel] of host stream `i` of one direction: two channels per shim column. */
export function shimOf(i: number): readonly [number, number] {
  return [Math.floor(i / 2), i % 2];
}

/** `n` rounded up to a multiple of ARENA_ALIGN. */
export function alignUp(n: number): number {
  return Math.ceil(n / ARENA_ALIGN) * ARENA_ALIGN;
}
