import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeLines } from '../../src/io/escape.js';
import { decodeTensor } from '../../src/ir/tensorCodec.js';
import { argmax } from '../../src/model/qwen3/sampler.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import { loadTokenizer } from '../../src/model/tokenizer/load.js';
import { cliHere } from './inProcess.js';

describe('cli: generate and gate', function () {
  this.timeout(180_000);
  let dir = '';
  let gguf = '';
  // In this process (see inProcess.ts): the CLI's own start per call cost more than the calls.
  const run = (...args: string[]) => cliHere(args, { env: { NPU_OFFLOAD_CACHE_DIR: join(dir, 'cache') } });
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'qwen3-cli-'));
    gguf = join(dir, 'm.gguf');
    writeFileSync(gguf, tinyQwen3Gguf({ layers: 2, std: 0.05, seed: 3, type: 'Q8_0' }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json prints ids, text, prompt_tokens and timings; --logits adds each step\'s f32 logits', async () => {
    const r = await run('generate', gguf, '--prompt', 'the cat', '--max-tokens', '5', '--ctx', '32', '--repetition-penalty', '1', '--json', '--logits');
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as { ids: number[]; text: string; prompt_tokens: number; finish_reason: string; timings: Record<string, number>; logits: unknown[] };
    const tok = loadTokenizer(gguf);
    expect(doc.prompt_tokens).to.equal(tok.encode('the cat').length);
    expect(doc.ids).to.have.length(5);
    expect(doc.text).to.equal(tok.decode(doc.ids));
    expect(doc.finish_reason).to.equal('length');
    expect(doc.timings['prefill_tok_s']).to.be.above(0);
    expect(doc.timings['decode_tok_s']).to.be.above(0);
    expect(doc.logits).to.have.length(5);
    doc.logits.forEach((l, k) => {
      const t = decodeTensor(l, `/logits/${k}`);
      expect([t.dtype, t.shape]).to.deep.equal(['f32', [320]]);
      expect(argmax(t.data)).to.equal(doc.ids[k]);
    });
  });

  it('without --json the text streams to stdout, the same text, and a summary goes to stderr', async () => {
    const json = JSON.parse((await run('generate', gguf, '--prompt-ids', '104,105', '--max-tokens', '6', '--ctx', '32', '--json')).out) as { text: string };
    const r = await run('generate', gguf, '--prompt-ids', '104,105', '--max-tokens', '6', '--ctx', '32');
    expect(r.status, r.err).to.equal(0);
    // The terminal gets control characters escaped, as every line the CLI prints.
    expect(r.out).to.equal(`${escapeLines(json.text)}\n`);
    expect(r.err).to.match(/2 prompt tokens, 6 generated \(length\); prefill [\d.]+ tok\/s, decode [\d.]+ tok\/s on engine:host/);
  });

  it('runs on host (the fast CPU target) by default; --target cpu says on stderr it is the slow float64 reference', async () => {
    const plain = await run('generate', gguf, '--prompt-ids', '104,105', '--max-tokens', '2', '--ctx', '32');
    expect(plain.status, plain.err).to.equal(0);
    expect(plain.err).to.match(/on engine:host\b/);
    expect(plain.err).not.to.include('float64 reference');
    const cpu = await run('generate', gguf, '--prompt-ids', '104,105', '--max-tokens', '2', '--ctx', '32', '--target', 'cpu');
    expect(cpu.status, cpu.err).to.equal(0);
    expect(cpu.err).to.match(/on engine:cpu\b/);
    expect(cpu.err).to.include('--target cpu is the float64 reference: exact but slow');
    expect(cpu.err).to.include('--target host (the default) is the fast CPU target');
  });

  it('--threads past the bound of the worker counts is a usage error (exit 2) for generate, gate and serve, before any load', async () => {
    for (const cmd of [['generate', gguf, '--prompt', 'x'], ['gate', gguf], ['serve', gguf, '--port', '0']]) {
      const r = await run(...cmd, '--threads', '100000');
      expect(r.status, `${cmd[0]}: ${r.err}`).to.equal(2);
      expect(r.err).to.match(/--threads 100000 is past the bound of \d+ \(4 per core on this machine, at least 8\)/);
      expect((await run(...cmd, '--threads', '0')).status, `${cmd[0]} --threads 0`).to.equal(2);
    }
  });

  it('--max-program-bytes sets the limit the model\'s programs are built under: a tiny one refuses the load typed', async () => {
    const r = await run('generate', gguf, '--prompt-ids', '104,105', '--max-tokens', '2', '--ctx', '32', '--max-program-bytes', '100000', '--json');
    expect(r.status).to.equal(1);
    expect((JSON.parse(r.out) as { error: { code: string } }).error.code).to.equal('ResourceLimit');
    expect(r.out).to.include('program-bytes');
    // The same run under a limit it fits: the flag changes nothing else.
    const fits = await run('generate', gguf, '--prompt-ids', '104,105', '--max-tokens', '2', '--ctx', '32', '--max-program-bytes', '1000000000');
    expect(fits.status, fits.err).to.equal(0);
  });

  it('--chat renders ChatML for a model without a template; --seed and --temperature sample repeatably', async () => {
    const chat = join(dir, 'chat.json');
    writeFileSync(chat, JSON.stringify([{ role: 'user', content: 'hi' }]));
    const a = await run('generate', gguf, '--chat', chat, '--max-tokens', '4', '--ctx', '32', '--temperature', '0.9', '--seed', '5', '--json');
    expect(a.status, a.err).to.equal(0);
    const doc = JSON.parse(a.out) as { ids: number[]; prompt_tokens: number };
    expect(doc.prompt_tokens).to.equal(loadTokenizer(gguf).encode('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n').length);
    const b = JSON.parse((await run('generate', gguf, '--chat', chat, '--max-tokens', '4', '--ctx', '32', '--temperature', '0.9', '--seed', '5', '--json')).out) as { ids: number[] };
    expect(b.ids).to.deep.equal(doc.ids);
  });

  it('--target host gives the greedy ids of --target cpu', async () => {
    const ids = async (target: string) => (JSON.parse((await run('generate', gguf, '--prompt', 'hello there', '--max-tokens', '6', '--ctx', '32', '--repetition-penalty', '1', '--target', target, '--json')).out) as { ids: number[] }).ids;
    const host = await ids('host');
    expect(host).to.have.length(6);
    expect(host).to.deep.equal(await ids('cpu'));
  });

  it('refuses: two prompts (exit 1), malformed ids (exit 2), a missing model (exit 2)', async () => {
    const two = await run('generate', gguf, '--prompt', 'x', '--prompt-ids', '1', '--json');
    expect(two.status).to.equal(1);
    expect(JSON.parse(two.out)).to.have.nested.property('error.code', 'InvalidOptions');
    expect((await run('generate', gguf, '--prompt-ids', '1,x')).status).to.equal(2);
    expect((await run('generate', join(dir, 'none.gguf'), '--prompt', 'x')).status).to.equal(2);
  });

  it('gate: every phase PASS against the fp64 reference (exit 0); an unmet speed floor is a FAIL (exit 1)', async () => {
    const r = await run('gate', gguf, '--ctx', '64');
    expect(r.status, r.out + r.err).to.equal(0);
    for (const phase of ['greedy', 'teacher-forced', '64-position', 'prefill', 'repeat', 'speed']) expect(r.out).to.match(new RegExp(`^${phase}\\s+PASS`, 'm'));
    expect(r.out).to.match(/^gate: PASS$/m);
    // The speed floor's FAIL needs no full gate again: fewer steps and positions, the other phases still passing.
    const slow = await run('gate', gguf, '--ctx', '64', '--steps', '2', '--positions', '24', '--min-decode-tok-s', '1000000', '--json');
    expect(slow.status).to.equal(1);
    const doc = JSON.parse(slow.out) as { pass: boolean; phases: { phase: string; pass: boolean }[] };
    expect(doc.pass).to.equal(false);
    expect(doc.phases.filter((p) => !p.pass).map((p) => p.phase)).to.deep.equal(['speed']);
  });
});
