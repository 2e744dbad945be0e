import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenizeCommand } from '../../src/cli/tokenize.js';
import { tempDir } from '../jobs/helpers.js';
import { cliHere } from './inProcess.js';
import { QWEN3_DIR, QWEN3_TOKENIZER, qwen3Gguf, tinyTokenizerJson } from '../model/tokenizer/helpers.js';

/** `tokenize ARGS` with `input` on stdin, in this process (see inProcess.ts). */
async function run(args: string[], input: string | Buffer): Promise<{ status: number | null; out: string[]; err: string }> {
  const r = await cliHere(['tokenize', ...args], { stdin: input, boundMs: 60_000 });
  return { status: r.status, out: r.out.split('\n').filter((l) => l !== ''), err: r.err };
}
const lines = (...vs: unknown[]) => vs.map((v) => (typeof v === 'string' && v.startsWith('RAW:') ? v.slice(4) : JSON.stringify(v))).join('\n') + '\n';

describe('cli: tokenize', function () {
  this.timeout(120_000);
  let tmp: ReturnType<typeof tempDir>;
  /**
   * A byte-level tokenizer.json of 268 tokens ("hello" and " world" merged; "ok" and "after" a byte a
   * token), for the tests of lines, errors and output that are not about Qwen3's vocabulary: it loads
   * at once where Qwen3's 151 669 tokens take most of a second per call.
   */
  let tiny = '';
  before(() => {
    tmp = tempDir('npuo-tokcli-');
    tiny = join(tmp.dir, 'tiny.json');
    writeFileSync(tiny, JSON.stringify(tinyTokenizerJson()));
  });
  after(() => tmp.remove());

  it('--json encodes one string per line with a tokenizer.json, <think> whole', async () => {
    const r = await run([QWEN3_TOKENIZER, '--json'], lines('Hello world', '<think>x</think>', ''));
    expect(r.status, r.err).to.equal(0);
    expect(r.out.map((l): unknown => JSON.parse(l))).to.deep.equal([{ ids: [9707, 1879] }, { ids: [151667, 87, 151668] }, { ids: [] }]);
  });

  it('--chat --json renders the model directory\'s template, enable_thinking=false with --no-thinking', async () => {
    const r = await run([QWEN3_DIR, '--chat', '--no-thinking', '--json'], lines([{ role: 'user', content: 'Hi' }]));
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out[0]!) as { prompt: string; ids: number[] };
    expect(doc.prompt).to.equal('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
    expect(doc.ids).to.deep.equal([151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271]);
    const plain = await run([QWEN3_DIR, '--chat', '--no-generation-prompt', '--json'], lines([{ role: 'user', content: 'Hi' }]));
    expect((JSON.parse(plain.out[0]!) as { prompt: string }).prompt).to.equal('<|im_start|>user\nHi<|im_end|>\n');
  });

  it('a GGUF alone serves: --decode --json from its own vocabulary', async () => {
    const gguf = join(tmp.dir, 'qwen3.gguf');
    writeFileSync(gguf, qwen3Gguf());
    const r = await run([gguf, '--decode', '--json'], lines([9707, 1879], [151644, 872, 151645], [151644, 872, 151645]));
    expect(r.status, r.err).to.equal(0);
    expect(r.out.map((l): unknown => JSON.parse(l))).to.deep.equal([{ text: 'Hello world' }, { text: '<|im_start|>user<|im_end|>' }, { text: '<|im_start|>user<|im_end|>' }]);
    const skip = await run([gguf, '--decode', '--skip-special', '--json'], lines([151644, 872, 151645]));
    expect(JSON.parse(skip.out[0]!)).to.deep.equal({ text: 'user' });
  });

  it('a bad line gets a typed error on its own line, the others go on, and the exit code is 1', async () => {
    const input = Buffer.concat([
      Buffer.from(lines('ok', 'RAW:{not json', 42, 'RAW:"\\ud800"')),
      Buffer.from([0x22, 0xff, 0x22, 0x0a]),
      Buffer.from(lines('', 'RAW:', 'RAW:  ', 'after')),
    ]);
    const r = await run([tiny, '--json'], input);
    expect(r.status).to.equal(1);
    const docs = r.out.map((l) => JSON.parse(l) as { ids?: number[]; error?: { code: string; path: string; reason: string } });
    expect(docs).to.have.length(7);
    expect(docs[0]).to.deep.equal({ ids: [111, 107] });
    expect(docs.slice(1, 5).map((d) => [d.error?.code, d.error?.path])).to.deep.equal([
      ['InvalidInput', 'line 2'], ['InvalidInput', 'line 3'], ['InvalidInput', 'line 4'], ['InvalidInput', 'line 5']]);
    expect(docs[1]!.error!.reason).to.match(/not JSON/);
    expect(docs[3]!.error!.reason).to.match(/lone surrogate U\+D800/);
    expect(docs[4]!.error!.reason).to.match(/not valid UTF-8/);
    expect(docs[5]).to.deep.equal({ ids: [] });
    expect(docs[6]).to.deep.equal({ ids: [97, 102, 116, 101, 114] });
    expect(r.err).to.not.match(/at .*\.js:\d+/);
  });

  it('--decode: an id out of range is refused naming the line, the place and the id', async () => {
    const r = await run([tiny, '--decode', '--json'], lines([1, 2, 999999], ['x'], 'text', [259]));
    expect(r.status).to.equal(1);
    const docs = r.out.map((l) => JSON.parse(l) as { text?: string; error?: { code: string; path: string; reason: string } });
    expect(docs[0]!.error).to.deep.include({ code: 'InvalidInput', path: 'line 1/2' });
    expect(docs[0]!.error!.reason).to.contain('token id 999999 is outside the vocabulary (0 to 267)');
    expect(docs[1]!.error!.path).to.equal('line 2/0');
    expect(docs[2]!.error!.reason).to.match(/with --decode a line must be a JSON array/);
    expect(docs[3]).to.deep.equal({ text: 'hello' });
  });

  it('without --json: ids and their pieces, the text, errors on stderr by line', async () => {
    const r = await run([tiny], lines('hello world', [1]));
    expect(r.status).to.equal(1);
    expect(r.out).to.deep.equal(['2 tokens: 259 263', '  "hello" " world"']);
    expect(r.err.trim()).to.equal('line 2: error [InvalidInput]: invalid input at line 2: a line must be a JSON string (--decode takes arrays of ids, --chat arrays of messages)');
    const d = await run([tiny, '--decode'], lines([259, 263]));
    expect(d.out).to.deep.equal(['hello world']);
  });

  it('refusals of the source and the flags: usage errors exit 2, a file that is no tokenizer exits 1', async () => {
    const both = await run([QWEN3_TOKENIZER, '--decode', '--chat', '--json'], '');
    expect(both.status).to.equal(2);
    expect(JSON.parse(both.out[0]!)).to.deep.include({ error: { code: 'UsageError', reason: '--decode and --chat cannot be used together' } });
    expect((await run([join(tmp.dir, 'missing.json')], '')).status).to.equal(2);
    const bare = join(tmp.dir, 'bare.gguf');
    writeFileSync(bare, qwen3Gguf(new Map()));
    const r = await run([bare, '--json'], lines('x'));
    expect(r.status).to.equal(1);
    expect(JSON.parse(r.out[0]!)).to.deep.include({ error: { code: 'TokenizerError', source: bare, reason: 'tokenizer.ggml.model: missing: the GGUF carries no tokenizer' } });
    const notTok = join(tmp.dir, 'config.json');
    writeFileSync(notTok, '{"vocab_size": 3}');
    const t = await run([notTok], lines('x'));
    expect(t.status).to.equal(1);
    expect(t.err).to.match(/^error \[TokenizerError\]: tokenizer .*config\.json: \/model: missing: not a tokenizer\.json/);
  });

  it('lines split across chunks are joined; a line past the byte limit is refused and skipped, the next one read', async () => {
    const outs: string[] = [];
    const io = { out: (l: string) => outs.push(l), err: (l: string) => outs.push(`ERR ${l}`) };
    async function* chunks() {
      yield Buffer.from('"hel');
      yield Buffer.from('lo world"\n"');
      yield Buffer.from('x'.repeat(40));
      yield Buffer.from('x'.repeat(40) + '"\n"hel');
      yield Buffer.from('lo"');
    }
    expect(await tokenizeCommand(tiny, { json: true }, io, chunks(), 64)).to.equal(1);
    expect(outs.map((l) => JSON.parse(l) as unknown)).to.deep.equal([
      { ids: [259, 263] },
      { error: { code: 'ResourceLimit', what: 'line-bytes', needed: 82, max: 64, place: 'line 2' } },
      { ids: [259] },
    ]);
  });
});
