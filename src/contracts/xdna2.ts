/**
 * Contract verification of the XDNA2 target (docs/XDNA2.md, "Contracts"): every op the target admits
 * is built as a small F32 program (xdna2Ops.ts), compiled by the XDNA2 backend exactly as a user's
 * would be, loaded on the simulated device and replayed through a Session over inputs that reach the
 * edges of the op's domain and a large random bulk, in chunks of the program's shape. Each element is
 * checked against the op's published contract (src/targets/xdna2.ts, contract.ts withinContract) and
 * the CPU oracle's result, its rounded f32 result or its fp64 reference as the contract needs
 * (src/devices/xdna2/contracts.ts referenceOf).
 *
 * The references are computed by a ReferenceOracle (reference.ts): the CLI's oracle pool, whose
 * workers compute the next ops' references while the device runs this one on the calling thread. The
 * device's core arithmetic is injectable (`math`), so a negative control runs a device with a broken
 * core: the device, unlike a CoreMath, never leaves the calling thread.
 */
import { UsageError } from '../errors/index.js';
import { XDNA2_BACKEND } from '../compiler/aie/backend.js';
import type { CoreMath } from '../devices/xdna2/coreMath.js';
import { CORE_MATH } from '../devices/xdna2/coreMath.js';
import { rng } from '../devices/xdna2/contractCases.js';
import type { ContractOp, ContractReport } from '../devices/xdna2/contracts.js';
import { CONTRACT_OPS, contractOf, referenceOf } from '../devices/xdna2/contracts.js';
import { ContractTally } from '../devices/xdna2/contractTally.js';
import { Xdna2SimDevice } from '../devices/xdna2/simDevice.js';
import { describeContract } from '../targets/contract.js';
import { numel } from '../ir/types.js';
import type { StepOutput } from '../oracle/types.js';
import { bulkRounds, checkBulk } from './bulk.js';
import { CONTRACT_DEADLINE_MS, openSession } from './openSession.js';
import type { RawIo } from './rawIo.js';
import { withRawIo } from './rawIo.js';
import type { SweepOptions } from './reference.js';
import { inThreadOracle, pipelined, references, stepsPerTask } from './reference.js';
import type { ContractProgram, DeviceChunk } from './xdna2Ops.js';
import { planOp } from './xdna2Ops.js';

export type { ContractReport,  } from '../devices/xdna2/contracts.js';
export { CONTRACT_OPS } from '../devices/xdna2/contracts.js';

/** The XDNA2 sweep's options: `op` one of CONTRACT_OPS, `bulk` default 100000 (at most MAX_BULK). */
export interface Xdna2ContractOptions extends SweepOptions {
  readonly target: 'xdna2';
  /** The device's core arithmetic (default the XDNA2 core's); a negative control passes a broken one. */
  readonly math?: CoreMath;
}

/** Runs every admitted op (or `op`) through the XDNA2 backend onto the simulated device and checks it against its contract. */
export async function runXdna2Contracts(opts: Xdna2ContractOptions): Promise<ContractReport[]> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type names it; a JavaScript caller may pass anything
  if (opts.target !== 'xdna2') throw new UsageError(`xdna2 contracts are verified for the xdna2 target, not ${String(opts.target)}`);
  if (opts.op !== undefined && !(CONTRACT_OPS as readonly string[]).includes(opts.op)) {
    throw new UsageError(`xdna2 admits no op ${JSON.stringify(opts.op)}: choose one of ${CONTRACT_OPS.join(', ')}`);
  }
  checkBulk(opts.bulk);
  const math = opts.math ?? CORE_MATH;
  const rounds = bulkRounds(opts.bulk ?? 100_000);
  const seed = opts.seed ?? 1;
  const oracle = opts.oracle ?? inThreadOracle;
  const ops = CONTRACT_OPS.filter((o) => opts.op === undefined || o === opts.op);
  // One round of an op: its programs and chunks, and the references submitted to the oracle.
  const round = (op: ContractOp, r: () => number, k: number) => {
    const plan = planOp(op, r, rounds[k]!, k === 0);
    const fp64 = referenceOf(op) === 'oracle-fp64';
    const want = plan.programs.map((p) => references(oracle, p.json, p.weights, p.chunks, fp64, stepsPerTask(chunkElements(p))));
    return { plan, want };
  };
  return pipelined(ops, (op) => {
    // Each op has its own stream, so `--op` alone reproduces the same cases as a full run.
    const r = rng(seed * 1009 + CONTRACT_OPS.indexOf(op));
    return { r, first: round(op, r, 0) };
  }, async ({ r, first }, op) => {
    const tally = tallyOf(op);
    // Round by round, so only one round's cases and results are held at a time.
    for (let k = 0, cur = first; k < rounds.length; k++) {
      const got = await runOnDevice(op, cur.plan.programs, math);
      cur.plan.judge(tally, got, await Promise.all(cur.want));
      if (k + 1 < rounds.length) cur = round(op, r, k + 1);
    }
    return tally.report();
  }, 2, opts.onProgress);
}

function tallyOf(op: ContractOp): ContractTally {
  const contract = contractOf(op);
  return new ContractTally(op, describeContract(contract), contract, referenceOf(op));
}

function chunkElements(p: ContractProgram): number {
  const first = p.chunks[0];
  return first === undefined ? 1 : Object.values(first).reduce((n, t) => n + numel(t.shape), 0);
}

/** Runs every chunk of every program of one op on a fresh simulated device (one context per program). */
async function runOnDevice(op: ContractOp, programs: readonly ContractProgram[], math: CoreMath): Promise<DeviceChunk[][]> {
  const io = withRawIo(new Xdna2SimDevice({ name: `xdna2-contracts-${op}`, math }));
  try {
    const out: DeviceChunk[][] = [];
    for (const p of programs) out.push(await replayAll(io, p));
    return out;
  } finally {
    io.device.drop();
  }
}

/** Replays every chunk of one program through a Session, keeping the raw bytes of each result. */
async function replayAll(io: RawIo, p: ContractProgram): Promise<DeviceChunk[]> {
  const session = await openSession(io.device, XDNA2_BACKEND, p.checked, p.weights);
  const results = p.checked.program.results;
  for (const c of session.commands) {
    if (c.kind === 'write' && p.raw?.[c.to.value] !== undefined) io.put(c.to.at, p.raw[c.to.value]!);
  }
  const reads = session.commands.flatMap((c) => (c.kind === 'read' && c.as === 'result' ? [c] : []));
  const out: DeviceChunk[] = [];
  try {
    for (const chunk of p.chunks) {
      const step: StepOutput = await session.replay(chunk, results, CONTRACT_DEADLINE_MS);
      const raw: Record<string, Uint8Array> = {};
      for (const r of reads) raw[r.name] = io.last(r.from.at)!;
      out.push({ results: step.results, raw });
    }
  } finally {
    session.close();
  }
  return out;
}
