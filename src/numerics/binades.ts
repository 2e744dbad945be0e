/**
 * Errors against their bound, binade by binade of the input: the data of the contract report's plots
 * (src/contracts/report.ts). A binade is the f32 pattern's top nine bits (sign and exponent), so 512
 * of them cover every f32, the subnormals and the infinities and NaN each in one of their own.
 */

/** One binade's tally: how many inputs fell in it, how many in the domain, and the worst ratio there. */
export interface BinadeStat {
  /** The f32 pattern >>> 23: 0..255 positive, 256..511 negative. */
  readonly index: number;
  readonly sign: '+' | '-';
  /** The unbiased exponent; -127 stands for the subnormals, 128 for infinities and NaN. */
  readonly exponent: number;
  /** The binade as people read it: `[2^5, 2^6)`, `(-2^6, -2^5]`, `subnormals`. */
  readonly range: string;
  readonly elements: number;
  readonly inDomain: number;
  /** In-domain inputs outside the contract. */
  readonly failures: number;
  /** The largest error / bound over the in-domain inputs (Infinity: an exact op that differs); null when none is in the domain. */
  readonly maxRatio: number | null;
  /** The error of that input. */
  readonly maxError: number | null;
}

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** The binade index of a value, as f32 (pattern >>> 23). */
export function binadeIndex(x: number): number {
  scratch[0] = x;
  return scratchBits[0]! >>> 23;
}

/** The name of binade index `i` (pattern >>> 23). */
export function binadeName(i: number): string {
  const e = (i & 0xff) - 127;
  const neg = i >= 256;
  if (e === -127) return `${neg ? '-' : ''}subnormals`;
  if (e === 128) return neg ? '-inf and NaN' : '+inf and NaN';
  return neg ? `(-2^${e + 1}, -2^${e}]` : `[2^${e}, 2^${e + 1})`;
}

/** The order of binades along the number line: -NaN/inf first, then down to -0, then up from +0. */
export function binadeOrder(i: number): number {
  return i >= 256 ? 511 - i : 256 + i;
}

/** Accumulates the per-binade tally of an op's checks. */
export class BinadeTally {
  private readonly elements = new Float64Array(512);
  private readonly inDomain = new Float64Array(512);
  private readonly failures = new Float64Array(512);
  private readonly ratio = new Float64Array(512).fill(-1);
  private readonly error = new Float64Array(512);

  /** Counts one input (`x`, the value whose binade it falls in); ratio and error only count in the domain. */
  add(x: number, inDomain: boolean, ratio = 0, error = 0, bad = false): void {
    const i = binadeIndex(x);
    this.elements[i]!++;
    if (!inDomain) return;
    this.inDomain[i]!++;
    if (bad) this.failures[i]!++;
    // NaN ratios (0/0 cannot arise, but a NaN error can) count as the worst: they are failures.
    const r = Number.isNaN(ratio) ? Infinity : ratio;
    if (r > this.ratio[i]!) {
      this.ratio[i] = r;
      this.error[i] = error;
    }
  }

  /** The binades that saw any input, in number-line order. */
  stats(): BinadeStat[] {
    const out: BinadeStat[] = [];
    for (let i = 0; i < 512; i++) {
      if (this.elements[i] === 0) continue;
      const seen = this.ratio[i]! >= 0;
      out.push({
        index: i, sign: i >= 256 ? '-' : '+', exponent: (i & 0xff) - 127, range: binadeName(i),
        elements: this.elements[i]!, inDomain: this.inDomain[i]!, failures: this.failures[i]!,
        maxRatio: seen ? this.ratio[i]! : null, maxError: seen ? this.error[i]! : null,
      });
    }
    return out.sort((a, b) => binadeOrder(a.index) - binadeOrder(b.index));
  }
}
