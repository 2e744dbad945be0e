/**
 * Contract verification of the host target (docs/HOST.md, "Contracts"): every op the target admits is
 * built as small programs (hostOps.ts, hostMoves.ts, hostTyped.ts), compiled by the host backend as a user's would be,
 * loaded on the host device (the real native kernels) and replayed through a Session over edge inputs
 * and a random bulk. Each result element is judged against the CPU oracle under the op's contract
 * (src/targets/host/contracts.ts): bit for bit the oracle's rounded result, or within the element's
 * bound of its fp64 result. The device is injectable, so a negative control can run a wrong kernel.
 */
import { BinadeTally, type BinadeStat } from '../numerics/binades.js';
import { HOST_BACKEND, hostBackend } from '../compiler/host/backend.js';
import type { Device } from '../devices/device.js';
import { HostDevice } from '../devices/host/device.js';
import { UsageError } from '../errors/index.js';
import type { StepOutput, TensorMap } from '../oracle/types.js';
import { HOST_CONTRACTS, HOST_Q8_CONTRACT, HOST_TYPED_CONTRACTS, describeHostContract } from '../targets/host/contracts.js';
import type { HostContract } from '../targets/host/contracts.js';
import { checkBulk } from './bulk.js';
import { CONTRACT_DEADLINE_MS, openSession } from './openSession.js';
import { f32Source } from './hostCases.js';
import type { F32Source } from './hostCases.js';
import { convert, gather, iota, movement, rowKernels } from './hostMoves.js';
import { hostTyped } from './hostTyped.js';
import { attentionPrograms } from './hostAttention.js';
import type { ElementBound, HostContractOp, HostProgram } from './hostOps.js';
import { HOST_CONTRACT_OPS, hostArithmetic } from './hostOps.js';
import type { SweepOptions } from './reference.js';
import { inThreadOracle, pipelined, references } from './reference.js';

export { HOST_CONTRACT_OPS } from './hostOps.js';

/** The host sweep's options: `op` one of HOST_CONTRACT_OPS, `bulk` default 65536. */
export interface HostContractOptions extends SweepOptions {
  readonly target: 'host';
  /** A fresh device per op (default the host device); a negative control passes a faulty one. */
  readonly device?: () => Device;
}

/** The worst element of an op: its error against the fp64 result, the bound, and where. */
interface HostWorst {
  readonly error: number;
  readonly bound: number;
  readonly ratio: number;
  readonly program: string;
  readonly got: number;
  readonly want: number;
}

export interface HostContractReport {
  readonly op: string;
  readonly contract: string;
  readonly programs: readonly string[];
  readonly elements: number;
  readonly inDomain: number;
  readonly failures: number;
  /** Failures by program (the op's variants: `matmul q4_0`, ...), every program listed. */
  readonly programFailures: Readonly<Record<string, number>>;
  readonly worst: HostWorst | null;
  /** The first failure, when there is one: what a reader needs to reproduce it. */
  readonly firstFailure: HostWorst | null;
  readonly pass: boolean;
  /** Worst error/bound per binade of the reference result (what the report plots). */
  readonly binades: readonly BinadeStat[];
}

/** Every op's programs, by the op. */
function programsOf(op: HostContractOp, r: F32Source, bulk: number): HostProgram[] {
  switch (op) {
    case 'reshape': case 'transpose': case 'broadcast': case 'slice': case 'concat': case 'dynamic_update_slice': return movement(op, r, bulk);
    case 'iota': return [...iota(), ...hostTyped(op, r, bulk)];
    case 'convert': return convert(r, bulk);
    case 'gather': return [...gather(r, bulk), ...hostTyped(op, r, bulk)];
    case 'row_kernel': return [...rowKernels(r, bulk), ...attentionPrograms(r, bulk), ...hostTyped(op, r, bulk)];
    default: return [...hostArithmetic(op, r, bulk), ...hostTyped(op, r, bulk)];
  }
}

const sameBits = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Object.is(a, b);

