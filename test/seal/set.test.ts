import { expect } from 'chai';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SealReason } from '../../src/errors/index.js';
import { generateKernelKey } from '../../src/seal/kernelKey.js';
import { checkSet, loadSet, sealSet, signSet, verifySet } from '../../src/seal/set.js';
import { expectSeal, keys, tempDir, writeClearSet, type Keys } from './helpers.js';

/** Every file of a directory, relative POSIX path → bytes. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.set(join(e.parentPath, e.name).slice(dir.length + 1), readFileSync(join(e.parentPath, e.name)).toString('hex'));
  }
  return out;
}

describe('seal/set', function () {
  this.timeout(20_000);
  let tmp: ReturnType<typeof tempDir>;
  let k: Keys;
  let clear: ReturnType<typeof writeClearSet>;
  let src: string;
  let set: string;
  beforeEach(() => {
    tmp = tempDir();
    k = keys();
    src = join(tmp.dir, 'clear');
    set = join(tmp.dir, 'sealed');
    clear = writeClearSet(src);
    sealSet(src, set, k);
  });
  afterEach(() => tmp.remove());

  it('seal → check → verify → load round-trips the bytes, in memory only', () => {
    expect([...snapshot(set).keys()].sort()).to.deep.equal(['layer1_0/layer1.elf', 'layer1_1/layer1.elf', 'layout.json', 'manifest.json', 'manifest.sig']);
    for (const [rel, bytes] of clear.kernels) {
      const onDisk = readFileSync(join(set, rel));
      expect(onDisk.subarray(0, 8).toString()).to.equal('1BPKCRYP');
      expect(onDisk.includes(bytes)).to.equal(false);
    }
    expect(checkSet(set).files).to.have.length(3);
    expect(verifySet(set, k.publicKey).files.map((f) => f.path)).to.deep.equal(['layer1_0/layer1.elf', 'layer1_1/layer1.elf', 'layout.json']);
    const before = snapshot(set);
    const loaded = loadSet(set, { kernelKey: k.kernelKey, publicKey: k.publicKey, requireSignature: true });
    expect(loaded.signed).to.equal(true);
    expect(loaded.layout).to.deep.equal(clear.layout);
    expect([...loaded.kernels.keys()]).to.deep.equal([...clear.kernels.keys()]);
    for (const [rel, bytes] of clear.kernels) expect(Buffer.from(loaded.kernels.get(rel)!).equals(bytes)).to.equal(true);
    expect(snapshot(set)).to.deep.equal(before);
    expect(snapshot(src).size).to.equal(3);
  });

  it('flipping any byte of any file is refused by verify and by a signed load, each naming the file', () => {
    const expected = (rel: string): [SealReason, string] =>
      rel === 'manifest.json' || rel === 'manifest.sig' ? ['bad-signature', 'manifest.sig'] : ['digest-mismatch', rel];
    let flips = 0;
    for (const [rel] of snapshot(set)) {
      const file = join(set, rel);
      const good = readFileSync(file);
      const [reason, named] = expected(rel);
      for (let i = 0; i < good.length; i++) {
        const bad = Buffer.from(good);
        bad[i]! ^= 0x01;
        writeFileSync(file, bad);
        const e = expectSeal(() => verifySet(set, k.publicKey), reason, named, `verify, ${rel} byte ${i}`);
        expect(e.message).to.contain(named);
        expectSeal(() => loadSet(set, { kernelKey: k.kernelKey, publicKey: k.publicKey, requireSignature: true }), reason, named, `load, ${rel} byte ${i}`);
        if (rel !== 'manifest.sig') expect(() => checkSet(set), `check, ${rel} byte ${i}`).to.throw();
        flips++;
      }
      writeFileSync(file, good);
    }
    expect(flips).to.be.greaterThan(400);
    expect(verifySet(set, k.publicKey).files).to.have.length(3);
  });

  it('without a manifest, every flipped kernel byte is still refused by the container', () => {
    rmSync(join(set, 'manifest.json'));
    rmSync(join(set, 'manifest.sig'));
    expect(loadSet(set, { kernelKey: k.kernelKey }).manifest).to.equal(null);
    const rel = 'layer1_1/layer1.elf';
    const good = readFileSync(join(set, rel));
    for (let i = 0; i < good.length; i++) {
      const bad = Buffer.from(good);
      bad[i]! ^= 0x80;
      writeFileSync(join(set, rel), bad);
      const reason = i < 8 ? 'bad-magic' : i === 8 ? 'unsupported-version' : 'wrong-key-or-tampered';
      expectSeal(() => loadSet(set, { kernelKey: k.kernelKey }), reason, rel, `byte ${i}`);
    }
  });

  it('an added, a removed or a renamed file is refused', () => {
    writeFileSync(join(set, 'layer1_0/extra.bin'), 'x');
    expectSeal(() => checkSet(set), 'extra-file', 'layer1_0/extra.bin');
    expectSeal(() => verifySet(set, k.publicKey), 'extra-file', 'layer1_0/extra.bin');
    rmSync(join(set, 'layer1_0/extra.bin'));

    const kept = readFileSync(join(set, 'layer1_1/layer1.elf'));
    rmSync(join(set, 'layer1_1/layer1.elf'));
    expectSeal(() => verifySet(set, k.publicKey), 'missing-file', 'layer1_1/layer1.elf');
    expectSeal(() => loadSet(set, { kernelKey: k.kernelKey, publicKey: k.publicKey }), 'missing-file', 'layer1_1/layer1.elf');
    writeFileSync(join(set, 'layer1_1/layer1.elf'), kept);

    mkdirSync(join(set, 'layer1_9'));
    renameSync(join(set, 'layer1_1/layer1.elf'), join(set, 'layer1_9/layer1.elf'));
    const e = expectSeal(() => verifySet(set, k.publicKey), 'missing-file', 'layer1_1/layer1.elf');
    expect(e.message).to.contain('layer1_9/layer1.elf');
    // Even re-signed by the release key, the moved kernel does not open: its old path is in its AAD.
    signSet(set, k.signingKey);
    expect(verifySet(set, k.publicKey).files.map((f) => f.path)).to.include('layer1_9/layer1.elf');
    expectSeal(() => loadSet(set, { kernelKey: k.kernelKey, publicKey: k.publicKey }), 'wrong-key-or-tampered', 'layer1_9/layer1.elf');
  });

  it('a set signed with another key is refused; a wrong kernel key is refused after the signature', () => {
    const other = keys();
    const set2 = join(tmp.dir, 'sealed2');
    sealSet(src, set2, { kernelKey: k.kernelKey, signingKey: other.signingKey });
    expect(checkSet(set2).files).to.have.length(3);
    expectSeal(() => verifySet(set2, k.publicKey), 'bad-signature', 'manifest.sig');
    expectSeal(() => loadSet(set2, { kernelKey: k.kernelKey, publicKey: k.publicKey }), 'bad-signature', 'manifest.sig');
    const e = expectSeal(() => loadSet(set, { kernelKey: generateKernelKey(), publicKey: k.publicKey, requireSignature: true }), 'wrong-key-or-tampered', 'layer1_0/layer1.elf');
    expect(e.message).to.match(/layer1_0\/layer1\.elf: does not open with this kernel key/);
  });

  it('a set swapped for another that also decrypts is refused by the signature, a swapped kernel by its digest', () => {
    const otherSrc = join(tmp.dir, 'clear2');
    const otherSet = join(tmp.dir, 'sealed2');
    writeClearSet(otherSrc, 2, 40, 'b');
    sealSet(otherSrc, otherSet, { kernelKey: k.kernelKey, signingKey: keys().signingKey });
    // What sealing alone would let through: the other set opens with our kernel key.
    expect((loadSet(otherSet, { kernelKey: k.kernelKey }).layout as { set: string }).set).to.equal('b');
    rmSync(set, { recursive: true });
    cpSync(otherSet, set, { recursive: true });
    expectSeal(() => verifySet(set, k.publicKey), 'bad-signature', 'manifest.sig');
    expectSeal(() => loadSet(set, { kernelKey: k.kernelKey, publicKey: k.publicKey, requireSignature: true }), 'bad-signature', 'manifest.sig');

    // One kernel of the other set dropped into ours: same name, same key, so only the manifest tells.
    const mine = join(tmp.dir, 'mine');
    sealSet(src, mine, k);
    cpSync(join(otherSet, 'layer1_0/layer1.elf'), join(mine, 'layer1_0/layer1.elf'));
    expectSeal(() => loadSet(mine, { kernelKey: k.kernelKey, publicKey: k.publicKey }), 'digest-mismatch', 'layer1_0/layer1.elf');
  });

  it('requireSignature refuses an unsigned set before decrypting anything', () => {
    rmSync(join(set, 'manifest.sig'));
    // A wrong kernel key and a damaged kernel: had anything been opened, the error would be the container's.
    const kernel = join(set, 'layer1_0/layer1.elf');
    const b = readFileSync(kernel);
    b[b.length - 1]! ^= 1;
    writeFileSync(kernel, b);
    const e = expectSeal(() => loadSet(set, { kernelKey: generateKernelKey(), publicKey: k.publicKey, requireSignature: true }), 'no-signature', 'manifest.sig');
    expect(e.message).to.match(/manifest\.sig: missing/);
    expectSeal(() => loadSet(set, { kernelKey: generateKernelKey(), requireSignature: true }), 'no-public-key', null);
    rmSync(join(set, 'manifest.json'));
    expectSeal(() => loadSet(set, { kernelKey: generateKernelKey(), publicKey: k.publicKey, requireSignature: true }), 'no-manifest', 'manifest.json');
    expectSeal(() => checkSet(set), 'no-manifest', 'manifest.json');
  });

  it('sealing refuses a sealed source, an existing output and a source without layout.json', () => {
    expectSeal(() => sealSet(set, join(tmp.dir, 'again'), k), 'already-sealed', 'manifest.json');
    const mixed = join(tmp.dir, 'mixed');
    writeClearSet(mixed);
    cpSync(join(set, 'layer1_1/layer1.elf'), join(mixed, 'layer1_1/layer1.elf'));
    expectSeal(() => sealSet(mixed, join(tmp.dir, 'mixed.sealed'), k), 'already-sealed', 'layer1_1/layer1.elf');
    expect(existsSync(join(tmp.dir, 'mixed.sealed'))).to.equal(false);
    expectSeal(() => sealSet(src, set, k), 'out-exists', set);
    rmSync(join(src, 'layout.json'));
    expectSeal(() => sealSet(src, join(tmp.dir, 'x'), k), 'missing-file', 'layout.json');
    expect(readdirSync(tmp.dir).filter((n) => n.includes('partial'))).to.deep.equal([]);
  });
});
