import { expect } from 'chai';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sealCheckCommand, sealKeygenCommand, sealVerifyCommand, sealWriteCommand } from '../../src/cli/seal.js';
import type { Io } from '../../src/cli/output.js';
import { tempDir, writeClearSet } from './helpers.js';

function capture(): Io & { outs: string[]; errs: string[] } {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l) => outs.push(l), err: (l) => errs.push(l) };
}

describe('seal/cli', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => { tmp = tempDir('npuo-seal-cli-'); });
  afterEach(() => tmp.remove());

  it('keygen → write → check → verify, exit 0, and the secrets are owner-only', () => {
    const io = capture();
    expect(sealKeygenCommand({ out: `${join(tmp.dir, 'keys')}/` }, io)).to.equal(0);
    const k = (n: string) => join(tmp.dir, 'keys', n);
    expect(readFileSync(k('release.key'), 'utf8')).to.match(/^-----BEGIN PRIVATE KEY-----/);
    expect(readFileSync(k('release.pub'), 'utf8')).to.match(/^-----BEGIN PUBLIC KEY-----/);
    expect(readFileSync(k('kernel.key'), 'utf8')).to.match(/^[0-9a-f]{64}\n$/);
    expect(statSync(k('release.key')).mode & 0o077).to.equal(0);
    expect(statSync(k('kernel.key')).mode & 0o077).to.equal(0);
    const again = capture();
    expect(sealKeygenCommand({ out: `${join(tmp.dir, 'keys')}/` }, again)).to.equal(2);
    expect(again.errs[0]).to.match(/release\.key already exists/);

    const src = join(tmp.dir, 'set');
    writeClearSet(src);
    const w = capture();
    expect(sealWriteCommand(src, { key: k('release.key'), kernelKey: k('kernel.key'), json: true }, w)).to.equal(0);
    const doc = JSON.parse(w.outs[0]!) as { dir: string; sealed: string[]; files: Array<{ path: string }> };
    expect(doc.dir).to.equal(`${src}.sealed`);
    expect(doc.sealed).to.deep.equal(['layer1_0/layer1.elf', 'layer1_1/layer1.elf']);
    expect(existsSync(join(`${src}.sealed`, 'manifest.sig'))).to.equal(true);

    const c = capture();
    expect(sealCheckCommand(`${src}.sealed`, {}, c)).to.equal(0);
    expect(c.outs[0]).to.match(/^ok: .* matches its manifest \(3 files\)$/);
    const v = capture();
    expect(sealVerifyCommand(`${src}.sealed`, { pub: k('release.pub'), json: true }, v)).to.equal(0);
    expect(JSON.parse(v.outs[0]!)).to.include({ ok: true, signed: true });
  });

  it('refusals exit 1 with the typed error, usage mistakes exit 2', () => {
    const pre = join(tmp.dir, 'rel');
    expect(sealKeygenCommand({ out: pre }, capture())).to.equal(0);
    expect(existsSync(`${pre}.key`) && existsSync(`${pre}.pub`) && existsSync(`${pre}.kernel.key`)).to.equal(true);
    const src = join(tmp.dir, 'set');
    writeClearSet(src);
    const out = join(tmp.dir, 'out');
    expect(sealWriteCommand(src, { key: `${pre}.key`, kernelKey: `${pre}.kernel.key`, out }, capture())).to.equal(0);

    const resealed = capture();
    expect(sealWriteCommand(out, { key: `${pre}.key`, kernelKey: `${pre}.kernel.key`, out: join(tmp.dir, 'o2') }, resealed)).to.equal(1);
    expect(resealed.errs[0]).to.match(/^error \[SealError\]: sealed set manifest\.json: already sealed/);

    const kernel = join(out, 'layer1_0/layer1.elf');
    const b = readFileSync(kernel);
    b[20]! ^= 1;
    writeFileSync(kernel, b);
    const j = capture();
    expect(sealVerifyCommand(out, { pub: `${pre}.pub`, json: true }, j)).to.equal(1);
    expect(JSON.parse(j.outs[0]!)).to.deep.equal({ error: { code: 'SealError', file: 'layer1_0/layer1.elf', reason: 'digest-mismatch' } });
    const c = capture();
    expect(sealCheckCommand(out, {}, c)).to.equal(1);
    expect(c.errs[0]).to.match(/layer1_0\/layer1\.elf: sha256 differs/);

    const wrongPub = capture();
    expect(sealVerifyCommand(out, { pub: `${pre}.key`, json: true }, wrongPub)).to.equal(1);
    expect((JSON.parse(wrongPub.outs[0]!) as { error: { reason: string } }).error.reason).to.equal('bad-key');

    const usage = capture();
    expect(sealVerifyCommand(out, { pub: join(tmp.dir, 'nope.pub'), json: true }, usage)).to.equal(2);
    expect((JSON.parse(usage.outs[0]!) as { error: { code: string } }).error.code).to.equal('UsageError');
    expect(sealCheckCommand(join(tmp.dir, 'no-such-set'), {}, capture())).to.equal(2);
    expect(sealWriteCommand(src, { key: `${pre}.key`, kernelKey: '' }, capture())).to.equal(2);
  });
});
