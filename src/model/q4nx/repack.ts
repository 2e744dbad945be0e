/**
 * Q4_K-like chunks repacked as q4_1, so code that reads q4_1 runs Q4_K weights unchanged. The codes
 * carry over bit for bit (both kinds put even rows in the low nibble; only the byte order differs),
 * and per (row, group) scale = bf16(S*scale), zero = bf16(M*min): exact apart from those two roundings
 * (round to nearest, ties to even), so each weight moves by at most 15*|Δscale| + |Δzero|.
 */
import { Q4nxError } from '../../errors/index.js';
import { roundBF16 } from '../../numerics/float16.js';
import { CHUNK_BYTES, TILE_ROWS } from './chunks.js';
import { bf16At } from './decode.js';
import { putBf16 } from './encode.js';

/** Repacks one 4736-B Q4_K-like chunk into a 5120-B q4_1 chunk. */
export function q4kChunkToQ41(chunk: Uint8Array): Uint8Array {
  if (chunk.length !== CHUNK_BYTES.q4k) throw new Q4nxError(null, `a q4k chunk has ${CHUNK_BYTES.q4k} bytes, got ${chunk.length}`);
  const out = new Uint8Array(CHUNK_BYTES.q4_1);
  for (let r = 0; r < TILE_ROWS; r++) {
    const S = bf16At(chunk, 4608 + 2 * r);
    const M = bf16At(chunk, 4672 + 2 * r);
    for (let g = 0; g < 8; g++) {
      const i = g * 32 + r;
      // S*scale and M*min are exact in f64 (8-bit by 8-bit significands), so this rounds once.
      putBf16(out, 2 * i, roundBF16(S * chunk[i]!));
      putBf16(out, 512 + 2 * i, roundBF16(M * chunk[256 + i]!));
    }
  }
  // Q4_K code byte 512 + k*16 + h*8 + j holds rows h*16 + 2j (low) and + 1 (high) of column k;
  // q4_1 keeps the same pair at 1024 + h*2048 + k*8 + j.
  for (let k = 0; k < 256; k++) {
    for (let h = 0; h < 2; h++) {
      const src = 512 + k * 16 + h * 8;
      out.set(chunk.subarray(src, src + 8), 1024 + h * 2048 + k * 8);
    }
  }
  return out;
}

/** Repacks a whole tensor's Q4_K-like chunks (tiles x 4736 B) into q4_1 chunks (tiles x 5120 B). */
export function q4kTensorToQ41(data: Uint8Array): Uint8Array {
  if (data.length % CHUNK_BYTES.q4k !== 0) throw new Q4nxError(null, `${data.length} bytes are not whole ${CHUNK_BYTES.q4k}-byte chunks`);
  const tiles = data.length / CHUNK_BYTES.q4k;
  const out = new Uint8Array(tiles * CHUNK_BYTES.q4_1);
  for (let t = 0; t < tiles; t++) {
    out.set(q4kChunkToQ41(data.subarray(t * CHUNK_BYTES.q4k, (t + 1) * CHUNK_BYTES.q4k)), t * CHUNK_BYTES.q4_1);
  }
  return out;
}
