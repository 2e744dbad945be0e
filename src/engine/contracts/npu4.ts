/**
 * Contract verification of the Intel NPU4 target (docs/NPU4.md, "Contracts"). The NPU computes in
 * FP16, so its contract is not per op but per narrowed graph: NPU4_CONTRACT's normwise bound against the
 * F32 oracle, for F32 values within ±65504. So every op the target admits (and three representative
 * multi-op programs) is built as a small F32 program, compiled by the NPU4 backend exactly as a user's
 * would be (planned, narrowed behind an F32 boundary, written as IR, compiled by the driver's compiler),
 * loaded on the simulated device and replayed through a Session, with the session's range checks, over
 * edge inputs and a random bulk (contractsOps.ts). Each result is judged against the oracle
 * (contractsTally.ts, which also says which cases lie in the contract's domain).
 *
 * Unlike the XDNA2's, whose ops are core functions called directly, this goes through the whole
 * pipeline: the narrowing pass is what the contract is about, so it must be in what is measured. The
 * device is injectable (`device`) so a negative control can run a device with a wrong kernel.
 */
import { UsageError } from '../../errors.js';
import type { Backend } from '../../compiler/backend.js';
import { NPU4_BACKEND } from '../../compiler/openvino/backend.js';
import { Session } from '../recording.js';
import type { CheckedProgram } from '../../ir/checked.js';
import { runStep } from '../../oracle/index.js';
import type { TensorMap } from '../../oracle/types.js';
import { planProgram } from '../../planner/plan.js';
import type { NarrowingContract } from '../../targets/npu4.js';
import { NPU4_CONTRACT } from '../../targets/npu4.js';
import type { Device } from '../../devices/device.js';
import { rng } from './npu4Cases.js';
import type { ContractCase, Npu4ContractOp } from './npu4Ops.js';
import { NPU4_CONTRACT_CASES, NPU4_CONTRACT_OPS } from './npu4Ops.js';
import type { CaseReport, CaseRun, Npu4ContractReport } from './npu4Tally.js';
import { isRangeRefusal, judgeCase, narrowedInputs, opReport } from './npu4Tally.js';
import { Npu4SimDevice } from '../../devices/npu4/simDevice.js';

export type { CaseReport, Npu4ContractReport } from './npu4Tally.js';
export { NPU4_CONTRACT_OPS } from './npu4Ops.js';

export interface Npu4ContractOptions {
  readonly target: 'npu4';
  /** Only this op (one of NPU4_CONTRACT_OPS). */
  readonly op?: string;
  /** The random bulk's seed (default 1), so a failure can be replayed. */
  readonly seed?: number;
  /** Random elements per op, beyond the edge cases (default 65536). */
  readonly bulk?: number;
  /** A fresh device per op (default the simulated NPU4); a negative control passes a faulty one. */
  readonly device?: () => Device;
}

// Generous: one replay of the largest case takes milliseconds; a deadline only guards against a hang.
const DEADLINE_MS = 60_000;

/** Compiles `checked` with `backend`, loads it on `device` and opens a session over its one graph. */
async function openSession(device: Device, backend: Backend, checked: CheckedProgram): Promise<Session> {
  const plan = planProgram(checked, backend.target);
  const [unit] = backend.units(checked, plan);
  if (!unit) throw new Error(`${checked.program.name} compiled to no unit`);
  const loaded = await device.load({ target: backend.target.name, bytes: backend.compile(checked, plan, 0) });
  const p = checked.program;
  return Session.open(device, [{ loaded, wiring: unit.wiring }], {
    weights: {}, state: {}, activations: p.args.filter((a) => a.role === 'activation').map((a) => a.name), stateNext: p.state, results: p.results,
  });
}

const oracle = (checked: CheckedProgram, activations: TensorMap) => runStep(checked, { weights: {}, state: {}, activations }).results;

/** Runs one case on the device (through its program's session) and on the oracle. */
async function runCase(session: Session, c: ContractCase): Promise<CaseRun> {
  const want = oracle(c.program, c.inputs);
  const wantF16 = oracle(c.program, narrowedInputs(c.inputs));
  try {
    const out = await session.replay(c.inputs, c.program.program.results, DEADLINE_MS);
    return { c, got: out.results, want, wantF16 };
  } catch (e) {
    // A value out of range is the session's typed answer, and a verdict on the case, not a crash.
    if (isRangeRefusal(e)) return { c, got: { refused: `${e.code}: ${e.message}` }, want, wantF16 };
    throw e;
  }
}

/** Runs every verified op (or `op`) through the backend onto the device and checks it against the contract. */
export async function runNpu4Contracts(opts: Npu4ContractOptions): Promise<Npu4ContractReport[]> {
  if (opts.target !== 'npu4') throw new UsageError(`npu4 contracts are verified for the npu4 target, not ${String(opts.target)}`);
  if (opts.op !== undefined && !(NPU4_CONTRACT_OPS as readonly string[]).includes(opts.op)) {
    throw new UsageError(`npu4 verifies no op ${JSON.stringify(opts.op)}: choose one of ${NPU4_CONTRACT_OPS.join(', ')}`);
  }
  const backend = NPU4_BACKEND;
  const contract = NPU4_CONTRACT;
  const bulk = opts.bulk ?? 65_536;
  const seed = opts.seed ?? 1;
  const makeDevice = opts.device ?? (() => new Npu4SimDevice({ name: 'npu4-contracts' }));
  const reports: Npu4ContractReport[] = [];
  for (const [k, op] of NPU4_CONTRACT_OPS.entries()) {
    if (opts.op !== undefined && op !== opts.op) continue;
    reports.push(await verifyOp(op, k, { backend, contract, bulk, seed, makeDevice }));
  }
  return reports;
}

interface OpRun {
  readonly backend: Backend;
  readonly contract: NarrowingContract;
  readonly bulk: number;
  readonly seed: number;
  readonly makeDevice: () => Device;
}

async function verifyOp(op: Npu4ContractOp, k: number, run: OpRun): Promise<Npu4ContractReport> {
  const spec = NPU4_CONTRACT_CASES[op];
  // Each op has its own stream, so `--op` alone reproduces the same cases as a full run.
  const cases = spec.cases(rng(run.seed * 1009 + k), run.bulk);
  const device = run.makeDevice();
  const sessions = new Map<CheckedProgram, Session>();
  const judged: CaseReport[] = [];
  try {
    for (const c of cases) {
      let s = sessions.get(c.program);
      if (!s) sessions.set(c.program, (s = await openSession(device, run.backend, c.program)));
      judged.push(judgeCase(await runCase(s, c), run.contract.normwise, run.contract.maxMagnitude));
    }
  } finally {
    device.drop();
  }
  return opReport(op, spec.group, run.contract.normwise, run.contract.maxMagnitude, judged);
}
