/**
 * The host_kernels addon (src/native/host/, built by `npm ci` / `npm install` and by `npm run
 * build:native` into build/Release/), loaded through createRequire(import.meta.url) from this
 * package's own build/ (resolved from this file, never from the working directory). The addon is
 * handed the engine's error classes once, at load, so its refusals arrive already typed.
 *
 * Without the addon (a failed or skipped build) everything here answers NoDevice('host', why and how
 * to build it), and nothing else in the engine needs it.
 *
 * Environment: NPU_OFFLOAD_HOST_ISA forces a SIMD path (scalar, avx2, avx512) and
 * NPU_OFFLOAD_HOST_THREADS the thread team's size; both apply when the addon is first loaded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { IndexOutOfRange, IntegerDivideByZero, InvalidInput, InvalidOptions, NoDevice } from '../../errors/index.js';
import { abiMismatches, encodeKernels, hostWeightBytes, weightTypeId, type HostAbi, type HostWeightType, type KernelCall } from '../../compiler/host/kernelList.js';
import { NATIVE_BUILD_DIR } from '../native.js';
import { UNARY_OPS, type UnaryOp } from '../../ops/elementwise.js';

/** The SIMD paths, narrowest first. */
export const HOST_ISAS = ['scalar', 'avx2', 'avx512'] as const;
export type HostIsa = (typeof HOST_ISAS)[number];

/** What the addon reports: the path in use, the paths this CPU has, the thread team, and the call counters. */
export interface HostInfo {
  readonly isa: HostIsa;
  readonly available: readonly HostIsa[];
  readonly threads: number;
  /** runList calls so far in this thread: one per replayed step. */
  readonly calls: number;
  /** Kernels run by those calls. */
  readonly kernels: number;
  /**
   * The fixed mmap threshold of glibc's malloc the addon set at load (1 MiB: blocks that large go back to
   * the system when freed; docs/HOST.md), or 0 where it left malloc alone (not glibc,
   * MALLOC_MMAP_THRESHOLD_ set, or NPU_OFFLOAD_MALLOC=default).
   */
  readonly mmapThreshold: number;
}

/** A weight the kernels read in place (src/native/host/weight.h). */
export interface HostWeight {
  close(): void;
  describe(): { type: HostWeightType; k: number; n: number; bytes: number; mapped: boolean; closed: boolean };
}

interface NativeSpec {
  readonly type: number;
  readonly k: number;
  readonly n: number;
  readonly path?: string;
  readonly offset?: number;
  readonly length?: number;
  readonly bytes?: Uint8Array;
}

/** The addon's exports (src/native/host/addon.cc). */
interface HostAddon {
  setErrorClasses(classes: object): void;
  info(): HostInfo;
  setIsa(isa: string): HostIsa;
  setThreads(n: number): number;
  /** The arena: a Uint8Array, or a whole ArrayBuffer (one past 4 GiB, which no Uint8Array spans in Node 20). */
  runList(arena: Uint8Array | ArrayBuffer, list: Float64Array, weights?: readonly HostWeight[]): void;
  streamRead(bytes: Uint8Array, passes: number): { seconds: number; checksum: number };
  zeroBytes(arena: ArrayBuffer, offset: number, length: number): void;
  copyBytes(to: ArrayBuffer, at: number, from: ArrayBuffer, offset: number, length: number): void;
  setUnaryFault(op: number, ulps: number): void;
  setDropBlockFault(on: boolean): void;
  setAttentionFault(mode: number): void;
  abi(): HostAbi;
  setQ8RoundFault(on: boolean): void;
  readonly HostWeight: new (spec: NativeSpec) => HostWeight;
}

/** A weight as a byte range of a file: a GGUF or Q4NX tensor, N rows of K elements. */
export interface FileWeightSpec {
  readonly path: string;
  readonly offset: number;
  readonly length: number;
  readonly type: HostWeightType;
  readonly k: number;
  readonly n: number;
}

