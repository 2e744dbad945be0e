/**
 * The report of an exhaustive sweep and the tally that builds it from chunks. Chunks are folded in
 * input order (the sweep holds back one that finishes early), so "the first thousand" failures and the
 * worst element's ties are the same however many threads ran: ContractTally's rules, over 2^32 inputs.
 */
import { bitsOf, fromBits } from '../devices/xdna2/f32.js';
import { f16ToBits } from '../numerics/float16.js';
import { binadeName } from '../numerics/binades.js';
import type { NativeElement } from './nativeSweep.js';

/** The most failing inputs a report lists; the rest are counted. */
export const MAX_LISTED = 1000;

/** One element of a sweep, as people and JSON read it. */
export interface SweptElement {
  /** The swept operand, and its bit pattern (f32: 8 hex digits). */
  readonly input: number;
  readonly bits: string;
  /** Binary ops: the fixed operand. */
  readonly other?: number;
  readonly got: number;
  readonly want: number;
  readonly error: number;
  readonly bound: number;
  readonly ratio: number;
  /** 'cancellation': add's or sub's exact-cancellation promise broken, not the bound. */
  readonly kind: 'bound' | 'cancellation';
}

/** The failures of one binade of the swept operand: |x| in [2^exponent, 2^(exponent+1)) with that sign. */
export interface BinadeFailures {
  readonly sign: '+' | '-';
  /** The unbiased exponent; -127 stands for the subnormals, 128 for infinities and NaN. */
  readonly exponent: number;
  /** The binade as people read it: `[2^5, 2^6)`, `(-2^6, -2^5]`, `subnormals`. */
  readonly range: string;
  readonly failures: number;
}

/** How the two references and the two cores agreed on the sampled inputs. */
export interface CrossCheck {
  readonly samples: number;
  /** Samples where the native core's result differs bit for bit from the TypeScript core's. */
  readonly coreMismatches: number;
  /** Samples where the native reference (libm's, for the transcendentals) and the TypeScript oracle's differ by more than `tolerance`. */
  readonly referenceDisagreements: number;
  /** The largest distance seen between the two references, in f64 units in the last place. */
  readonly maxReferenceUlps: number;
  readonly tolerance: string;
  /** The first few disagreements of either kind. */
  readonly examples: readonly string[];
}

/** One op swept over every input (or every input of the swept operand against each fixed value). */
export interface ExhaustiveReport {
  readonly target: 'xdna2' | 'npu4';
  readonly op: string;
  readonly contract: string;
  readonly reference: 'oracle-f32' | 'oracle-fp64';
  /** The swept operand's type: every f32 pattern (xdna2) or every finite FP16 value (npu4). */
  readonly inputs: 'f32' | 'f16';
  /** The swept bit patterns [from, to): f32 patterns, or FP16 patterns for f16 inputs. */
  readonly range: { readonly from: number; readonly to: number };
  /** Binary ops: which operand is swept, and the other's fixed values. */
  readonly operand: 'a' | 'b' | null;
  readonly fixed: readonly number[] | null;
  readonly elements: number;
  readonly inDomain: number;
  /** inDomain / elements. */
  readonly share: number;
  /** In-domain inputs outside the contract (and broken cancellations), all counted. */
  readonly failures: number;
  /** The first MAX_LISTED of them, in input order. */
  readonly failing: readonly SweptElement[];
  readonly worst: SweptElement | null;
  readonly binades: readonly BinadeFailures[];
  /** Binary ops: the fixed values with failures, and how many each. */
  readonly byFixed: readonly { readonly other: number; readonly failures: number }[];
  /** null where nothing runs natively (npu4). */
  readonly crossCheck: CrossCheck | null;
  readonly pass: boolean;
  readonly ms: number;
  readonly inputsPerSecond: number;
  readonly notes: readonly string[];
}

/** One judged element as the tally takes it (a chunk's, native or not): the native sweep's element. */
export type TallyElement = NativeElement;

