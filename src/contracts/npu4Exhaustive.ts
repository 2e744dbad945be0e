/**
 * The NPU4's exhaustive sweep. The NPU computes in FP16, so the inputs that matter are the 65536 FP16
 * patterns: every one of them (for a binary op, every one of the swept operand against each fixed FP16
 * value of the other) goes through an F32 program compiled by the NPU4 backend and replayed on the
 * simulated device through a Session, exactly as contract verification runs it (npu4.ts), and each
 * element is judged by the narrowing contract on its own: the normwise bound of a one-element tensor
 * is its relative error. The domain is npu4Tally.ts's, per element: the input and the F32 oracle's
 * result within ±65504, and FP16 storage of the result alone costing at most DOMAIN_SHARE of the bound;
 * ge is exact on its FP16 operands. 65536 elements a replay is cheap, so this runs in TypeScript.
 *
 * Elements outside the domain do not run: the session would refuse a whole replay over one infinite
 * input or one result beyond ±65504, so their places are filled with an element known to stay in range.
 */
import { NPU4_BACKEND } from '../compiler/openvino/backend.js';
import type { Device } from '../devices/device.js';
import { Npu4SimDevice } from '../devices/npu4/simDevice.js';
import { bitsOf } from '../devices/xdna2/f32.js';
import { parseProgram } from '../ir/codec.js';
import type { CheckedProgram } from '../ir/checked.js';
import { F16_MAX, f16FromBits, roundF16 } from '../numerics/float16.js';
import { normwiseRelError } from '../numerics/measures.js';
import { checkProgram } from '../ops/validate.js';
import { runProgram } from '../oracle/index.js';
import type { TensorMap } from '../oracle/types.js';
import { NPU4_CONTRACT } from '../targets/npu4/index.js';
import { CONTRACT_DEADLINE_MS, openSession } from './openSession.js';
import type { ExhaustiveReport, TallyElement } from './exhaustiveReport.js';
import { ExhaustiveTally, MAX_LISTED } from './exhaustiveReport.js';
import { DOMAIN_SHARE } from './npu4Tally.js';

export interface Npu4ExhaustivePlan {
  readonly op: string;
  /** FP16 patterns [from, to) of the swept operand. */
  readonly range: { readonly from: number; readonly to: number };
  readonly fixed: readonly number[] | null;
  readonly operand: 'a' | 'b';
  readonly onProgress?: (done: number, total: number) => void;
  /** The device (default a fresh simulated NPU4). */
  readonly device?: () => Device;
}

const N = 65536;
const SHAPE = [256, 256];

function program(op: string, binary: boolean): CheckedProgram {
  const arg = (name: string) => ({ name, role: 'activation', dtype: 'f32', shape: SHAPE });
  return checkProgram(parseProgram({
    format: 'program@1', name: `npu4-sweep-${op}`, args: binary ? [arg('a'), arg('b')] : [arg('a')],
    eqns: [{ op, in: binary ? ['a', 'b'] : ['a'], out: 'y' }], results: ['y'], state: {},
  }));
}

const G = new Float64Array(1);
const W = new Float64Array(1);
/** The normwise relative error of one element (measures.ts, on a one-element tensor). */
function relError(g: number, w: number): number {
  G[0] = g;
  W[0] = w;
  return normwiseRelError(G, W);
}

const tensor = (data: Float64Array) => ({ dtype: 'f32' as const, shape: SHAPE, data });