const FILE = 'host_kernels.node';
const TOOLS = '`npm run build:native` (needs a C++17 compiler, make and python3)';
const HOW = `build it with ${TOOLS}`;
const REBUILD = `rebuild it with ${TOOLS}`;
const require = createRequire(import.meta.url);
const loaded = new Map<string, HostKernels>();

/** The host kernels: weights, one-call step replay, and the SIMD path and thread team in use. */
export class HostKernels {
  /** @internal */
  constructor(private readonly addon: HostAddon) {}

  info(): HostInfo {
    return this.addon.info();
  }

  /**
   * Sets `length` bytes of `arena` from `offset` to zero, giving its whole pages back to the system
   * (Linux: MADV_DONTNEED; they read as zeros and hold no memory until written); RangeError outside it.
   * Only for an arena the caller allocated (private memory of this process).
   */
  zeroBytes(arena: ArrayBuffer, offset: number, length: number): void {
    this.addon.zeroBytes(arena, offset, length);
  }

  /**
   * Copies `length` bytes of `from` at `offset` to `to` at `at` (two ArrayBuffers of this process, the
   * ranges not overlapping unless equal): the same bytes as a copy, but a block of zeros in `from` is
   * zeroed in `to` as zeroBytes does (its pages given back), not copied. A KV cache whose first
   * positions only are written so moves reading the rest and writing none of it.
   */
  copyBytes(to: ArrayBuffer, at: number, from: ArrayBuffer, offset: number, length: number): void {
    this.addon.copyBytes(to, at, from, offset, length);
  }

  /** Forces a SIMD path; InvalidOptions when this CPU lacks it. */
  setIsa(isa: HostIsa): HostIsa {
    return this.addon.setIsa(isa);
  }

  /**
   * Test only, the host contract sweep's negative control: every result of the unary kernel `op` comes
   * back `ulps` ulps too high, process-wide, until it is called again with null. Never on by default.
   * @internal
   */
  setUnaryFault(op: UnaryOp | null, ulps = 0): void {
    this.addon.setUnaryFault(op === null ? -1 : UNARY_OPS.indexOf(op), ulps);
  }

  /**
   * Test only, the host contract sweep's other negative control: a matmul by a weight (every
   * quantized dtype) drops the first block of each weight row, process-wide, until cleared. Off by default.
   * @internal
   */
  setDropBlockFault(on: boolean): void {
    this.addon.setDropBlockFault(on);
  }

  /**
   * Test only, the fused attention's negative control: `drop-last` leaves out each row's last visible
   * key position, `scale` uses 1.0625 times the scale, `f16-as-bf16` makes attention_f16 read the f16
   * cache's bits as bf16, process-wide, until cleared with null.
   * @internal
   */
  setAttentionFault(fault: 'drop-last' | 'scale' | 'f16-as-bf16' | null): void {
    this.addon.setAttentionFault(fault === null ? 0 : fault === 'drop-last' ? 1 : fault === 'scale' ? 2 : 3);
  }

  /**
   * Test only (a negative control): matmul_wq rounds every activation code one step above the
   * nearest (at most 127), process-wide until cleared.
   *
   * @internal
   */
  setQ8RoundFault(on: boolean): void {
    this.addon.setQ8RoundFault(on);
  }

  /** Resizes the thread team (1 to 1024 lanes, the calling thread being one). */
  setThreads(n: number): number {
    return this.addon.setThreads(n);
  }

  /** Maps `length` bytes of a file at `offset` as a weight; nothing is read until a kernel touches it. */
  openWeight(spec: FileWeightSpec): HostWeight {
    hostWeightBytes(spec.type, spec.k, spec.n, spec.path);
    return new this.addon.HostWeight({ ...spec, type: weightTypeId(spec.type) });
  }

