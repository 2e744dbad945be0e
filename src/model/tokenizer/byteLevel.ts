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

/** Character (one UTF-16 unit: all are below U+0144) to its byte. */
const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

const utf8 = new TextEncoder();

/** The byte-level form of a string: its UTF-8 bytes, each as its character. */
export function toByteLevel(s: string): string {
  let out = '';
  for (const b of utf8.encode(s)) out += BYTE_TO_CHAR[b]!;
  return out;
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