/** Sweeps one NPU4 op over every FP16 input; see the file's doc. */
export async function runNpu4Exhaustive(p: Npu4ExhaustivePlan): Promise<ExhaustiveReport> {
  const binary = p.fixed !== null;
  const exact = p.op === 'ge';
  const checked = program(p.op, binary);
  const bound = NPU4_CONTRACT.normwise;
  const max = NPU4_CONTRACT.maxMagnitude;
  const sweepSecond = p.operand === 'b';
  const tally = new ExhaustiveTally(sweepSecond, 'f16');
  const device = p.device ? p.device() : new Npu4SimDevice({ name: 'npu4-sweep' });
  const t0 = performance.now();
  const others = p.fixed ?? [0];
  const count = p.range.to - p.range.from;
  const total = count * others.length;
  let outsideRan = 0;
  try {
    const session = await openSession(device, NPU4_BACKEND, checked);
    for (const other of others) {
      const swept = new Float64Array(N);
      for (let i = 0; i < count; i++) swept[i] = f16FromBits(p.range.from + i);
      const fixed = new Float64Array(N).fill(other);
      const inputs = (x: Float64Array): TensorMap => {
        if (!binary) return { a: tensor(x) };
        return sweepSecond ? { a: tensor(fixed), b: tensor(x) } : { a: tensor(x), b: tensor(fixed) };
      };
      const want = runProgram(checked, { weights: {}, state: {}, steps: [inputs(swept)] })[0]!.results['y']!.data;
      // In the domain: a finite input (FP16's finite values are all within ±65504) with an in-range result.
      const candidate = (i: number) => i < count && Number.isFinite(swept[i]!) && Number.isFinite(other) && Math.abs(want[i]!) <= max;
      let filler = -1;
      for (let i = 0; i < count && filler < 0; i++) if (candidate(i)) filler = i;
      const part = { elements: count, inDomain: 0, failures: 0, worst: null as (TallyElement & { bad: boolean }) | null, shown: [] as TallyElement[], binades: new Float64Array(512) };
      if (filler >= 0) {
        const run = swept.map((v, i) => (candidate(i) ? v : swept[filler]!));
        const got = (await session.replay(inputs(run), ['y'], CONTRACT_DEADLINE_MS)).results['y']!.data;
        for (let i = 0; i < count; i++) {
          if (!candidate(i)) continue;
          const w = want[i]!;
          // FP16 storage alone may not cost more than its share of the bound (npu4Tally.ts's domain).
          if (!exact && relError(roundF16(w), w) > DOMAIN_SHARE * bound) { outsideRan++; continue; }
          const g = got[i]!;
          const error = exact ? (Object.is(g, w) ? 0 : Infinity) : relError(g, w);
          const bad = exact ? error !== 0 : !(error <= bound);
          const ratio = exact ? (bad ? Infinity : 0) : error / bound;
          const sb = bitsOf(swept[i]!) >>> 0;
          const ob = bitsOf(other) >>> 0;
          const e: TallyElement = { a: sweepSecond ? ob : sb, b: sweepSecond ? sb : ob, got: g, want: w, error, bound: exact ? 0 : bound, ratio, cancellation: false };
          part.inDomain++;
          if (bad) {
            part.failures++;
            part.binades[sb >>> 23]!++;
            if (part.shown.length < MAX_LISTED) part.shown.push(e);
          }
          const pw = part.worst;
          if (pw === null || (bad && !pw.bad) || (bad === pw.bad && ratio > pw.ratio)) part.worst = { ...e, bad };
        }
      }
      tally.add(part, binary ? bitsOf(other) >>> 0 : undefined);
      p.onProgress?.(tally.elements, total);
    }
    session.close();
  } finally {
    device.drop();
  }
  const ms = performance.now() - t0;
  const summary = tally.summary(binary);
  const notes = [
    `every FP16 pattern of the swept operand through the simulated device, ${N} per replay, in TypeScript (no native core: FP16 has 65536 inputs)`,
    `${outsideRan} input(s) with an in-range result are outside the domain: FP16 storage of the result alone costs more than ${DOMAIN_SHARE} of the bound`,
  ];
  if (binary) notes.push(`operand ${p.operand} swept against ${others.length} fixed FP16 value${others.length === 1 ? '' : 's'} of the other`);
  return {
    target: 'npu4', op: p.op, contract: exact ? 'exact on its FP16 operands' : `normwise ${bound} per element (its relative error) within ±${F16_MAX}`,
    reference: 'oracle-f32', inputs: 'f16', range: p.range, operand: binary ? p.operand : null, fixed: p.fixed, ...summary, crossCheck: null,
    pass: summary.failures === 0 && summary.inDomain > 0, ms, inputsPerSecond: ms > 0 ? total / (ms / 1000) : 0, notes,
  };
}
