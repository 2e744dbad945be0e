/**
 * The bookkeeping of XDNA2 contract verification: the per-op tally of element checks that becomes a
 * ContractReport (worst element, failures, pass). It judges numbers only, so it knows nothing of where
 * they were computed (src/contracts/xdna2.ts runs the device and the oracle).
 */
import type { OpContract } from '../../targets/contract.js';
import { withinContract } from '../../targets/contract.js';
import type { BinadeStat } from '../../numerics/binades.js';
import { BinadeTally } from '../../numerics/binades.js';

/** The worst element of an op's verification. */
export interface ContractWorst {
  readonly got: number;
  readonly want: number;
  /** |got - want| (Infinity for an unmatched NaN or infinity). */
  readonly error: number;
  /** What the contract allows for this element (0 for exact). */
  readonly bound: number;
  /** error / bound: above 1 is a failure (Infinity for an exact op that differs). */
  readonly ratio: number;
  /** The element's operands (a row's first few for a reduction). */
  readonly operands: readonly number[];
}

/** One op's verification against its contract. */
export interface ContractReport {
  readonly op: string;
  /** The contract, as people read it. */
  readonly contract: string;
  /** What the result is compared with: the oracle's f32 result or its fp64 reference. */
  readonly reference: 'oracle-f32' | 'oracle-fp64';
  /** Elements checked, and how many lie in the contract's domain (outside it nothing is promised). */
  readonly elements: number;
  readonly inDomain: number;
  /** In-domain elements outside the bound, plus failures of the op's extra promises. */
  readonly failures: number;
  /** The in-domain element closest to (or furthest past) its bound; null when none is in the domain. */
  readonly worst: ContractWorst | null;
  readonly pass: boolean;
  /** What else was checked, and the first few extra failures. */
  readonly notes: readonly string[];
  /** Error / bound per binade of the element's largest operand (its input, for a unary op). */
  readonly binades: readonly BinadeStat[];
}

/** The operand whose binade an element counts in: the largest in magnitude (a NaN first), sign kept. */
function scaleOf(operands: readonly number[]): number {
  let m = 0;
  for (const x of operands) {
    if (Number.isNaN(x)) return x;
    if (Math.abs(x) > Math.abs(m)) m = x;
  }
  return m;
}

const MAX_NOTES = 5;

/** Accumulates one op's element checks. */
export class ContractTally {
  private elements = 0;
  private inDomain = 0;
  private failures = 0;
  private worst: ContractWorst | null = null;
  private worstBad = false;
  private readonly notes: string[] = [];
  private extraShown = 0;
  private readonly binades = new BinadeTally();

  constructor(
    readonly op: string,
    readonly contract: string,
    private readonly c: OpContract,
    readonly reference: 'oracle-f32' | 'oracle-fp64',
  ) {}

  /** Checks one element: the core's result, the reference's, and the element's operands. */
  check(got: number, want: number, operands: readonly number[]): void {
    this.elements++;
    const r = withinContract(this.c, got, want, operands);
    const scale = scaleOf(operands);
    if (!r.inDomain) {
      this.binades.add(scale, false);
      return;
    }
    this.inDomain++;
    const bad = !r.ok;
    if (bad) this.failures++;
    const ratio = bad && !(r.error > r.bound) ? Infinity : r.bound > 0 ? r.error / r.bound : r.error > 0 ? Infinity : 0;
    this.binades.add(scale, true, ratio, r.error, bad);
    // A failing element outranks a passing one; among equals the larger ratio, then the first.
    if (this.worst === null || (bad && !this.worstBad) || (bad === this.worstBad && ratio > this.worst.ratio)) {
      this.worst = { got, want, error: r.error, bound: r.bound, ratio, operands: operands.slice(0, 4) };
      this.worstBad = bad;
    }
  }

  /** Counts a failure of one of the op's promises beyond its bound (exact cancellation, bit patterns). */
  extraFailure(message: string): void {
    this.failures++;
    if (this.extraShown++ < MAX_NOTES) this.notes.push(message);
  }

  /** Records what else was checked. */
  note(message: string): void {
    if (!this.notes.includes(message)) this.notes.push(message);
  }

  /** The op's report. */
  report(): ContractReport {
    return {
      op: this.op, contract: this.contract, reference: this.reference, elements: this.elements,
      inDomain: this.inDomain, failures: this.failures, worst: this.worst, pass: this.failures === 0 && this.inDomain > 0,
      notes: [...this.notes], binades: this.binades.stats(),
    };
  }
}
