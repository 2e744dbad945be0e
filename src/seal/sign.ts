/**
 * Ed25519 over the manifest's exact bytes, and the release key files: the private signing key as a
 * PKCS#8 PEM ("BEGIN PRIVATE KEY"), the public key as an SPKI PEM ("BEGIN PUBLIC KEY"), the forms
 * `seal keygen` writes and OpenSSL reads.
 */
import {
  createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject,
} from 'node:crypto';
import { messageOf, SealError } from '../errors/index.js';
import { readKeyBytes } from './kernelKey.js';

/** The length of an Ed25519 signature in bytes. */
export const SIGNATURE_BYTES = 64;

/** A fresh Ed25519 release key pair. */
export function generateSigningKeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ed25519');
}

/** The PEM texts of a key pair: PKCS#8 for the private key, SPKI for the public key. */
export function keyPairPem(pair: { privateKey: KeyObject; publicKey: KeyObject }): { privatePem: string; publicPem: string } {
  return {
    privatePem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function requireEd25519(key: KeyObject, kind: 'private' | 'public', file: string | null): KeyObject {
  if (key.type !== kind) {
    // A private key handed to the loader means the signing key is travelling with the sets: refuse it.
    throw new SealError(file, 'bad-key', `an Ed25519 ${kind} key is needed, this is a ${key.type} key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new SealError(file, 'bad-key', `an Ed25519 key is needed, this is ${key.asymmetricKeyType ?? 'not an asymmetric key'}`);
  }
  return key;
}

/** The signing key of a PKCS#8 PEM text; anything else is SealError 'bad-key'. */
export function signingKeyFromPem(pem: string | Uint8Array, file: string | null = null): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: Buffer.from(pem), format: 'pem' });
  } catch (e) {
    throw new SealError(file, 'bad-key', `not a PEM private key: ${messageOf(e)}`);
  }
  return requireEd25519(key, 'private', file);
}

/** The public key of an SPKI PEM text; a private key or anything else is SealError 'bad-key'. */
export function publicKeyFromPem(pem: string | Uint8Array, file: string | null = null): KeyObject {
  const text = Buffer.from(pem).toString('latin1');
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    // createPublicKey would quietly derive the public half; a private key here is a mistake to report.
    throw new SealError(file, 'bad-key', 'this is a private key; the loader takes the public key only');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(pem), format: 'pem' });
  } catch (e) {
    throw new SealError(file, 'bad-key', `not a PEM public key: ${messageOf(e)}`);
  }
  return requireEd25519(key, 'public', file);
}

/** Reads a PKCS#8 PEM signing key file. */
export function readSigningKey(file: string): KeyObject {
  return signingKeyFromPem(readKeyBytes(file), file);
}

/** Reads an SPKI PEM public key file. */
export function readPublicKey(file: string): KeyObject {
  return publicKeyFromPem(readKeyBytes(file), file);
}

/** The Ed25519 signature of `bytes` with the release signing key. */
export function signBytes(bytes: Uint8Array, signingKey: KeyObject): Uint8Array {
  return sign(null, bytes, requireEd25519(signingKey, 'private', null));
}

/** True when `signature` is a valid Ed25519 signature of exactly `bytes` under `publicKey`. */
export function verifyBytes(bytes: Uint8Array, signature: Uint8Array, publicKey: KeyObject): boolean {
  requireEd25519(publicKey, 'public', null);
  if (signature.length !== SIGNATURE_BYTES) return false;
  try {
    return verify(null, bytes, publicKey, signature);
  } catch {
    return false;
  }
}
