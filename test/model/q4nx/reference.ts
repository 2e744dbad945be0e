/**
 * Independent reference decoders for the tests, written straight from docs/Q4NX.md's byte tables with
 * plain loops and f32 arithmetic, sharing no code with src/: a bug in src cannot hide by being copied
 * here. The q4_1 code address is spelled as V1 spells it (weight index rb*4096 + k*16 + r%16, byte
 * index/2, low nibble when even), and Q8 layout b with its (k/32)*512 + (k%32)*16 form, so each is a
 * different spelling of the same address than src uses.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** bf16 little-endian at byte `o`: the top half of an f32. */
export function refBf16(b: Uint8Array, o: number): number {
  u32[0] = ((b[o]! | (b[o + 1]! << 8)) << 16) >>> 0;
  return f32[0]!;
}

/** A 32 x 256 tile as rows of columns. */
export type RefTile = number[][];

export function refQ41(c: Uint8Array): RefTile {
  const t: RefTile = [];
  for (let r = 0; r < 32; r++) {
    const row: number[] = [];
    for (let k = 0; k < 256; k++) {
      const g = Math.floor(k / 32);
      const scale = refBf16(c, 2 * (g * 32 + r));
      const zero = refBf16(c, 512 + 2 * (g * 32 + r));
      const idx = Math.floor(r / 16) * 4096 + k * 16 + (r % 16);
      const byte = c[1024 + Math.floor(idx / 2)]!;
      const code = idx % 2 === 0 ? byte % 16 : Math.floor(byte / 16);
      row.push(Math.fround(Math.fround(code * scale) + zero));
    }
    t.push(row);
  }
  return t;
}

export function refQ4k(c: Uint8Array): RefTile {
  const t: RefTile = [];
  for (let r = 0; r < 32; r++) {
    const S = refBf16(c, 4608 + 2 * r);
    const M = refBf16(c, 4672 + 2 * r);
    const row: number[] = [];
    for (let k = 0; k < 256; k++) {
      const g = Math.floor(k / 32);
      const scale = c[g * 32 + r]!;
      const min = c[256 + g * 32 + r]!;
      const byte = c[512 + k * 16 + Math.floor(r / 2)]!;
      const code = r % 2 === 0 ? byte % 16 : Math.floor(byte / 16);
      row.push(Math.fround(Math.fround(Math.fround(S * scale) * code) + Math.fround(M * min)));
    }
    t.push(row);
  }
  return t;
}

export function refQ8CodeByte(layout: 'a' | 'b', r: number, k: number): number {
  if (layout === 'a') return 512 + k * 32 + r;
  return 512 + Math.floor(r / 16) * 4096 + Math.floor(k / 32) * 512 + (k % 32) * 16 + (r % 16);
}

export function refQ8(c: Uint8Array, layout: 'a' | 'b'): RefTile {
  const t: RefTile = [];
  for (let r = 0; r < 32; r++) {
    const row: number[] = [];
    for (let k = 0; k < 256; k++) {
      const d = refBf16(c, 2 * (Math.floor(k / 32) * 32 + r));
      const b = c[refQ8CodeByte(layout, r, k)]!;
      row.push(Math.fround(d * (b >= 128 ? b - 256 : b)));
    }
    t.push(row);
  }
  return t;
}

/** A seeded generator (mulberry32), so a failing case can be replayed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A bf16 pattern of moderate magnitude (2^-12 .. 2^4), either sign, as 2 LE bytes at `o`. */
function putRandomBf16(b: Uint8Array, o: number, rand: () => number, signed = true): void {
  const exp = 127 - 12 + Math.floor(rand() * 16);
  const sign = signed && rand() < 0.5 ? 0x8000 : 0;
  const bits = sign | (exp << 7) | Math.floor(rand() * 128);
  b[o] = bits & 0xff;
  b[o + 1] = bits >> 8;
}

/** A random chunk of `size` bytes whose bf16 fields hold moderate values; `bf16At` lists their offsets. */
export function randomChunk(size: number, bf16Fields: readonly [number, number][], rand: () => number): Uint8Array {
  const c = new Uint8Array(size);
  for (let i = 0; i < size; i++) c[i] = Math.floor(rand() * 256);
  for (const [from, to] of bf16Fields) for (let o = from; o < to; o += 2) putRandomBf16(c, o, rand);
  return c;
}

/** The bf16 fields of each kind: [from, to) byte ranges. */
export const BF16_FIELDS = {
  q4_1: [[0, 1024]] as [number, number][],
  q4k: [[4608, 4736]] as [number, number][],
  q8: [[0, 512]] as [number, number][],
};
