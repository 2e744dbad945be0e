/**
 * The kernel key: the 32-byte AES-256 key the containers are sealed with.
 *
 * On disk it is text: 64 hex digits (either case), optionally surrounded by whitespace such as the
 * trailing newline an editor adds; `seal keygen` writes lowercase hex and a newline, mode 0600. A file
 * of exactly 32 bytes is also taken as the raw key, for keys that come out of an HSM or a secret
 * store. The two cannot be confused: hex is never 32 bytes long. Anything else is refused rather than
 * guessed at, because a key misread is a set that silently fails to open everywhere.
 */
import { randomBytes } from 'node:crypto';
import { SealError } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';

/** No key file is larger: a PEM Ed25519 key is about 120 bytes. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** The length of the kernel key in bytes. */
export const KERNEL_KEY_BYTES = 32;

/** Throws SealError 'bad-key' unless `key` is 32 bytes. */
export function checkKernelKey(key: Uint8Array, file: string | null = null): void {
  if (!(key instanceof Uint8Array) || key.length !== KERNEL_KEY_BYTES) {
    throw new SealError(file, 'bad-key', `a kernel key is ${KERNEL_KEY_BYTES} bytes, got ${key instanceof Uint8Array ? key.length : typeof key}`);
  }
}

/** A fresh random kernel key. */
export function generateKernelKey(): Uint8Array {
  return randomBytes(KERNEL_KEY_BYTES);
}

/** The text form of a kernel key file: lowercase hex and a newline. */
export function formatKernelKey(key: Uint8Array): string {
  checkKernelKey(key);
  return `${Buffer.from(key).toString('hex')}\n`;
}

/** Decodes the bytes of a kernel key file (hex text or 32 raw bytes); `file` names it in errors. */
export function parseKernelKey(bytes: Uint8Array, file: string | null = null): Uint8Array {
  if (bytes.length === KERNEL_KEY_BYTES) return Uint8Array.from(bytes);
  const text = Buffer.from(bytes).toString('latin1').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(text)) {
    throw new SealError(file, 'bad-key', `a kernel key file holds 64 hex digits or ${KERNEL_KEY_BYTES} raw bytes; this one has ${bytes.length} bytes`);
  }
  return Uint8Array.from(Buffer.from(text, 'hex'));
}

/** Reads a kernel key file; an unreadable file is a SealError 'bad-key' naming it. */
export function readKernelKey(file: string): Uint8Array {
  return parseKernelKey(readKeyBytes(file), file);
}

/** The bytes of a key file; missing, a FIFO, a device or over 64 KiB is SealError 'bad-key' naming it. */
export function readKeyBytes(file: string): Buffer {
  return readRegularFile(file, { maxBytes: MAX_KEY_FILE_BYTES, fail: (p, why) => new SealError(p, 'bad-key', `cannot read it: ${why}`) });
}
