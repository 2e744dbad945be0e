/**
 * The frame every compiled artifact of this project sits in: an 8-byte magic, a u32 format version,
 * the u32 payload length and a CRC-32 of the payload (all little-endian), then the payload. The CRC
 * catches damage that still parses (a flipped digit in a literal), which re-checking cannot.
 */

const FRAME_HEADER_BYTES = 20;

let crcTable: Uint32Array | undefined;
/** CRC-32 (IEEE 802.3, as zlib) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of bytes) crc = crcTable[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Frames a payload under an 8-character ASCII magic and a format version. */
export function frame(magic: string, version: number, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  bytes.set(new TextEncoder().encode(magic), 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, version, true);
  view.setUint32(12, payload.length, true);
  view.setUint32(16, crc32(payload), true);
  bytes.set(payload, FRAME_HEADER_BYTES);
  return bytes;
}

/**
 * The payload of framed bytes, or why they are not a frame of this magic and version. `what` names the
 * kind of artifact in the reasons ("a CPU artifact", "an NPU blob").
 */
export function unframe(bytes: unknown, magic: string, version: number, what: string): { payload: Uint8Array } | { problem: string } {
  if (!(bytes instanceof Uint8Array)) return { problem: `${what} must be bytes` };
  if (bytes.length < FRAME_HEADER_BYTES) return { problem: `${bytes.length} bytes, shorter than the ${FRAME_HEADER_BYTES}-byte header of ${what}` };
  if (new TextDecoder().decode(bytes.subarray(0, 8)) !== magic) return { problem: `not ${what} (bad magic)` };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v = view.getUint32(8, true);
  if (v !== version) return { problem: `format version ${v} of ${what}; this build reads ${version}` };
  const length = view.getUint32(12, true);
  if (length !== bytes.length - FRAME_HEADER_BYTES) return { problem: `the header says ${length} payload bytes, ${what} holds ${bytes.length - FRAME_HEADER_BYTES}` };
  const payload = bytes.subarray(FRAME_HEADER_BYTES);
  if (crc32(payload) !== view.getUint32(16, true)) return { problem: `the payload of ${what} does not match its checksum` };
  return { payload };
}