/** What one chunk contributes. */
export interface ChunkPart {
  readonly elements: number;
  readonly inDomain: number;
  readonly failures: number;
  readonly worst: (TallyElement & { readonly bad: boolean }) | null;
  readonly shown: readonly TallyElement[];
  /** Failures by pattern >>> 23 of the swept operand's f32 pattern. */
  readonly binades: ArrayLike<number>;
}

/** The name of binade index `i` (pattern >>> 23). */
export const binadeOf: (i: number) => BinadeFailures['range'] = binadeName;

/** Folds chunks, in input order, into a report's counts. */
export class ExhaustiveTally {
  elements = 0;
  inDomain = 0;
  failures = 0;
  private worst: (TallyElement & { readonly bad: boolean }) | null = null;
  private readonly listed: TallyElement[] = [];
  private readonly binades = new Float64Array(512);
  private readonly perFixed = new Map<number, number>();

  /** `inputs`: how the swept operand's bits are shown (the tally itself keeps f32 patterns). */
  constructor(private readonly sweepSecond: boolean, private readonly inputs: 'f32' | 'f16' = 'f32') {}

  /** Adds the next chunk (`other`: its fixed operand, for a binary op). */
  add(c: ChunkPart, other?: number): void {
    this.elements += c.elements;
    this.inDomain += c.inDomain;
    this.failures += c.failures;
    for (let i = 0; i < 512; i++) this.binades[i]! += c.binades[i]!;
    for (const s of c.shown) if (this.listed.length < MAX_LISTED) this.listed.push(s);
    if (other !== undefined && c.failures > 0) this.perFixed.set(other, (this.perFixed.get(other) ?? 0) + c.failures);
    const w = c.worst;
    // ContractTally's rule: a failing element outranks a passing one; among equals the larger ratio, then the first.
    if (w !== null && (this.worst === null || (w.bad && !this.worst.bad) || (w.bad === this.worst.bad && w.ratio > this.worst.ratio))) this.worst = w;
  }

  /** An element as the report lists it (patterns as values, the swept one with its bits). */
  element(e: TallyElement, binary: boolean): SweptElement {
    const swept = binary && this.sweepSecond ? e.b : e.a;
    const other = binary ? (this.sweepSecond ? e.a : e.b) : undefined;
    const bits = this.inputs === 'f16' ? f16ToBits(fromBits(swept)).toString(16).padStart(4, '0') : (swept >>> 0).toString(16).padStart(8, '0');
    return {
      input: fromBits(swept), bits: `0x${bits}`, ...(other !== undefined ? { other: fromBits(other) } : {}),
      got: e.got, want: e.want, error: e.error, bound: e.bound, ratio: e.ratio, kind: e.cancellation ? 'cancellation' : 'bound',
    };
  }

  /** The counts as report fields. */
  summary(binary: boolean): Pick<ExhaustiveReport, 'elements' | 'inDomain' | 'share' | 'failures' | 'failing' | 'worst' | 'binades' | 'byFixed'> {
    const binades: BinadeFailures[] = [];
    for (let i = 0; i < 512; i++) {
      const n = this.binades[i]!;
      if (n > 0) binades.push({ sign: i >= 256 ? '-' : '+', exponent: (i & 0xff) - 127, range: binadeOf(i), failures: n });
    }
    return {
      elements: this.elements, inDomain: this.inDomain, share: this.elements === 0 ? 0 : this.inDomain / this.elements,
      failures: this.failures, failing: this.listed.map((e) => this.element(e, binary)),
      worst: this.worst === null ? null : this.element(this.worst, binary), binades,
      byFixed: [...this.perFixed].map(([other, failures]) => ({ other: fromBits(other), failures })),
    };
  }
}

/** The f32 pattern of a value, as the addon takes an operand. */
export const patternOf = (x: number): number => bitsOf(x) >>> 0;
