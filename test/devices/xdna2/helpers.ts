/** Shared by the XDNA2 simulator tests: compiling programs with the XDNA2 backend, and f32 patterns. */
import { XDNA2_BACKEND } from '../../../src/compiler/aie/backend.js';
import type { Wiring } from '../../../src/compiler/wiring.js';
import type { ArenaId, Artifact, Device, LoadedArtifact } from '../../../src/devices/index.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import { parseProgram } from '../../../src/ir/codec.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { planProgram } from '../../../src/planner/plan.js';
import { XDNA2_TARGET } from '../../../src/targets/xdna2/index.js';

/** A program compiled for the XDNA2: one artifact per region, with its wiring. */
export interface Compiled {
  readonly checked: CheckedProgram;
  readonly units: readonly { readonly artifact: Artifact; readonly wiring: Wiring }[];
}

/** Plans and compiles a program (JSON) for the XDNA2 target. */
export function compileXdna2(json: unknown): Compiled {
  const checked = checkProgram(parseProgram(json));
  const plan = planProgram(checked, XDNA2_TARGET);
  const units = XDNA2_BACKEND.units(checked, plan).map((u, i) => ({
    artifact: { target: 'xdna2', bytes: XDNA2_BACKEND.compile(checked, plan, i) },
    wiring: u.wiring,
  }));
  return { checked, units };
}

/** Loads every unit of a compiled program; returns the stages a Session takes. */
export async function loadAll(dev: Device, c: Compiled): Promise<{ loaded: LoadedArtifact; wiring: Wiring }[]> {
  const out: { loaded: LoadedArtifact; wiring: Wiring }[] = [];
  for (const u of c.units) out.push({ loaded: await dev.load(u.artifact), wiring: u.wiring });
  return out;
}

/** A one-region program of f32 args named in `args` (all activations) and the given equations. */
export function program(name: string, args: Record<string, { dtype?: string; shape: number[]; role?: string }>, eqns: unknown[], results: string[], state: Record<string, string> = {}) {
  return {
    format: 'program@1', name,
    args: Object.entries(args).map(([n, a]) => ({ name: n, role: a.role ?? 'activation', dtype: a.dtype ?? 'f32', shape: a.shape })),
    eqns, results, state,
  };
}

/** The bytes of f32 values. */
export function f32Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer);
}

/** The bytes of 32-bit patterns. */
export function u32Bytes(patterns: readonly number[]): Uint8Array {
  return new Uint8Array(Uint32Array.from(patterns).buffer);
}

/** f32 values of bytes. */
export function f32Of(bytes: Uint8Array): number[] {
  return [...new Float32Array(bytes.slice().buffer)];
}

/** 32-bit patterns of bytes. */
export function u32Of(bytes: Uint8Array): number[] {
  return [...new Uint32Array(bytes.slice().buffer)];
}

/** The pattern of an f32 value. */
export function bitsOf(x: number): number {
  return new Uint32Array(Float32Array.of(x).buffer)[0]!;
}

/** Bindings as the engine makes them: one host arena per artifact arena, each argument at its offset. */
export function bindArenas(dev: Device, wiring: Wiring): { bindings: Record<string, { arena: ArenaId; offset: number }>; arenas: ArenaId[] } {
  const arenas = new Map<number, ArenaId>();
  const bindings: Record<string, { arena: ArenaId; offset: number }> = {};
  for (const w of wiring) {
    const a = w.arena!;
    let id = arenas.get(a.index);
    if (id === undefined) { id = dev.allocArena(a.arenaBytes); arenas.set(a.index, id); }
    bindings[w.binding] = { arena: id, offset: a.offset };
  }
  return { bindings, arenas: [...arenas.values()] };
}
