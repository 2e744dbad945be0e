/** `gguf info` and `gguf check-config` (src/cli/gguf.ts), called directly and through commander. */
import { expect } from 'chai';
import { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GgufError, InvalidInput, UsageError } from '../../../src/errors/index.js';
import { ggufCheckConfigCommand, ggufInfoCommand, registerGgufCommands, type GgufWrap } from '../../../src/cli/gguf.js';
import { reportError, type Io } from '../../../src/cli/output.js';
import { writeGguf } from '../../../src/model/gguf/writer.js';
import { tinyQwen3Gguf } from '../../../src/model/qwen3/tiny.js';
import { tempDir } from '../../jobs/helpers.js';
import { GEMMA2, MINICPM, MINICPM_CONFIG } from './helpers.js';

function capture(): Io & { outs: string[]; errs: string[] } {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l) => outs.push(l), err: (l) => errs.push(l) };
}

describe('gguf cli commands', () => {
  let tmp: ReturnType<typeof tempDir>;
  const file = (name: string, v: Uint8Array | string | object) => {
    const p = join(tmp.dir, name);
    writeFileSync(p, v instanceof Uint8Array || typeof v === 'string' ? v : JSON.stringify(v));
    return p;
  };
  beforeEach(() => { tmp = tempDir('npuo-gguf-cli-'); });
  afterEach(() => tmp.remove());

  it('check-config: exit 0 with the negative control, exit 1 naming the dropped key, --json', () => {
    const g = file('m.gguf', writeGguf({ metadata: MINICPM }));
    const ok = capture();
    expect(ggufCheckConfigCommand(g, file('good.json', MINICPM_CONFIG), {}, ok)).to.equal(0);
    expect(ok.outs.at(-1)).to.match(/^ok: /);
    const bad = capture();
    expect(ggufCheckConfigCommand(g, file('bad.json', { scale_emb: 12 }), {}, bad)).to.equal(1);
    expect(bad.outs.filter((l) => l.startsWith('fatal: '))).to.have.length(2);
    expect(bad.outs.at(-1)).to.equal(`failed: ${join(tmp.dir, 'bad.json')} drops 2 critical declared scales`);
    const j = capture();
    expect(ggufCheckConfigCommand(g, join(tmp.dir, 'bad.json'), { json: true }, j)).to.equal(1);
    const doc = JSON.parse(j.outs[0]!) as { ok: boolean; fatal: string[]; warnings: string[] };
    expect(doc.ok).to.equal(false);
    expect(doc.fatal.join('\n')).to.contain('minicpm.residual_scale').and.to.contain('minicpm.logit_scale');
  });

  it('check-config: a bad config or GGUF is a typed error', () => {
    const g = file('m.gguf', writeGguf({ metadata: MINICPM }));
    expect(() => ggufCheckConfigCommand(g, file('c.json', '{nope'), {}, capture())).to.throw(InvalidInput, /not JSON/);
    expect(() => ggufCheckConfigCommand(g, file('a.json', '[1]'), {}, capture())).to.throw(InvalidInput, /not a JSON object/);
    expect(() => ggufCheckConfigCommand(g, join(tmp.dir, 'missing.json'), {}, capture())).to.throw(UsageError);
    expect(() => ggufCheckConfigCommand(file('x.gguf', 'GGUF\x01\0\0\0'), join(tmp.dir, 'c.json'), {}, capture())).to.throw(InvalidInput);
    expect(() => ggufCheckConfigCommand(file('x.gguf', 'GGUF\x01\0\0\0'), file('e.json', {}), {}, capture())).to.throw(GgufError, /v1/);
  });

  it('info: version, metadata summary, tensor table; --json', () => {
    const g = file('q.gguf', tinyQwen3Gguf({ type: 'Q4_K', layers: 1 }));
    const io = capture();
    expect(ggufInfoCommand(g, {}, io)).to.equal(0);
    const text = io.outs.join('\n');
    expect(io.outs[0]).to.match(/^GGUF v3, 21 metadata keys, 13 tensors, alignment 32/);
    expect(text).to.contain('general.architecture: string = "qwen3"');
    expect(text).to.match(/tokenizer\.ggml\.tokens: string\[\] = \["Ā", "ā", .*… \(320 items\)\]/);
    expect(text).to.match(/blk\.0\.attn_q\.weight\s+Q4_K\s+\[256, 256\]\s+36864/);
    const j = capture();
    ggufInfoCommand(g, { json: true }, j);
    const doc = JSON.parse(j.outs[0]!) as { version: number; tensors: { name: string; type: string; dims: number[] }[]; metadata: Record<string, { type: string; value: unknown }> };
    expect(doc.version).to.equal(3);
    expect(doc.tensors.find((t) => t.name === 'blk.0.ffn_down.weight')).to.deep.include({ type: 'Q4_K', dims: [512, 256] });
    expect(doc.metadata['qwen3.block_count']).to.deep.equal({ type: 'u32', value: 1 });
  });

  it('registerGgufCommands wires both commands into a commander group', async () => {
    const io = capture();
    const codes: number[] = [];
    const wrap: GgufWrap = (json, fn) => async (...a) => {
      try { codes.push(await fn(...a)); } catch (e) { codes.push(reportError(e, io, json(...a))); }
    };
    const cli = new Command('npu-offload').exitOverride();
    registerGgufCommands(cli.command('gguf'), io, wrap);
    const g = file('m.gguf', writeGguf({ metadata: GEMMA2 }));
    await cli.parseAsync(['gguf', 'check-config', g, file('c.json', { attn_logit_softcapping: 50 })], { from: 'user' });
    await cli.parseAsync(['gguf', 'info', file('bad.gguf', 'nope'), '--json'], { from: 'user' });
    expect(codes).to.deep.equal([1, 1]);
    expect(JSON.parse(io.outs.at(-1)!)).to.deep.equal({ error: { code: 'GgufError', offset: 0, reason: 'bad magic: not a GGUF file' } });
  });
});