  /** A weight over `bytes`, held by reference (the buffer must stay attached while it is used). */
  weightFromBytes(bytes: Uint8Array, type: HostWeightType, k: number, n: number): HostWeight {
    hostWeightBytes(type, k, n);
    return new this.addon.HostWeight({ bytes, type: weightTypeId(type), k, n });
  }

  /** The kernel list of `calls` (src/compiler/host/kernelList.ts), as run() takes it. */
  encode(calls: readonly KernelCall[]): Float64Array {
    return encodeKernels(calls);
  }

  /** Runs one step: every kernel of the list in order, in one native call. */
  run(arena: Uint8Array | ArrayBuffer, list: Float64Array | readonly KernelCall[], weights: readonly HostWeight[] = []): void {
    this.addon.runList(arena, list instanceof Float64Array ? list : encodeKernels(list), weights);
  }

  /** The numbering this build reads kernel lists in (the addon's own tables). */
  abi(): HostAbi {
    return this.addon.abi();
  }

  /** Seconds to stream `bytes` through the cores `passes` times (the bench's bandwidth figure). */
  streamRead(bytes: Uint8Array, passes: number): number {
    return this.addon.streamRead(bytes, passes).seconds;
  }
}

function envOptions(k: HostKernels): void {
  const isa = process.env.NPU_OFFLOAD_HOST_ISA;
  if (isa !== undefined && isa !== '') {
    if (!(HOST_ISAS as readonly string[]).includes(isa)) {
      throw new InvalidOptions('NPU_OFFLOAD_HOST_ISA', `${JSON.stringify(isa)} is not one of ${HOST_ISAS.join(', ')}`);
    }
    k.setIsa(isa as HostIsa);
  }
  const threads = process.env.NPU_OFFLOAD_HOST_THREADS;
  if (threads !== undefined && threads !== '') {
    const n = Number(threads);
    if (!Number.isInteger(n) || n < 1 || n > 1024) {
      throw new InvalidOptions('NPU_OFFLOAD_HOST_THREADS', `${JSON.stringify(threads)} is not an integer from 1 to 1024`);
    }
    k.setThreads(n);
  }
}

/** Why the install's build failed, as scripts/build-native.mjs recorded it beside build/Release/; or ''. */
function lastFailure(dir: string): string {
  try {
    return `; ${readFileSync(join(dir, '..', 'host_kernels.failed.txt'), 'utf8').trim()}`;
  } catch {
    return '';
  }
}

/** The host kernels of the addon in `dir`, loaded once; NoDevice('host', why and how to build) without it. */
export function loadHostKernels(dir: string = NATIVE_BUILD_DIR): HostKernels {
  const path = join(dir, FILE);
  const hit = loaded.get(path);
  if (hit) return hit;
  if (!existsSync(path)) throw new NoDevice('host', `the host kernels addon is not built (no ${FILE} in ${dir}${lastFailure(dir)}); ${HOW}`);
  let addon: HostAddon;
  try {
    addon = require(path) as HostAddon;
  } catch (e) {
    throw new NoDevice('host', `${FILE} does not load (${e instanceof Error ? e.message : String(e)}); ${REBUILD}`);
  }
  if (typeof addon.setErrorClasses !== 'function' || typeof addon.runList !== 'function' || typeof addon.HostWeight !== 'function' || typeof addon.abi !== 'function' || typeof addon.zeroBytes !== 'function' || typeof addon.copyBytes !== 'function') {
    throw new NoDevice('host', `${FILE} is not this version's addon; ${REBUILD}`);
  }
  // A build from another version reads records in another layout: refused before it runs one.
  const differs = abiMismatches(addon.abi());
  if (differs.length > 0) throw new NoDevice('host', `${FILE} was built from another version of the kernel list (${differs.join('; ')}); ${REBUILD}`);
  addon.setErrorClasses({ NoDevice, InvalidInput, InvalidOptions, IndexOutOfRange, IntegerDivideByZero });
  const k = new HostKernels(addon);
  envOptions(k);
  loaded.set(path, k);
  return k;
}
