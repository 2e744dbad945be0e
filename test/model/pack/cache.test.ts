/**
 * The declared-scale guard in pack, the repack cache and its stamp: a hit reuses the directory, a
 * changed source or a garbled stamp or a config.json failing the scan rebuilds it, and check-stamp
 * answers 0 current, 1 stale, 2 cannot tell.
 */
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gv } from '../../../src/model/gguf/types.js';
import { cacheKey } from '../../../src/model/pack/cache.js';
import { tinyQwen3Gguf } from '../../../src/model/qwen3/tiny.js';
import { Workspace, capture, runGguf } from './helpers.js';

describe('gguf pack: declared-scale guard, --cache and check-stamp', () => {
  let ws: Workspace;
  let saved: string | undefined;
  beforeEach(() => {
    ws = new Workspace();
    saved = process.env['NPU_OFFLOAD_CACHE_DIR'];
    process.env['NPU_OFFLOAD_CACHE_DIR'] = ws.path('cache');
  });
  afterEach(() => {
    if (saved === undefined) delete process.env['NPU_OFFLOAD_CACHE_DIR']; else process.env['NPU_OFFLOAD_CACHE_DIR'] = saved;
    ws.remove();
  });

  it('a dropped critical scale makes pack exit 1 and leaves no output directory', async () => {
    const g = ws.tinyWith('scaled.gguf', { 'qwen3.logit_scale': gv.f32(4) });
    const io = capture();
    expect(await runGguf(io, ['pack', g, ws.path('out'), '--tokenizer', ws.tokenizer])).to.equal(1);
    expect(io.errs.at(-1)).to.match(/declared-scale guard: qwen3\.logit_scale = 4 is declared by the GGUF but config\.json drops it/);
    expect(await runGguf(io, ['pack', g, '--cache'])).to.equal(1);
    expect(ws.list()).to.deep.equal(['scaled.gguf', 'tokenizer']);
  });

  it('first run packs, second is a hit, a changed source rebuilds, check-stamp follows', async () => {
    const g = ws.tiny('m.gguf', { type: 'Q4_0' });
    const dir = join(ws.path('cache'), 'q4nx', cacheKey(g));
    const first = capture();
    expect(await runGguf(first, ['pack', g, '--cache', '--tokenizer', ws.tokenizer])).to.equal(0);
    expect(first.outs.at(-1)).to.equal(`cache miss: packed 14 tensors into ${dir} in ${/in (\d+) ms$/.exec(first.outs.at(-1)!)![1]} ms`);
    expect(readdirSync(dir).sort()).to.deep.equal(['config.json', 'model.q4nx', 'repack-stamp.txt', 'tokenizer.json']);
    expect(readFileSync(join(dir, 'repack-stamp.txt'), 'utf8')).to.match(/\narchitecture=qwen3\n[^]*source_name=m\.gguf\n/);
    const before = statSync(join(dir, 'model.q4nx'));

    const second = capture();
    expect(await runGguf(second, ['pack', g, '--cache', '--tokenizer', ws.tokenizer, '--json'])).to.equal(0);
    expect(JSON.parse(second.outs[0]!)).to.deep.include({ dir, hit: true, reasons: [], pack: null });
    const after = statSync(join(dir, 'model.q4nx'));
    expect([after.ino, after.mtimeMs]).to.deep.equal([before.ino, before.mtimeMs]);
    expect(await runGguf(capture(), ['check-stamp', dir, '--gguf', g])).to.equal(0);

    // Same size, other weights: the stamp no longer names this source.
    writeFileSync(g, tinyQwen3Gguf({ layers: 1, type: 'Q4_0', seed: 99 }));
    const stale = capture();
    expect(await runGguf(stale, ['check-stamp', dir, '--gguf', g])).to.equal(1);
    expect(stale.outs[0]).to.match(/^stale: .*source sha256 of its ends/);
    const rebuilt = capture();
    expect(await runGguf(rebuilt, ['pack', g, '--cache', '--tokenizer', ws.tokenizer])).to.equal(0);
    expect(rebuilt.outs.at(-1)).to.match(/^cache rebuild \(stamp stale: .*\): packed 14 tensors into /);
    expect(statSync(join(dir, 'model.q4nx')).ino).to.not.equal(before.ino);
    expect(await runGguf(capture(), ['check-stamp', dir, '--gguf', g])).to.equal(0);
    expect(await runGguf(capture(), ['verify', g, dir])).to.equal(0);
    // Only the slot itself is left: no temp or old directories.
    expect(readdirSync(join(ws.path('cache'), 'q4nx'))).to.deep.equal([cacheKey(g)]);
  });

  it('check-stamp: 2 for a missing or garbled stamp, 1 for another converter version; pack rebuilds', async () => {
    const g = ws.tiny('m.gguf');
    await runGguf(capture(), ['pack', g, '--cache']);
    const dir = join(ws.path('cache'), 'q4nx', cacheKey(g));
    expect(existsSync(join(dir, 'tokenizer.json'))).to.equal(false);
    const stampPath = join(dir, 'repack-stamp.txt');
    const good = readFileSync(stampPath, 'utf8');
    expect(await runGguf(capture(), ['check-stamp', dir])).to.equal(0);
    writeFileSync(stampPath, good.replace(/converter_version=.*\n/, 'converter_version=0.0.0-old\n'));
    const stale = capture();
    expect(await runGguf(stale, ['check-stamp', dir, '--json'])).to.equal(1);
    expect(JSON.parse(stale.outs[0]!)).to.deep.include({ status: 'stale' });
    writeFileSync(stampPath, good.replace(/source_size=\d+/, 'source_size=twelve'));
    const garbled = capture();
    expect(await runGguf(garbled, ['check-stamp', dir])).to.equal(2);
    expect(garbled.outs[0]).to.match(/^cannot tell: .*repack-stamp\.txt is garbled$/);
    expect(await runGguf(capture(), ['check-stamp', ws.path('nowhere')])).to.equal(2);
    const io = capture();
    expect(await runGguf(io, ['pack', g, '--cache'])).to.equal(0);
    expect(io.outs.at(-1)).to.match(/^cache rebuild \(stamp unknown: .*garbled\)/);
    expect(readFileSync(stampPath, 'utf8')).to.equal(good);
    expect(await runGguf(capture(), ['check-stamp', dir, '--gguf', g])).to.equal(0);
  });

  it('a config.json that fails the declared-scale scan is rebuilt on the next hit', async () => {
    // logit_scale 1 is neutral: dropping it is only a warning, so pack succeeds.
    const g = ws.tinyWith('m.gguf', { 'qwen3.logit_scale': gv.f32(1) });
    const io = capture();
    expect(await runGguf(io, ['pack', g, '--cache'])).to.equal(0);
    expect(io.errs.join('\n')).to.contain('warning: qwen3.logit_scale = 1');
    const dir = join(ws.path('cache'), 'q4nx', cacheKey(g));
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, logit_scale: 5 }));
    // The stamp is still current: only the scan can catch this.
    expect(await runGguf(capture(), ['check-stamp', dir, '--gguf', g])).to.equal(0);
    const again = capture();
    expect(await runGguf(again, ['pack', g, '--cache'])).to.equal(0);
    expect(again.outs.at(-1)).to.match(/^cache rebuild \(declared-scale scan failed: qwen3\.logit_scale = 1 but config\.json has logit_scale = 5.*\): packed/);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).to.not.have.property('logit_scale');
    const third = capture();
    expect(await runGguf(third, ['pack', g, '--cache'])).to.equal(0);
    expect(third.outs.at(-1)).to.equal(`cache hit: ${dir}`);
  });
});
