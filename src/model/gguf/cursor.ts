/**
 * A little-endian read cursor over a window of a GGUF file. Every read is bounded by the file's real
 * size, so a hostile count or length becomes a GgufError, never an allocation. The window may be a
 * prefix of the file (an opened file reads its header in growing prefixes): a read past the window but
 * inside the file throws NeedMoreBytes, which the opener answers with a larger window.
 * @internal
 */
import { GgufError } from '../../errors/index.js';

/** The window ended before the file did; retry with at least `needed` bytes. @internal */
export class NeedMoreBytes extends Error {
  constructor(readonly needed: number) { super(`need ${needed} bytes of header`); }
}

// Invalid UTF-8 in a key or tensor name is refused; a value string is decoded leniently, because a
// vocabulary with one stray byte must not make a whole model unreadable.
const strict = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

/** @internal */
export class Cursor {
  pos = 0;
  private readonly view: DataView;

  /** `total`: the size of the whole file; `bytes` holds its first bytes (all of them, or a prefix). */
  constructor(readonly bytes: Uint8Array, readonly total: number) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Bytes left in the file after the cursor. */
  get remaining(): number { return this.total - this.pos; }

  fail(reason: string, at = this.pos): never {
    throw new GgufError(at, reason);
  }

  /** Makes sure `n` more bytes exist, naming `what` when the file ends first. */
  need(n: number, what: string): void {
    if (n > this.remaining) this.fail(`truncated: ${what} needs ${n} bytes, ${this.remaining} left in the file`);
    if (this.pos + n > this.bytes.length) throw new NeedMoreBytes(this.pos + n);
  }

  u8(what: string): number { this.need(1, what); return this.view.getUint8(this.pos++); }
  i8(what: string): number { this.need(1, what); return this.view.getInt8(this.pos++); }
  u16(what: string): number { this.need(2, what); const v = this.view.getUint16(this.pos, true); this.pos += 2; return v; }
  i16(what: string): number { this.need(2, what); const v = this.view.getInt16(this.pos, true); this.pos += 2; return v; }
  u32(what: string): number { this.need(4, what); const v = this.view.getUint32(this.pos, true); this.pos += 4; return v; }
  i32(what: string): number { this.need(4, what); const v = this.view.getInt32(this.pos, true); this.pos += 4; return v; }
  f32(what: string): number { this.need(4, what); const v = this.view.getFloat32(this.pos, true); this.pos += 4; return v; }
  f64(what: string): number { this.need(8, what); const v = this.view.getFloat64(this.pos, true); this.pos += 8; return v; }
  u64(what: string): bigint { this.need(8, what); const v = this.view.getBigUint64(this.pos, true); this.pos += 8; return v; }
  i64(what: string): bigint { this.need(8, what); const v = this.view.getBigInt64(this.pos, true); this.pos += 8; return v; }

  /**
   * A u64 count of items each at least `minItemBytes` long: refused when negative as ggml's int64
   * reading sees it, or when the rest of the file cannot hold that many items.
   */
  count(what: string, minItemBytes: number): number {
    const at = this.pos;
    const n = this.u64(what);
    if (n >= 1n << 63n) this.fail(`${what} ${n} is negative as a signed 64-bit count`, at);
    if (n * BigInt(minItemBytes) > BigInt(this.remaining)) {
      this.fail(`${what} ${n} cannot fit in the ${this.remaining} bytes left in the file`, at);
    }
    return Number(n);
  }

  /** A GGUF string: a u64 byte length, then UTF-8 bytes. */
  string(what: string, strictUtf8: boolean): string {
    const at = this.pos;
    const n = this.count(`${what} length`, 1);
    this.need(n, what);
    const raw = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    if (!strictUtf8) return lenient.decode(raw);
    try {
      return strict.decode(raw);
    } catch {
      return this.fail(`${what} is not valid UTF-8`, at);
    }
  }
}