/** Runs every host op (or `op`) on the host device and checks each element against its contract. */
export async function runHostContracts(opts: HostContractOptions): Promise<HostContractReport[]> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type names it; a JavaScript caller may pass anything
  if (opts.target !== 'host') throw new UsageError(`host contracts are verified for the host target, not ${String(opts.target)}`);
  if (opts.op !== undefined && !(HOST_CONTRACT_OPS as readonly string[]).includes(opts.op)) {
    throw new UsageError(`host admits no op ${JSON.stringify(opts.op)}: choose one of ${HOST_CONTRACT_OPS.join(', ')}`);
  }
  checkBulk(opts.bulk);
  const bulk = opts.bulk ?? 65_536;
  const seed = opts.seed ?? 1;
  const oracle = opts.oracle ?? inThreadOracle;
  const makeDevice = opts.device ?? (() => new HostDevice({ name: 'host-contracts' }));
  const ops = HOST_CONTRACT_OPS.filter((o) => opts.op === undefined || o === opts.op);
  return pipelined(ops, (op) => {
    const programs = programsOf(op, f32Source(seed * 1009 + HOST_CONTRACT_OPS.indexOf(op)), bulk);
    const want = programs.map((p) => ({
      f32: references(oracle, p.json, p.weights as TensorMap, p.chunks, false, 8),
      f64: references(oracle, p.json, p.weights as TensorMap, p.chunks, true, 8),
    }));
    return { programs, want };
  }, async ({ programs, want }, op) => {
    const device = makeDevice();
    const tally = new Tally();
    try {
      for (const [k, p] of programs.entries()) {
        const session = await openSession(device, p.matmul === undefined ? HOST_BACKEND : hostBackend(p.matmul), p.checked, p.weights as TensorMap);
        const got: StepOutput[] = [];
        try {
          for (const chunk of p.chunks) got.push(await session.replay(chunk, p.checked.program.results, CONTRACT_DEADLINE_MS));
        } finally {
          session.close();
        }
        tally.judge(p, got, await want[k]!.f32, await want[k]!.f64);
      }
    } finally {
      device.drop();
    }
    const typed = (HOST_TYPED_CONTRACTS as Partial<Record<string, HostContract>>)[op];
    const words = describeHostContract(HOST_CONTRACTS[op]) + (typed === undefined ? '' : `; in f16, bf16 (and i32): ${describeHostContract(typed)}`) +
      (op === 'matmul' ? `; the q8-activations class (matmul q8 programs): ${describeHostContract(HOST_Q8_CONTRACT)}` : '');
    return tally.report(op, words, programs.map((p) => p.name));
  }, 2, opts.onProgress);
}

class Tally {
  elements = 0;
  inDomain = 0;
  failures = 0;
  worst: HostWorst | null = null;
  first: HostWorst | null = null;
  byProgram: Record<string, number> = {};
  readonly binades = new BinadeTally();

  judge(p: HostProgram, got: readonly StepOutput[], w32: readonly StepOutput[], w64: readonly StepOutput[]): void {
    this.byProgram[p.name] ??= 0;
    for (const [c, step] of got.entries()) {
      for (const name of p.checked.program.results) {
        const g = step.results[name]!.data;
        const a = w32[c]!.results[name]!.data;
        const b = w64[c]!.results[name]!.data;
        for (let i = 0; i < g.length; i++) this.one(p, this.boundAt(p, c, i, b[i]!), g[i]!, a[i]!, b[i]!);
      }
    }
  }

  private boundAt(p: HostProgram, c: number, i: number, want: number): ElementBound {
    return p.bound(c, i, want);
  }

  private one(p: HostProgram, bound: ElementBound, got: number, want32: number, want64: number): void {
    this.elements++;
    if (bound === null) { this.binades.add(want64, false); return; }
    this.inDomain++;
    if (sameBits(got, want32)) { this.binades.add(want64, true, 0, 0, false); return; }
    const error = Math.abs(got - want64);
    const ok = bound !== 'exact' && !Number.isNaN(want64) && error <= bound;
    const limit = bound === 'exact' ? 0 : bound;
    const at: HostWorst = { error, bound: limit, ratio: limit > 0 ? error / limit : Infinity, program: p.name, got, want: bound === 'exact' ? want32 : want64 };
    this.binades.add(want64, true, at.ratio, error, !ok);
    if (!ok) {
      this.failures++;
      this.byProgram[p.name]!++;
      this.first ??= at;
    }
    if (this.worst === null || !(at.ratio <= this.worst.ratio)) this.worst = at;
  }

  report(op: string, contract: string, programs: readonly string[]): HostContractReport {
    return {
      op, contract, programs, elements: this.elements, inDomain: this.inDomain, failures: this.failures, programFailures: this.byProgram,
      worst: this.worst, firstFailure: this.first, pass: this.failures === 0, binades: this.binades.stats(),
    };
  }
}
