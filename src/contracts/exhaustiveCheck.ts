/**
 * The sweep's cross-check: on a random sample of every chunk, the native core's results against the
 * simulated device's own kernels (src/devices/xdna2/kernels.ts over CORE_MATH), and the native
 * reference (libm's, for the transcendentals) against the TypeScript oracle's (the CPU oracle run on a
 * one-op program). The sample is a few runs of
 * consecutive patterns, aligned as the sweep's blocks are, so the native side runs the same lane
 * routines the sweep ran.
 *
 * What counts as a disagreement: any bit difference between the cores (NaN matches NaN); for an f32
 * reference (exact contracts) any bit difference; for an f64 reference more than REFERENCE_ULPS units
 * in the last place of f64. Both references are within a few f64 units of the true value (glibc's exp,
 * log and erf within 1, its tanh within 2; V8's fdlibm tanh within about 2.5; erf.ts within 0.51), and
 * over [0.125, 1) libm's tanh and V8's are measured up to 3 units apart, so a larger distance is a
 * defect in one of them: reported, and the sweep does not pass on a reference it cannot trust. The
 * contracts' bounds are some 2^30 times coarser than this tolerance.
 */
import { CORE_MATH } from '../devices/xdna2/coreMath.js';
import { awayFromZero } from '../devices/xdna2/f32.js';
import type { CoreBinary, CoreUnary } from '../devices/xdna2/kernels.js';
import { binaryKernel, isCoreBinary, unaryKernel } from '../devices/xdna2/kernels.js';
import { parseProgram } from '../ir/codec.js';
import type { CheckedProgram } from '../ir/checked.js';
import { checkProgram } from '../ops/validate.js';
import { runProgram } from '../oracle/index.js';
import type { TensorMap } from '../oracle/types.js';
import type { CrossCheck } from './exhaustiveReport.js';
import type { NativeFault, SweepAddon } from './nativeSweep.js';

/** Two f64 references further apart than this are a disagreement. */
const REFERENCE_ULPS = 8;
/** Runs of consecutive patterns sampled per chunk, and their length (the addon's LANES). */
export const SAMPLE_RUNS = 4;
export const RUN_LENGTH = 16;
const MAX_EXAMPLES = 5;

const F64 = new Float64Array(1);
const I64 = new BigInt64Array(F64.buffer);

/** An f64's pattern as a monotonic integer key (sign-magnitude made two's complement). */
function key64(x: number): bigint {
  F64[0] = x;
  const b = I64[0]!;
  return b < 0n ? -(b & 0x7fffffffffffffffn) : b;
}

/** The distance of two f64 in units in the last place: 0 for equal ones (NaN and NaN too). */
function ulps64(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  if (a === b) return 0;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Infinity;
  const d = key64(a) - key64(b);
  return Number(d < 0n ? -d : d);
}

const sameF32 = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

/** The one-op program the oracle runs on a sample. */
function sampleProgram(op: string, n: number, binary: boolean): CheckedProgram {
  const arg = (name: string) => ({ name, role: 'activation', dtype: 'f32', shape: [n] });
  return checkProgram(parseProgram({
    format: 'program@1', name: `sweep-check-${op}`, args: binary ? [arg('a'), arg('b')] : [arg('a')],
    eqns: [{ op, in: binary ? ['a', 'b'] : ['a'], out: 'y' }], results: ['y'], state: {},
  }));
}

/** Accumulates the cross-check of one sweep. */
export class CrossChecker {
  private samples = 0;
  private coreMismatches = 0;
  private disagreements = 0;
  private maxUlps = 0;
  private readonly examples: string[] = [];
  private readonly program: CheckedProgram;
  private readonly binary: boolean;

  constructor(
    private readonly addon: SweepAddon,
    private readonly op: CoreUnary | CoreBinary,
    private readonly rounded: boolean,
    /** The addon's fault (exhaustive.ts SweepFault). */
    private readonly fault: NativeFault | undefined,
    /** Whether the TypeScript core is broken the same way (a 'core' fault). */
    private readonly shared: boolean,
    /** The portable lane routines, as the sweep runs them. */
    private readonly generic: boolean,
  ) {
    this.binary = isCoreBinary(op);
    this.program = sampleProgram(op, SAMPLE_RUNS * RUN_LENGTH, this.binary);
  }

