import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { buildManifest, parseManifest, serializeManifest, sha256Hex } from '../../src/seal/manifest.js';
import { keyPairPem, publicKeyFromPem, signBytes, signingKeyFromPem, verifyBytes } from '../../src/seal/sign.js';
import { expectSeal, keys } from './helpers.js';

const enc = (s: string) => Buffer.from(s, 'utf8');

describe('seal/manifest', () => {
  const files = [
    { path: 'layer1_b/layer1.elf', bytes: enc('bbb') },
    { path: 'layout.json', bytes: enc('{}') },
    { path: 'layer1_a/layer1.elf', bytes: enc('a') },
  ];

  it('builds sorted entries with sha256 and size, and parses its own bytes back', () => {
    const m = buildManifest(files);
    expect(m.files.map((f) => f.path)).to.deep.equal(['layer1_a/layer1.elf', 'layer1_b/layer1.elf', 'layout.json']);
    expect(m.files[0]).to.deep.equal({ path: 'layer1_a/layer1.elf', sha256: sha256Hex(enc('a')), size: 1 });
    const bytes = serializeManifest(m);
    expect(Buffer.from(bytes).toString().endsWith('}\n')).to.equal(true);
    expect(parseManifest(bytes)).to.deep.equal(m);
  });

  it('parses strictly: only the canonical bytes, exact keys, sorted unique safe paths', () => {
    const text = Buffer.from(serializeManifest(buildManifest(files))).toString();
    const doc = JSON.parse(text) as { format: string; files: Array<Record<string, unknown>> };
    const variants: Array<[string, string]> = [
      ['no final newline', text.trimEnd()],
      ['compact', JSON.stringify(doc)],
      ['extra root key', `${JSON.stringify({ ...doc, extra: 1 }, null, 2)}\n`],
      ['other format', `${JSON.stringify({ ...doc, format: 'x@1' }, null, 2)}\n`],
      ['reordered keys', `${JSON.stringify({ files: doc.files, format: doc.format }, null, 2)}\n`],
      ['unsorted', `${JSON.stringify({ ...doc, files: [...doc.files].reverse() }, null, 2)}\n`],
      ['duplicate', `${JSON.stringify({ ...doc, files: [doc.files[0], ...doc.files] }, null, 2)}\n`],
      ['uppercase digest', text.replace(/"sha256": "([0-9a-f]+)"/, (_, h: string) => `"sha256": "${h.toUpperCase()}"`)],
      ['negative size', text.replace('"size": 1', '"size": -1')],
      ['dot-dot path', text.replace('layer1_a/layer1.elf', '../layer1.elf')],
      ['lists itself', text.replace('layer1_a/layer1.elf', 'manifest.json')],
      ['not JSON', '{'],
    ];
    for (const [what, v] of variants) expectSeal(() => parseManifest(enc(v)), 'bad-manifest', 'manifest.json', what);
  });

  it('signs and verifies exact bytes with Ed25519; one changed byte or another key fails', () => {
    const k = keys();
    const bytes = serializeManifest(buildManifest(files));
    const sig = signBytes(bytes, k.signingKey);
    expect(sig.length).to.equal(64);
    expect(verifyBytes(bytes, sig, k.publicKey)).to.equal(true);
    expect(verifyBytes(Buffer.concat([bytes, enc(' ')]), sig, k.publicKey)).to.equal(false);
    expect(verifyBytes(bytes, sig.subarray(0, 63), k.publicKey)).to.equal(false);
    expect(verifyBytes(bytes, sig, keys().publicKey)).to.equal(false);
  });

  it('key files: PKCS#8 and SPKI PEM round-trip; a private key as the public key, or a non-Ed25519 key, is refused', () => {
    const k = keys();
    const { privatePem, publicPem } = keyPairPem({ privateKey: k.signingKey, publicKey: k.publicKey });
    expect(privatePem).to.match(/^-----BEGIN PRIVATE KEY-----/);
    expect(publicPem).to.match(/^-----BEGIN PUBLIC KEY-----/);
    const bytes = enc('x');
    expect(verifyBytes(bytes, signBytes(bytes, signingKeyFromPem(privatePem)), publicKeyFromPem(publicPem))).to.equal(true);
    expectSeal(() => publicKeyFromPem(privatePem, 'r.pub'), 'bad-key', 'r.pub');
    expectSeal(() => signingKeyFromPem(publicPem, 'r.key'), 'bad-key', 'r.key');
    expectSeal(() => publicKeyFromPem('not a key', 'r.pub'), 'bad-key', 'r.pub');
    const x = generateKeyPairSync('x25519');
    expectSeal(() => publicKeyFromPem(x.publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'x.pub'), 'bad-key', 'x.pub');
  });
});
