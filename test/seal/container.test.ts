import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { EngineError, fromWire, SealError } from '../../src/errors/index.js';
import { HEADER_BYTES, MIN_SEALED_BYTES, openBytes, sealBytes, SEAL_MAGIC } from '../../src/seal/container.js';
import { formatKernelKey, generateKernelKey, parseKernelKey } from '../../src/seal/kernelKey.js';
import { expectSeal } from './helpers.js';

describe('seal/container', () => {
  const key = generateKernelKey();
  const clear = randomBytes(33);
  const path = 'layer1_0/layer1.elf';

  it('round-trips, and the container is magic, version 1, nonce, ciphertext, tag', () => {
    const sealed = sealBytes(clear, path, key);
    expect(sealed.length).to.equal(HEADER_BYTES + clear.length + 16);
    expect(Buffer.from(sealed.subarray(0, 8)).toString('ascii')).to.equal('1BPKCRYP');
    expect(sealed[8]).to.equal(1);
    expect(Buffer.from(sealed).includes(clear)).to.equal(false);
    expect(Buffer.from(openBytes(sealed, path, key)).equals(clear)).to.equal(true);
    // A fresh nonce each time: sealing twice never gives the same bytes.
    expect(Buffer.from(sealBytes(clear, path, key)).equals(Buffer.from(sealed))).to.equal(false);
    expect(openBytes(sealBytes(new Uint8Array(0), path, key), path, key).length).to.equal(0);
  });

  it('refuses every single flipped byte, with the reason of the part it hit', () => {
    const sealed = Buffer.from(sealBytes(clear, path, key));
    for (let i = 0; i < sealed.length; i++) {
      const bad = Buffer.from(sealed);
      bad[i]! ^= 0x01;
      const reason = i < SEAL_MAGIC.length ? 'bad-magic' : i === SEAL_MAGIC.length ? 'unsupported-version' : 'wrong-key-or-tampered';
      const e = expectSeal(() => openBytes(bad, path, key), reason, path, `byte ${i}`);
      expect(e.message).to.contain(path);
    }
  });

  it('refuses another path (a moved file), a wrong key, a truncated file and a clear file', () => {
    const sealed = sealBytes(clear, path, key);
    expectSeal(() => openBytes(sealed, 'layer1_1/layer1.elf', key), 'wrong-key-or-tampered', 'layer1_1/layer1.elf');
    const e = expectSeal(() => openBytes(sealed, path, generateKernelKey()), 'wrong-key-or-tampered', path);
    expect(e.message).to.match(/does not open with this kernel key/);
    for (const n of [0, 4, 8, HEADER_BYTES, MIN_SEALED_BYTES - 1]) {
      expectSeal(() => openBytes(sealed.subarray(0, n), path, key), 'truncated', path, `${n} bytes`);
    }
    // Cut inside the ciphertext: still a whole header and a "tag", so only the tag check can tell.
    expectSeal(() => openBytes(sealed.subarray(0, sealed.length - 1), path, key), 'wrong-key-or-tampered', path);
    expectSeal(() => openBytes(Buffer.from('\x7fELF and so on, a clear kernel'), path, key), 'bad-magic', path);
    expectSeal(() => sealBytes(clear, path, new Uint8Array(16)), 'bad-key', null);
  });

  it('SealError crosses the wire with its fields', () => {
    const e = new SealError('layer1_0/layer1.elf', 'digest-mismatch', 'detail');
    const back = fromWire(e.toWire())!;
    expect(back).to.be.instanceOf(SealError).and.instanceOf(EngineError);
    expect((back as SealError).fields()).to.deep.equal({ file: 'layer1_0/layer1.elf', reason: 'digest-mismatch' });
    expect(back.message).to.equal(e.message);
    expect((fromWire(new SealError(null, 'no-public-key').toWire()) as SealError).file).to.equal(null);
  });
});

describe('seal/kernelKey', () => {
  it('reads hex (either case, trailing newline) and 32 raw bytes; refuses anything else', () => {
    const key = generateKernelKey();
    const hex = formatKernelKey(key);
    expect(hex).to.match(/^[0-9a-f]{64}\n$/);
    for (const text of [hex, hex.trim(), hex.toUpperCase(), `  ${hex}\r\n`]) {
      expect(Buffer.from(parseKernelKey(Buffer.from(text))).equals(Buffer.from(key))).to.equal(true);
    }
    expect(Buffer.from(parseKernelKey(key)).equals(Buffer.from(key))).to.equal(true);
    for (const bad of [hex.slice(0, 62), `${hex.trim()}00`, `${hex.slice(0, 63)}g`, '', Buffer.alloc(31), Buffer.alloc(33)]) {
      expectSeal(() => parseKernelKey(Buffer.from(bad), 'k.key'), 'bad-key', 'k.key');
    }
  });
});
