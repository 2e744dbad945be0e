/**
 * The exact source types (Q4_0, Q4_1, Q4_K) read as q4_1 groups: for each 32-column group of a row, the
 * scale and zero with which `code*scale + zero` gives ggml's value, and each column's 4-bit code.
 *   Q4_0: scale d, zero -8d;  Q4_1: scale d, zero m;  Q4_K sub-block j: scale d*sc_j, zero -dmin*mn_j.
 * Scales and zeros are exact in f64 (an f16 times a 6-bit integer), so the only error the repack adds
 * is their rounding to bf16. Both the packer and the verifier read rows through here.
 */
import { f16FromBits, roundBF16 } from '../../numerics/float16.js';
import { scaleMinK4 } from '../gguf/dequant.js';

/** A source type whose codes carry over into q4_1. */
export type ExactType = 'Q4_0' | 'Q4_1' | 'Q4_K';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * roundBF16, fast for the values the repack rounds: an f16 times a small integer is exact in f32, so
 * round to nearest even on the f32 bits gives the same bf16; anything else goes through roundBF16.
 */
export function bf16Round(x: number): number {
  if (Math.fround(x) !== x || !Number.isFinite(x)) return roundBF16(x);
  f32[0] = x;
  const u = u32[0]!;
  u32[0] = (((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) << 16) >>> 0;
  return f32[0];
}

let halfTable: Float64Array | undefined;

function halves(): Float64Array {
  if (halfTable === undefined) {
    halfTable = new Float64Array(65536);
    for (let b = 0; b < 65536; b++) halfTable[b] = f16FromBits(b);
  }
  return halfTable;
}

/**
 * Reads one row: `scales[G]`, `zeros[G]` for each 32-column group G, and `codes[k]` (0..15) for each
 * column k. `row` holds exactly the row's blocks.
 */
export function readQ4Row(type: ExactType, row: Uint8Array, cols: number, scales: Float64Array, zeros: Float64Array, codes: Uint8Array): void {
  const h = halves();
  const half = (o: number): number => h[row[o]! | (row[o + 1]! << 8)]!;
  if (type === 'Q4_K') {
    for (let b = 0; b < cols / 256; b++) {
      const o = b * 144;
      const d = half(o);
      const dmin = half(o + 2);
      for (let j = 0; j < 8; j++) {
        const [sc, mn] = scaleMinK4(row, o + 4, j);
        const G = b * 8 + j;
        scales[G] = d * sc;
        // -0 when mn is 0: keep it a plain 0 so it rounds and prints as one.
        zeros[G] = mn === 0 ? 0 : -dmin * mn;
        const qs = o + 16 + (j >> 1) * 32;
        const shift = (j & 1) * 4;
        for (let l = 0; l < 32; l++) codes[G * 32 + l] = (row[qs + l]! >> shift) & 15;
      }
    }
    return;
  }
  const size = type === 'Q4_0' ? 18 : 20;
  const qs = type === 'Q4_0' ? 2 : 4;
  for (let G = 0; G < cols / 32; G++) {
    const o = G * size;
    const d = half(o);
    scales[G] = d;
    zeros[G] = type === 'Q4_0' ? (d === 0 ? 0 : -8 * d) : half(o + 2);
    for (let j = 0; j < 16; j++) {
      const q = row[o + qs + j]!;
      codes[G * 32 + j] = q & 15;
      codes[G * 32 + j + 16] = q >> 4;
    }
  }
}
