/**
 * The exhaustive sweep's native addon (src/native/sweep/, binding.gyp target xdna2_sweep): the XDNA2
 * core's arithmetic ported to C++ bit for bit, and the f64 references from the C library, run over
 * ranges of f32 bit patterns on libuv's thread pool. Loaded through createRequire from this package's
 * build/Release/ (src/devices/native.ts NATIVE_BUILD_DIR), once per directory.
 *
 * Without it there is no slower path: a TypeScript sweep of 2^32 inputs takes hours, so `--exhaustive`
 * answers NoDevice saying how to build the addon (`npm run build:native`, which needs only a C++
 * compiler, no SDK).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { NATIVE_BUILD_DIR } from '../devices/native.js';
import { NoDevice } from '../errors/index.js';
import type { OpContract } from '../targets/contract.js';

/** The addon's file in a build directory. */
export const SWEEP_ADDON_FILE = 'xdna2_sweep.node';
/** The interface version this code speaks (sweepAddon.cc exports the one it was built with). */
const SWEEP_ADDON_VERSION = 1;

/** A contract as the addon reads it: the kinds of src/targets/contract.ts a unary or binary op uses. */
export interface NativeContract {
  readonly error: 'exact' | 'larger-operand' | 'absrel' | 'rel';
  readonly abs?: number;
  readonly rel?: number;
  readonly domain: 'any' | 'not-nan' | 'finite' | 'finite-normal-result' | 'interval' | 'positive-normal';
  readonly lo?: number;
  readonly hi?: number;
}

/**
 * @internal A deliberate defect, for negative controls: results `ulps` units off for |swept operand| in
 * one binade. `in`: 'core' (default) breaks the simulated core, the native and the TypeScript one alike,
 * so the contract check must catch it; 'native-core' breaks the native port only and 'reference' moves
 * libm's reference (by f64 units for an f64 one), so the cross-check must catch them.
 */
export interface SweepFault {
  /** The unbiased exponent e of the binade [2^e, 2^(e+1)) broken (both signs), -126..127. */
  readonly exponent: number;
  readonly ulps: number;
  readonly in?: 'core' | 'native-core' | 'reference';
}

/** A fault as the addon takes it: the biased exponent field. */
export interface NativeFault {
  readonly exponent: number;
  readonly ulps: number;
  readonly kind: 'core' | 'reference';
}

/** One chunk: the swept patterns [from, to) and how their results are judged. */
export interface ChunkSpec {
  readonly op: string;
  readonly contract: NativeContract;
  /** Round the reference to f32 once (an exact contract: the oracle's f32 result). */
  readonly rounded: boolean;
  readonly from: number;
  readonly to: number;
  /** Binary ops: the other operand's pattern, and whether the swept one is the second. */
  readonly fixed?: number;
  readonly sweepSecond?: boolean;
  readonly fault?: NativeFault;
  readonly maxShown: number;
  /** Run the portable lane routines even where the AVX-512 ones could run. */
  readonly generic?: boolean;
}

/** One judged element: operand patterns, the core's and the reference's results, the verdict. */
export interface NativeElement {
  readonly a: number;
  readonly b: number;
  readonly got: number;
  readonly want: number;
  readonly error: number;
  readonly bound: number;
  readonly ratio: number;
  /** A failure of add's and sub's exact-cancellation promise rather than of the bound. */
  readonly cancellation: boolean;
}

/** What one chunk found. */
interface ChunkTally {
  readonly elements: number;
  readonly inDomain: number;
  readonly failures: number;
  readonly worst: (NativeElement & { readonly bad: boolean }) | null;
  /** The chunk's first failures, at most spec.maxShown. */
  readonly shown: readonly NativeElement[];
  /** Failures by the swept operand's sign and exponent field (index: pattern >>> 23). */
  readonly binades: Float64Array;
}

/** The addon's functions. */
export interface SweepAddon {
  sweepChunk(spec: ChunkSpec): Promise<ChunkTally>;
  /** The core's results (f32) and the references on given patterns; `b` has one pattern or one per `a`. */
  evaluate(o: {
    readonly op: string; readonly rounded: boolean; readonly a: Uint32Array; readonly b?: Uint32Array;
    readonly sweepSecond?: boolean; readonly lanes?: boolean; readonly generic?: boolean; readonly fault?: ChunkSpec['fault'];
  }): { got: Float32Array; want: Float64Array };
  /** The lane routines (the sweep's) against the scalar port over [from, to): blocks compared, mismatches. */
  laneCheck(op: string, from: number, to: number, generic?: boolean): { blocks: number; mismatches: number; first: number };
  readonly version: number;
  /** The lane routines this CPU runs: AVX-512 ones (src/native/sweep/wide.cc) or the portable ones. */
  readonly isa: 'avx512' | 'generic';
}

const require = createRequire(import.meta.url);
const loaded = new Map<string, SweepAddon>();

const HOW = 'the exhaustive sweep runs the simulated XDNA2 core natively; build its addon with `npm run build:native` (it needs only a C++ compiler)';

/** The sweep addon in `dir`, loaded once; NoDevice saying how to build it when absent or unloadable. */
export function loadSweepAddon(dir: string = NATIVE_BUILD_DIR): SweepAddon {
  const path = join(dir, SWEEP_ADDON_FILE);
  const hit = loaded.get(path);
  if (hit) return hit;
  if (!existsSync(path)) throw new NoDevice('xdna2-sweep', `no ${SWEEP_ADDON_FILE} in this build: ${HOW}`);
  let addon: SweepAddon;
  try {
    addon = require(path) as SweepAddon;
  } catch (e) {
    throw new NoDevice('xdna2-sweep', `${SWEEP_ADDON_FILE} does not load (${e instanceof Error ? e.message : String(e)}): ${HOW}`);
  }
  if (addon.version !== SWEEP_ADDON_VERSION || typeof addon.sweepChunk !== 'function') {
    throw new NoDevice('xdna2-sweep', `${SWEEP_ADDON_FILE} is not this version's: rebuild it with \`npm run build:native\``);
  }
  loaded.set(path, addon);
  return addon;
}

/** An op's contract as the addon reads it; an Error (a defect) for a kind a unary or binary op never has. */
export function nativeContract(c: OpContract): NativeContract {
  const e = c.error;
  const d = c.domain;
  if (e.kind === 'sum-magnitude' || d.kind === 'finite-result' || d.kind === 'row-steps') {
    throw new Error(`the sweep judges elementwise contracts only, not ${e.kind} over ${d.kind}`);
  }
  return {
    error: e.kind,
    ...(e.kind === 'absrel' ? { abs: e.abs, rel: e.rel } : e.kind === 'rel' || e.kind === 'larger-operand' ? { rel: e.rel } : {}),
    domain: d.kind,
    ...(d.kind === 'interval' ? { lo: d.lo, hi: d.hi } : {}),
  };
}
