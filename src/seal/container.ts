/**
 * The sealed container of one kernel file: AES-256-GCM under the kernel key, opened in memory only.
 *
 *   offset  size  field
 *   0       8     magic   "1BPKCRYP" (ASCII)
 *   8       1     version 0x01
 *   9       12    nonce   random, fresh for every seal
 *   21      n     ciphertext (same length as the clear file)
 *   21+n    16    GCM tag
 *
 * The additional authenticated data is the 21-byte header followed by the file's set-relative POSIX
 * path in UTF-8. The header is in the AAD so a changed version byte cannot pass as another format; the
 * path is in it so a sealed file renamed or moved to another kernel's place fails to open, even though
 * its bytes are intact. The header has a fixed length, so header ‖ path is unambiguous.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SealError } from '../errors/index.js';
import { checkKernelKey } from './kernelKey.js';

/** The container's magic, "1BPKCRYP". */
export const SEAL_MAGIC: Uint8Array = Buffer.from('1BPKCRYP', 'ascii');
/** The one container version this build writes and opens. */
export const SEAL_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes before the ciphertext: magic, version, nonce. */
export const HEADER_BYTES = SEAL_MAGIC.length + 1 + NONCE_BYTES;
/** The smallest container: the header and the tag around an empty file. */
export const MIN_SEALED_BYTES = HEADER_BYTES + TAG_BYTES;

/** True when `bytes` begin with the container magic (a file that is already sealed). */
export function hasSealMagic(bytes: Uint8Array): boolean {
  return bytes.length >= SEAL_MAGIC.length && Buffer.from(bytes.subarray(0, SEAL_MAGIC.length)).equals(SEAL_MAGIC);
}

function aad(header: Uint8Array, path: string): Buffer {
  return Buffer.concat([header, Buffer.from(path, 'utf8')]);
}

/** Seals `clear` for the set-relative `path` under the 32-byte kernel key. */
export function sealBytes(clear: Uint8Array, path: string, kernelKey: Uint8Array): Uint8Array {
  checkKernelKey(kernelKey);
  const header = Buffer.alloc(HEADER_BYTES);
  header.set(SEAL_MAGIC, 0);
  header[SEAL_MAGIC.length] = SEAL_VERSION;
  header.set(randomBytes(NONCE_BYTES), SEAL_MAGIC.length + 1);
  const nonce = header.subarray(SEAL_MAGIC.length + 1);
  const cipher = createCipheriv('aes-256-gcm', kernelKey, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(header, path));
  const body = Buffer.concat([cipher.update(clear), cipher.final()]);
  return Buffer.concat([header, body, cipher.getAuthTag()]);
}

/** Opens a container sealed for `path`; a wrong key, a changed byte or another path is a SealError. */
export function openBytes(sealed: Uint8Array, path: string, kernelKey: Uint8Array): Uint8Array {
  checkKernelKey(kernelKey);
  // The magic is checked first so a clear file gets the plain answer, not a decryption failure; a
  // file cut inside the magic is truncated rather than foreign.
  const magicPart = Buffer.from(sealed.subarray(0, SEAL_MAGIC.length));
  if (!magicPart.equals(Buffer.from(SEAL_MAGIC).subarray(0, magicPart.length))) {
    throw new SealError(path, 'bad-magic');
  }
  if (sealed.length < MIN_SEALED_BYTES) {
    throw new SealError(path, 'truncated', `${sealed.length} bytes, at least ${MIN_SEALED_BYTES} needed`);
  }
  const version = sealed[SEAL_MAGIC.length]!;
  if (version !== SEAL_VERSION) throw new SealError(path, 'unsupported-version', `version ${version}, this build opens ${SEAL_VERSION}`);
  const header = sealed.subarray(0, HEADER_BYTES);
  const nonce = sealed.subarray(SEAL_MAGIC.length + 1, HEADER_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', kernelKey, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad(header, path));
  decipher.setAuthTag(tag);
  const clear = decipher.update(sealed.subarray(HEADER_BYTES, sealed.length - TAG_BYTES));
  try {
    // GCM releases plaintext before the tag is checked; it is returned only after final() succeeds.
    return Buffer.concat([clear, decipher.final()]);
  } catch {
    clear.fill(0);
    throw new SealError(path, 'wrong-key-or-tampered');
  }
}
