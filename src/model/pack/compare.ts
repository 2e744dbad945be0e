/**
 * The per-element checks `gguf verify` makes, each a provable bound on |decoded - GGUF value|:
 * - repack (Q4_0, Q4_1, Q4_K sources): |Δscale|*code + |Δzero|, Δ the bf16 rounding of the source's
 *   own scale and zero, computed from the GGUF alone so a corrupt chunk cannot widen its own bound;
 * - requant: the q4nx encoder's bound, scale/2 + 15*|scale - (max-min)/15| + |zero - min|, with
 *   min and max of the GGUF values of each 32-column group (docs/Q4NX.md, "The encoder");
 * - bf16: half a bf16 ulp of the GGUF value (round to nearest), as the value's own rounding error.
 * To the first two, one f32 ulp of the larger of the two values is added: the GGUF value and the
 * decoded value are each rounded once to f32 (ggml's products are exact, so each side rounds once).
 */
import { roundBF16 } from '../../numerics/float16.js';
import { bf16Round } from './q4Source.js';

/**
 * The f32 slack of one comparison: an upper bound on one f32 ulp of the larger of the two values
 * (|x|*2^-23 for a normal x, 2^-149 below), which covers half an ulp of rounding on each side.
 */
export function f32Slack(a: number, b: number): number {
  return Math.max(Math.abs(a), Math.abs(b)) * 2 ** -23 + 2 ** -149;
}

/**
 * For bf16 tensors: each value's distance to its round-to-nearest-even bf16. A decoded value within
 * that distance is the correctly rounded bf16 (or, at a tie, its equally near neighbour), which is
 * exactly the half-ulp check, without computing an ulp per element.
 */
export function bf16RoundingErrors(ref: Float32Array): Float32Array {
  const u = new Uint32Array(ref.buffer, ref.byteOffset, ref.length);
  const out = new Float32Array(ref.length);
  const o = new Uint32Array(out.buffer);
  for (let i = 0; i < u.length; i++) o[i] = (((u[i]! + 0x7fff + ((u[i]! >>> 16) & 1)) >>> 16) << 16) >>> 0;
  for (let i = 0; i < out.length; i++) out[i] = Math.abs(out[i]! - ref[i]!);
  return out;
}

/** Running error statistics of one tensor. */
export class ErrorStats {
  elements = 0;
  overBound = 0;
  maxError = 0;
  /** The largest error over its own bound (1 or less when every element passes). */
  worstRatio = 0;
  private dot = 0;
  private decSq = 0;
  private refSq = 0;
  private diffSq = 0;

  /** Adds one element with its bound. */
  add(dec: number, ref: number, bound: number): void {
    const e = Math.abs(dec - ref);
    this.elements++;
    // NaN on either side fails: !(e <= bound).
    if (!(e <= bound)) this.overBound++;
    if (e > this.maxError || Number.isNaN(e)) this.maxError = Number.isNaN(e) ? NaN : e;
    const ratio = bound > 0 ? e / bound : e === 0 ? 0 : Infinity;
    if (ratio > this.worstRatio) this.worstRatio = ratio;
    this.dot += dec * ref;
    this.decSq += dec * dec;
    this.refSq += ref * ref;
    this.diffSq += (dec - ref) * (dec - ref);
  }

  /** Cosine similarity of decoded and GGUF values (1 when both are all zero). */
  get cosine(): number {
    if (this.decSq === 0 && this.refSq === 0) return 1;
    return this.dot / Math.sqrt(this.decSq * this.refSq);
  }

  /** RMS of the error over RMS of the GGUF values (0 when both are zero). */
  get relRms(): number {
    if (this.diffSq === 0) return 0;
    return Math.sqrt(this.diffSq / this.refSq);
  }
}

/** |Δscale| and |Δzero| of a repacked group: the bf16 rounding of its source scale and zero (exact). */
export function repackDeltas(scale: number, zero: number): [number, number] {
  return [Math.abs(bf16Round(scale) - scale), Math.abs(bf16Round(zero) - zero)];
}

/** The encoder's bound for a group whose GGUF values span [min, max], without the f32 term. */
export function requantGroupBound(min: number, max: number): number {
  const exact = (max - min) / 15;
  const scale = roundBF16(exact);
  // 2^-30 of the scale: the encoder's f64 division may tip a code at an exact half step.
  return Math.abs(scale) / 2 + 15 * Math.abs(scale - exact) + Math.abs(roundBF16(min) - min) + Math.abs(scale) * 2 ** -30;
}
