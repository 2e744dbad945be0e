/** Sealed kernel sets: re-exports only. */
export { HEADER_BYTES, MIN_SEALED_BYTES, SEAL_MAGIC, SEAL_VERSION, hasSealMagic, openBytes, sealBytes } from './container.js';
export { LAYOUT_FILE, listSetFiles } from './files.js';
export { KERNEL_KEY_BYTES, checkKernelKey, formatKernelKey, generateKernelKey, parseKernelKey, readKernelKey } from './kernelKey.js';
export {
  MANIFEST_FILE, MANIFEST_FORMAT, SIGNATURE_FILE, buildManifest, parseManifest, serializeManifest, sha256Hex,
  type Manifest, type ManifestEntry,
} from './manifest.js';
export {
  SIGNATURE_BYTES, generateSigningKeyPair, keyPairPem, publicKeyFromPem, readPublicKey, readSigningKey, signBytes,
  signingKeyFromPem, verifyBytes,
} from './sign.js';
export {
  checkSet, loadSet, sealSet, signSet, verifySet, type LoadOptions, type LoadedSet, type SealKeys, type SealResult,
} from './set.js';
