/**
 * GPT-2's byte-level alphabet: every byte is one printable character, so a BPE vocabulary of strings
 * covers arbitrary bytes. Printable Latin-1 bytes stand for themselves; the others (controls, space,
 * 0x7f-0xa0, 0xad) take the code points from U+0100 up, in byte order.
 * @internal
 */

function isPrintable(b: number): boolean {
  return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

/** Byte to its character. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const out: string[] = [];
  let next = 0x100;
  for (let b = 0; b < 256; b++) out.push(String.fromCodePoint(isPrintable(b) ? b : next++));
  return out;
})();

/** Byte to its character's code unit. */
const BYTE_CODE = Uint16Array.from(BYTE_TO_CHAR, (c) => c.charCodeAt(0));

/** Character (one UTF-16 unit: all are below U+0144) to its byte. */
const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

const utf8 = new TextEncoder();

/** The byte-level form of a string: its UTF-8 bytes, each as its character. */
export function toByteLevel(s: string): string {
  let printable = true;
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) { ascii = false; break; }
    if (c <= 0x20 || c === 0x7f) printable = false;
  }
  // Printable ASCII stands for itself.
  if (ascii && printable) return s;
  if (s.length <= 64) {
    let out = '';
    if (ascii) for (let i = 0; i < s.length; i++) out += BYTE_TO_CHAR[s.charCodeAt(i)]!;
    else for (const b of utf8.encode(s)) out += BYTE_TO_CHAR[b]!;
    return out;
  }
  // A long piece is built from code units in chunks: one string per character would cost memory per character.
  const bytes = ascii ? null : utf8.encode(s);
  const n = bytes === null ? s.length : bytes.length;
  const parts: string[] = [];
  const chunk = new Uint16Array(8192);
  for (let at = 0; at < n; at += chunk.length) {
    const m = Math.min(chunk.length, n - at);
    for (let k = 0; k < m; k++) chunk[k] = BYTE_CODE[bytes === null ? s.charCodeAt(at + k) : bytes[at + k]!]!;
    parts.push(String.fromCharCode(...chunk.subarray(0, m)));
  }
  return parts.join('');
}

/**
 * The bytes a token stands for. A token whose every character is in the alphabet is those bytes; one
 * with any other character is its own UTF-8 text (Hugging Face's ByteLevel decoder does the same, so
 * an added token such as "<think>" or one with a space decodes to itself).
 */
export function tokenBytes(token: string): Uint8Array {
  const out = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const b = CHAR_TO_BYTE.get(token[i]!);
    if (b === undefined) return utf8.encode(token);
    out[i] = b;
  }
  return out;
}
