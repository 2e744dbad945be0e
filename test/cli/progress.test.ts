/**
 * Progress on the terminal (src/cli/progress.ts): the shared bar draws on a stream that says it is a
 * terminal, and never on one that is not or under --json; and the commands that use it, spawned with
 * pipes for stdout and stderr as a script runs them, print nothing beyond their usual output.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createProgress, wantsProgress, type ProgressStream } from '../../src/cli/progress.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';

const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

/** A stream that keeps what is written, a terminal or not. */
function fakeStream(isTTY: boolean): ProgressStream & { text: () => string } {
  const chunks: string[] = [];
  return { isTTY, columns: 100, write: (t: string) => { chunks.push(t); return true; }, text: () => chunks.join('') };
}

describe('the progress helper', () => {
  it('draws the bar, its fields and its count on a terminal', () => {
    const s = fakeStream(true);
    const p = createProgress('packing {bar} {value}/{total} | {tensor}', { stream: s, stdout: { isTTY: true } });
    expect(p.shown).to.equal(true);
    p.update(1, 4, { tensor: 'blk.0.attn_q' });
    p.update(4, 4, { tensor: 'output' });
    p.stop();
    const text = s.text();
    expect(text).to.include('packing');
    expect(text).to.include('4/4 | output');
    expect(text).to.include('1/4 | blk.0.attn_q');
  });

  it('draws nothing when the stream or stdout is not a terminal, or under --json', () => {
    for (const [stream, stdout, json] of [[false, true, false], [true, false, false], [true, true, true]] as const) {
      const s = fakeStream(stream);
      const p = createProgress('work {bar} {value}/{total}', { stream: s, stdout: { isTTY: stdout }, json });
      p.update(1, 2);
      p.stop();
      expect(p.shown).to.equal(false);
      expect(s.text()).to.equal('');
    }
    expect(wantsProgress({ stream: fakeStream(false), stdout: { isTTY: false }, progress: true })).to.equal(true);
  });
});

describe('progress stays off the output of piped commands', function () {
  this.timeout(180_000);
  let dir = '';
  const run = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, NPU_OFFLOAD_CACHE_DIR: join(dir, 'cache') } });
    return { status: r.status, out: r.stdout, err: r.stderr };
  };
  // A bar is cli-progress's escape sequences and its "|" separated fields.
  const noBar = (text: string) => {
    expect(text).not.to.include('\u001b[');
    expect(text).not.to.match(/\{bar\}|░|█/);
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'npu-progress-'));
    // The smallest shape the commands take: what is checked is where their lines go, not the model.
    writeFileSync(join(dir, 'm.gguf'), tinyQwen3Gguf({ layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, std: 0.3, seed: 3, type: 'Q8_0' }));
    mkdirSync(join(dir, 'tok'));
    writeFileSync(join(dir, 'tok', 'tokenizer.json'), '{"version":"1.0","model":{"type":"BPE"}}\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('contracts: the report lines only', () => {
    const r = run('contracts', '--target', 'xdna2', '--op', 'exp', '--bulk', '256');
    expect(r.status, r.err).to.equal(0);
    expect(r.err).to.equal('');
    noBar(r.out);
    expect(r.out.split('\n')[0]).to.match(/^contracts of xdna2/);
  });

  it('gguf pack and verify: their summary lines only', () => {
    const pack = run('gguf', 'pack', join(dir, 'm.gguf'), join(dir, 'out'), '--tokenizer', join(dir, 'tok'));
    expect(pack.status, pack.err).to.equal(0);
    noBar(pack.err + pack.out);
    expect(pack.out.trim().split('\n')).to.have.length(1);
    const verify = run('gguf', 'verify', join(dir, 'm.gguf'), join(dir, 'out'));
    expect(verify.status, verify.err).to.equal(0);
    noBar(verify.err + verify.out);
    expect(verify.err).to.equal('');
  });

  it('generate: the text on stdout, one summary line on stderr', () => {
    const r = run('generate', join(dir, 'm.gguf'), '--prompt', 'the cat', '--max-tokens', '3', '--ctx', '32');
    expect(r.status, r.err).to.equal(0);
    noBar(r.out + r.err);
    expect(r.err.trim().split('\n')).to.have.length(1);
    expect(r.err).to.match(/^\[\d+ prompt tokens/);
  });
});