  /** Checks runs of RUN_LENGTH patterns from each of `starts` (`fixed`: the other operand's pattern). */
  check(starts: readonly number[], fixed?: number, sweepSecond = false): void {
    const n = starts.length * RUN_LENGTH;
    if (n !== SAMPLE_RUNS * RUN_LENGTH) throw new Error(`a sample is ${SAMPLE_RUNS} runs`);
    const swept = new Uint32Array(n);
    starts.forEach((s, k) => { for (let i = 0; i < RUN_LENGTH; i++) swept[k * RUN_LENGTH + i] = (s + i) >>> 0; });
    const other = new Uint32Array(n).fill(fixed ?? 0);
    const a = sweepSecond ? other : swept;
    const b = sweepSecond ? swept : other;
    const native = this.addon.evaluate({
      op: this.op, rounded: this.rounded, a, ...(this.binary ? { b } : {}), sweepSecond, lanes: true, generic: this.generic, ...(this.fault ? { fault: this.fault } : {}),
    });
    const core = this.tsCore(a, b, swept);
    const view = (u: Uint32Array) => Float64Array.from(new Float32Array(u.buffer, u.byteOffset, u.length));
    const step: TensorMap = this.binary ? { a: tensor(view(a)), b: tensor(view(b)) } : { a: tensor(view(a)) };
    const steps = [step];
    const want = runProgram(this.program, { weights: {}, state: {}, steps }, { fp64: !this.rounded })[0]!.results['y']!.data;
    for (let i = 0; i < n; i++) {
      this.samples++;
      const operands = this.binary ? `${fmt(a[i]!)}, ${fmt(b[i]!)}` : fmt(a[i]!);
      if (!sameF32(native.got[i]!, core[i]!)) {
        this.coreMismatches++;
        this.example(`${this.op}(${operands}): the native core gives ${native.got[i]}, the TypeScript core ${core[i]}`);
      }
      const d = this.rounded ? (sameF32(native.want[i]!, want[i]!) ? 0 : Infinity) : ulps64(native.want[i]!, want[i]!);
      if (Number.isFinite(d)) this.maxUlps = Math.max(this.maxUlps, d);
      if (d > (this.rounded ? 0 : REFERENCE_ULPS)) {
        this.disagreements++;
        this.example(`${this.op}(${operands}): the native reference is ${native.want[i]}, the TypeScript oracle's ${want[i]}${Number.isFinite(d) ? ` (${d} f64 ulps apart)` : ''}`);
      }
    }
  }

  /** The simulated device's kernel on the sample, with the same fault as the native core's. */
  private tsCore(a: Uint32Array, b: Uint32Array, swept: Uint32Array): Float64Array {
    const bytes = (u: Uint32Array) => new Uint8Array(u.slice().buffer);
    let out: Float64Array;
    if (isCoreBinary(this.op)) {
      const r = binaryKernel(this.op, CORE_MATH, bytes(a), bytes(b), a.length);
      out = this.op === 'ge' ? Float64Array.from(r) : Float64Array.from(new Float32Array(r.buffer));
    } else {
      out = Float64Array.from(new Float32Array(unaryKernel(this.op, CORE_MATH, bytes(a)).buffer));
    }
    const f = this.fault;
    if (f && f.kind === 'core' && this.shared) {
      for (let i = 0; i < out.length; i++) {
        if (((swept[i]! >>> 23) & 0xff) === f.exponent && Number.isFinite(out[i]!)) out[i] = awayFromZero(out[i]!, f.ulps);
      }
    }
    return out;
  }

  private example(s: string): void {
    if (this.examples.length < MAX_EXAMPLES) this.examples.push(s);
  }

  /** The report's cross-check. */
  result(): CrossCheck {
    return {
      samples: this.samples, coreMismatches: this.coreMismatches, referenceDisagreements: this.disagreements, maxReferenceUlps: this.maxUlps,
      tolerance: this.rounded ? 'bit for bit (f32 references)' : `${REFERENCE_ULPS} f64 ulps`, examples: [...this.examples],
    };
  }
}

function tensor(data: Float64Array) {
  return { dtype: 'f32' as const, shape: [data.length], data };
}

function fmt(bits: number): string {
  const v = new Float32Array(new Uint32Array([bits]).buffer)[0]!;
  return Object.is(v, -0) ? '-0' : String(v);
}
