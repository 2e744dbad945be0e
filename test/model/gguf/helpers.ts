/**
 * Test helpers that share no code with src/model/gguf: a raw little-endian byte builder for hand-made
 * (hostile) GGUF files, a seeded generator, and an assertion that a call throws GgufError.
 */
import { expect } from 'chai';
import { GgufError } from '../../../src/errors/index.js';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';

/** Builds bytes field by field, so a test can write any header, valid or not. */
export class Raw {
  private parts: number[] = [];
  get length(): number { return this.parts.length; }
  u8(v: number): this { this.parts.push(v & 0xff); return this; }
  u32(v: number): this { for (let i = 0; i < 4; i++) this.parts.push((v >>> (8 * i)) & 0xff); return this; }
  u64(v: bigint | number): this {
    const b = BigInt.asUintN(64, BigInt(v));
    for (let i = 0n; i < 8n; i++) this.parts.push(Number((b >> (8n * i)) & 0xffn));
    return this;
  }
  f32(v: number): this { const d = new DataView(new ArrayBuffer(4)); d.setFloat32(0, v, true); for (let i = 0; i < 4; i++) this.u8(d.getUint8(i)); return this; }
  bytes(b: ArrayLike<number>): this { for (let i = 0; i < b.length; i++) this.parts.push(b[i]!); return this; }
  str(s: string): this { const b = new TextEncoder().encode(s); return this.u64(b.length).bytes(b); }
  /** A GGUF header start: magic, version, counts. */
  header(nTensors: bigint | number, nKv: bigint | number, version = 3): this {
    return this.bytes([0x47, 0x47, 0x55, 0x46]).u32(version).u64(nTensors).u64(nKv);
  }
  /** A key-value pair of type u32 (4). */
  kvU32(key: string, v: number): this { return this.str(key).u32(4).u32(v); }
  /** A tensor info. */
  tensor(name: string, dims: (number | bigint)[], type: number, offset: number | bigint): this {
    this.str(name).u32(dims.length);
    for (const d of dims) this.u64(d);
    return this.u32(type).u64(offset);
  }
  /** Zero bytes up to a multiple of `a`. */
  pad(a = 32): this { while (this.parts.length % a !== 0) this.parts.push(0); return this; }
  zeros(n: number): this { for (let i = 0; i < n; i++) this.parts.push(0); return this; }
  build(): Uint8Array { return Uint8Array.from(this.parts); }
}

/** mulberry32, written again here so tests do not lean on src. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Asserts that fn throws a GgufError whose reason matches `re`; returns the error. */
export function expectGguf(fn: () => unknown, re: RegExp): GgufError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(GgufError);
    const g = e as GgufError;
    expect(g.code).to.equal('GgufError');
    expect(g.reason).to.match(re);
    expect(g.offset).to.be.a('number');
    return g;
  }
  expect.fail(`expected a GgufError matching ${re}`);
}

/** One key of every value type, at its extremes, and nested arrays. */
export const EVERY_TYPE: ReadonlyMap<string, GgufValue> = new Map<string, GgufValue>([
  ['t.u8', gv.u8(255)], ['t.i8', gv.i8(-128)], ['t.u16', gv.u16(65535)], ['t.i16', gv.i16(-32768)],
  ['t.u32', gv.u32(0xffffffff)], ['t.i32', gv.i32(-0x80000000)], ['t.f32', gv.f32(Math.fround(3.14159))],
  ['t.bool', gv.bool(true)], ['t.bool0', gv.bool(false)], ['t.string', gv.str('héllo, 世界 🎉')], ['t.empty', gv.str('')],
  ['t.u64', gv.u64(2n ** 64n - 1n)], ['t.i64', gv.i64(-(2n ** 63n))], ['t.f64', gv.f64(-1.2345678901234568e-300)],
  ['t.f32neg0', gv.f32(-0)],
  ['a.u8', gv.numbers('u8', [0, 1, 255])], ['a.i16', gv.numbers('i16', [-1, 2])], ['a.f32', gv.numbers('f32', [0.5, -2])],
  ['a.f64', gv.numbers('f64', [Math.PI])], ['a.i32', gv.numbers('i32', [])], ['a.u64', gv.bigints('u64', [0n, 2n ** 63n])],
  ['a.i64', gv.bigints('i64', [-1n])], ['a.bool', gv.bools([true, false, true])], ['a.str', gv.strings(['a', '', 'ç'])],
  ['a.nested', gv.arrays([gv.numbers('u32', [1, 2]), gv.strings(['x']), gv.arrays([gv.bools([false])]), gv.arrays([])])],
]);

/** True when two float arrays hold the same bit patterns (chai's deep equal is slow on large arrays). */
export function sameFloats(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** MiniCPM4-like metadata: the three scales whose loss made it decode punctuation soup. */
export const MINICPM = new Map<string, GgufValue>([
  ['general.architecture', gv.str('minicpm')],
  ['minicpm.block_count', gv.u32(32)],
  ['minicpm.embedding_scale', gv.f32(12)],
  ['minicpm.residual_scale', gv.f32(Math.fround(1.4 / Math.sqrt(32)))],
  ['minicpm.logit_scale', gv.f32(0.25)],
  ['tokenizer.ggml.scores', gv.numbers('f32', [0, 1])],
]);
export const MINICPM_CONFIG = { architectures: ['MiniCPMForCausalLM'], scale_emb: 12, scale_depth: 1.4, dim_model_base: 256, hidden_size: 1024 };

export const GEMMA2 = new Map<string, GgufValue>([
  ['general.architecture', gv.str('gemma2')],
  ['gemma2.attn_logit_softcapping', gv.f32(50)],
  ['gemma2.final_logit_softcapping', gv.f32(30)],
]);
