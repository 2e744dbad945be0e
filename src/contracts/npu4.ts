/**
 * Contract verification of the Intel NPU4 target (docs/NPU4.md, "Contracts"). The NPU computes in
 * FP16, so its contract is not per op but per narrowed graph: NPU4_CONTRACT's normwise bound against the
 * F32 oracle, for F32 values within ±65504. So every op the target admits (and three representative
 * multi-op programs) is built as a small F32 program, compiled by the NPU4 backend exactly as a user's
 * would be (planned, narrowed behind an F32 boundary, written as IR, compiled by the driver's compiler),
 * loaded on the simulated device and replayed through a Session, with the session's range checks, over
 * edge inputs and a random bulk (npu4Ops.ts). Each result is judged against the oracle (npu4Tally.ts,
 * which also says which cases lie in the contract's domain).
 *
 * The oracle's two runs of each case (on the F32 inputs, and on their FP16 values) are computed by a
 * ReferenceOracle (reference.ts): the CLI's oracle pool, working on the next ops while the device
 * replays this one on the calling thread. The device is injectable (`device`) so a negative control can
 * run a device with a wrong kernel.
 */
import { UsageError } from '../errors/index.js';
import type { Backend } from '../compiler/backend.js';
import { NPU4_BACKEND } from '../compiler/openvino/backend.js';
import type { Session } from '../session/session.js';
import { programToJson } from '../ir/codec.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { StepOutput } from '../oracle/types.js';
import type { NarrowingContract } from '../targets/npu4/index.js';
import { NPU4_CONTRACT } from '../targets/npu4/index.js';
import type { Device } from '../devices/device.js';
import { CONTRACT_DEADLINE_MS, openSession } from './openSession.js';
import { rng } from './npu4Cases.js';
import type { ContractCase } from './npu4Ops.js';
import { NPU4_CONTRACT_CASES, NPU4_CONTRACT_OPS } from './npu4Ops.js';
import type { CaseReport, CaseRun, Npu4ContractReport } from './npu4Tally.js';
import { isRangeRefusal, judgeCase, narrowedInputs, opReport } from './npu4Tally.js';
import type { ReferenceOracle, SweepOptions } from './reference.js';
import { inThreadOracle, pipelined, references } from './reference.js';
import { Npu4SimDevice } from '../devices/npu4/simDevice.js';
import { bulkRounds, checkBulk } from './bulk.js';

export type {  Npu4ContractReport } from './npu4Tally.js';
export { NPU4_CONTRACT_OPS } from './npu4Ops.js';

/** The NPU4 sweep's options: `op` one of NPU4_CONTRACT_OPS, `bulk` default 65536 (at most MAX_BULK). */
export interface Npu4ContractOptions extends SweepOptions {
  readonly target: 'npu4';
  /** A fresh device per op (default the simulated NPU4); a negative control passes a faulty one. */
  readonly device?: () => Device;
}

/** Replays one case on the device (through its program's session) and joins the oracle's two runs of it. */
async function runCase(session: Session, c: ContractCase, reference: Promise<StepOutput[]>): Promise<CaseRun> {
  let got: CaseRun['got'];
  try {
    got = { results: (await session.replay(c.inputs, c.program.program.results, CONTRACT_DEADLINE_MS)).results };
  } catch (e) {
    // A value out of range is the session's typed answer, and a verdict on the case, not a crash.
    if (!isRangeRefusal(e)) throw e;
    got = { refused: `${e.code}: ${e.message}` };
  }
  const [want, wantF16] = await reference;
  return { c, got, want: want!.results, wantF16: wantF16!.results };
}

/** Runs every verified op (or `op`) through the backend onto the device and checks it against the contract. */
export async function runNpu4Contracts(opts: Npu4ContractOptions): Promise<Npu4ContractReport[]> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type names it; a JavaScript caller may pass anything
  if (opts.target !== 'npu4') throw new UsageError(`npu4 contracts are verified for the npu4 target, not ${String(opts.target)}`);
  if (opts.op !== undefined && !(NPU4_CONTRACT_OPS as readonly string[]).includes(opts.op)) {
    throw new UsageError(`npu4 verifies no op ${JSON.stringify(opts.op)}: choose one of ${NPU4_CONTRACT_OPS.join(', ')}`);
  }
  const backend = NPU4_BACKEND;
  const contract = NPU4_CONTRACT;
  checkBulk(opts.bulk);
  const bulk = opts.bulk ?? 65_536;
  const seed = opts.seed ?? 1;
  const makeDevice = opts.device ?? (() => new Npu4SimDevice({ name: 'npu4-contracts' }));
  const oracle = opts.oracle ?? inThreadOracle;
  const ops = NPU4_CONTRACT_OPS.filter((op) => opts.op === undefined || op === opts.op);
  const run: OpRun = { backend, contract, seed, makeDevice };
  const rounds = bulkRounds(bulk);
  return pipelined(ops, (op) => {
    // Each op has its own stream, so `--op` alone reproduces the same cases as a full run.
    const r = rng(run.seed * 1009 + NPU4_CONTRACT_OPS.indexOf(op));
    return { r, first: prepareOp(NPU4_CONTRACT_CASES[op].cases(r, rounds[0]!), oracle) };
  }, async ({ r, first }, op) => {
    const judged: CaseReport[] = [];
    let bulkCases = first.cases.filter(isBulk).length;
    // Later rounds draw the bulk alone, numbered on from the first round's, and are judged one at a time.
    for (let k = 0, cur = first; k < rounds.length; k++) {
      judged.push(...await verifyCases(cur, run));
      if (k + 1 < rounds.length) {
        const more = NPU4_CONTRACT_CASES[op].cases(r, rounds[k + 1]!).filter(isBulk).map((c) => ({ ...c, name: `bulk#${bulkCases++}` }));
        cur = prepareOp(more, oracle);
      }
    }
    return opReport(op, NPU4_CONTRACT_CASES[op].group, run.contract.normwise, run.contract.maxMagnitude, judged);
  }, 2, opts.onProgress);
}

const isBulk = (c: ContractCase) => /^bulk(#|$)/.test(c.name);

interface OpRun {
  readonly backend: Backend;
  readonly contract: NarrowingContract;
  readonly seed: number;
  readonly makeDevice: () => Device;
}

/** An op's cases, and the oracle's two runs of each, submitted (reference.ts `references`). */
interface PreparedOp {
  readonly cases: readonly ContractCase[];
  readonly want: readonly Promise<StepOutput[]>[];
}

function prepareOp(cases: readonly ContractCase[], oracle: ReferenceOracle): PreparedOp {
  const json = new Map<CheckedProgram, object>();
  const want = cases.map((c) => {
    let j = json.get(c.program);
    if (!j) json.set(c.program, (j = programToJson(c.program.program)));
    return references(oracle, j, {}, [c.inputs, narrowedInputs(c.inputs)], false, 2);
  });
  return { cases, want };
}

async function verifyCases(prepared: PreparedOp, run: OpRun): Promise<CaseReport[]> {
  const device = run.makeDevice();
  const sessions = new Map<CheckedProgram, Session>();
  const judged: CaseReport[] = [];
  try {
    for (const [i, c] of prepared.cases.entries()) {
      let s = sessions.get(c.program);
      if (!s) sessions.set(c.program, (s = await openSession(device, run.backend, c.program)));
      judged.push(judgeCase(await runCase(s, c, prepared.want[i]!), run.contract.normwise, run.contract.maxMagnitude));
    }
  } finally {
    device.drop();
  }
  return judged;
}
