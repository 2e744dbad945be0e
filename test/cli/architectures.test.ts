import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyQwen3Gguf, type TinyQwen3Options } from '../../src/model/qwen3/tiny.js';
import { loadTokenizer } from '../../src/model/tokenizer/load.js';
import { cliHere } from './inProcess.js';

/** A model small enough for the gate's fp64 reference phases (helpers.ts's TINY shape). */
const TINY: TinyQwen3Options = { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, contextLength: 256, std: 0.3, type: 'Q8_0' };

describe('cli: generate and gate with GGUFs of each architecture', function () {
  this.timeout(300_000);
  let dir = '';
  const run = (...args: string[]) => cliHere(args, { env: { NPU_OFFLOAD_CACHE_DIR: join(dir, 'cache') } });
  const gguf = (name: string, o: TinyQwen3Options) => { const p = join(dir, name); writeFileSync(p, tinyQwen3Gguf(o)); return p; };
  // Each architecture's TINY GGUF, written at its first use and read by every test of it (any one of them may run alone).
  const SHAPES: Record<string, TinyQwen3Options> = {
    llama: { ...TINY, arch: 'llama', tiedEmbeddings: false, ropeFreqs: true, ropeTheta: 500_000 },
    qwen2: { ...TINY, arch: 'qwen2' },
    qwen3moe: { ...TINY, arch: 'qwen3moe', experts: 4, expertsUsed: 2, expertFf: 64 },
    // phi3 with rope on half of each head; gemma3 with a sliding window of 6 (shorter than the gate's prompt and steps).
    phi3: { ...TINY, arch: 'phi3', ropeDims: 16 },
    minicpm: { ...TINY, arch: 'minicpm' },
    gemma3: { ...TINY, arch: 'gemma3' },
  };
  const written = new Map<string, string>();
  const tiny = (arch: string): string => {
    let p = written.get(arch);
    if (p === undefined) { p = gguf(`${arch}.gguf`, SHAPES[arch]!); written.set(arch, p); }
    return p;
  };
  before(() => { dir = mkdtempSync(join(tmpdir(), 'arch-cli-')); written.clear(); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** `generate --prompt-ids` of 6 greedy tokens on host gives the cpu reference's ids. */
  const hostGivesCpusIds = async (path: string): Promise<void> => {
    const ids = async (target: string) => {
      const r = await run('generate', path, '--prompt-ids', '104,101,108,108,111', '--max-tokens', '6', '--ctx', '32', '--repetition-penalty', '1', '--target', target, '--json');
      expect(r.status, r.err).to.equal(0);
      return (JSON.parse(r.out) as { ids: number[] }).ids;
    };
    const host = await ids('host');
    expect(host).to.have.length(6);
    expect(host).to.deep.equal(await ids('cpu'));
  };

  /** `generate --prompt 'the cat'` (4 tokens at most): its ids, its prompt counted by the file's own tokenizer. */
  const fromText = async (path: string): Promise<number[]> => {
    const r = await run('generate', path, '--prompt', 'the cat', '--max-tokens', '4', '--ctx', '32', '--json');
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as { ids: number[]; prompt_tokens: number };
    expect(doc.prompt_tokens).to.equal(loadTokenizer(path).encode('the cat').length);
    return doc.ids;
  };

  it('generate: a llama GGUF (separate output, rope_freqs) by token ids, host giving the cpu reference\'s greedy ids', async () => {
    await hostGivesCpusIds(tiny('llama'));
  });

  it('generate: a qwen2 GGUF from text (its own qwen2 tokenizer)', async () => {
    const path = tiny('qwen2');
    expect(await fromText(path)).to.have.length(4);
  });

  it('generate and gate: a qwen3moe GGUF (4 experts, 2 used) from text and by ids, host giving the cpu reference\'s greedy ids; gate passes', async () => {
    const path = tiny('qwen3moe');
    // Up to 4 tokens: the random model may give its eos first.
    expect((await fromText(path)).length).to.be.within(1, 4);
    await hostGivesCpusIds(path);
    const g = await run('gate', path, '--ctx', '64');
    expect(g.status, g.out + g.err).to.equal(0);
    expect(g.out).to.match(/^gate: PASS$/m);
  });

  for (const arch of ['llama', 'qwen2', 'phi3', 'minicpm', 'gemma3']) {
    it(`gate: a ${arch} GGUF passes every phase against the fp64 reference`, async () => {
      const r = await run('gate', tiny(arch), '--ctx', '64');
      expect(r.status, r.out + r.err).to.equal(0);
      // The table: a line per phase (test/cli/generate checks a failing one), then the verdict.
      for (const phase of ['greedy', 'teacher-forced', '64-position', 'prefill', 'repeat', 'speed']) expect(r.out).to.match(new RegExp(`^${phase}\\s+PASS`, 'm'));
      expect(r.out).to.match(/^gate: PASS$/m);
    });
  }

  it('gguf pack, then generate: a phi3 and a gemma3 Q4_0 GGUF\'s model directory gives the GGUF\'s greedy ids', async () => {
    // Hidden 256: a model directory's q4_1 tiles are 256 columns wide, so TINY's hidden 64 does not bind.
    for (const [arch, o] of [['phi3', { ropeDims: 48 }], ['gemma3', { slidingWindow: 3 }]] as const) {
      const path = gguf(`${arch}-256.gguf`, { arch, layers: 2, type: 'Q4_0', std: 0.05, seed: 5, ...o });
      const packed = join(dir, `${arch}-q4nx`);
      // A placeholder tokenizer.json (the pack CLI copies one); generation goes by ids.
      const tok = join(dir, 'tok');
      mkdirSync(tok, { recursive: true });
      writeFileSync(join(tok, 'tokenizer.json'), '{"version":"1.0","model":{"type":"BPE"}}\n');
      const p = await run('gguf', 'pack', path, packed, '--tokenizer', tok);
      expect(p.status, `${arch}: ${p.err}`).to.equal(0);
      const ids = async (model: string) => {
        const r = await run('generate', model, '--prompt-ids', '104,101,108,108,111', '--max-tokens', '4', '--ctx', '32', '--repetition-penalty', '1', '--json');
        expect(r.status, `${arch} ${model}: ${r.err} ${r.out}`).to.equal(0);
        return (JSON.parse(r.out) as { ids: number[] }).ids;
      };
      expect(await ids(packed), arch).to.deep.equal(await ids(path));
    }
  });

  it('score: a llama and a gemma3 GGUF by ids on host, a row of logits per position and a finite perplexity', async () => {
    const ids = [104, 101, 108, 108, 111, 32, 119, 111];
    for (const arch of ['llama', 'gemma3']) {
      const r = await run('score', tiny(arch), '--ids', ids.join(','), '--ctx', '32', '--target', 'host', '--json');
      expect(r.status, `${arch}: ${r.err}`).to.equal(0);
      const doc = JSON.parse(r.out) as { logits: number[][]; logprobs: number[]; perplexity: number };
      expect(doc.logits, arch).to.have.length(ids.length);
      expect(doc.logits.every((row) => row.length === 320)).to.equal(true);
      expect(doc.logprobs).to.have.length(ids.length - 1);
      expect(Number.isFinite(doc.perplexity) && doc.perplexity > 1).to.equal(true);
    }
  });

  it('a GGUF of an architecture that does not run is refused (exit 1), naming those that do', async () => {
    const path = gguf('m.gguf', TINY);
    const bytes = Buffer.from(tinyQwen3Gguf(TINY));
    // Same length: "qwen3" becomes "gemma" in general.architecture's value (the first occurrence).
    const at = bytes.indexOf(Buffer.from('general.architecture'));
    const v = bytes.indexOf(Buffer.from('qwen3'), at);
    bytes.write('gemma', v);
    writeFileSync(path, bytes);
    const r = await run('generate', path, '--prompt-ids', '1,2', '--json');
    expect(r.status).to.equal(1);
    expect(r.out).to.include('the architectures that do are qwen3, qwen3moe, llama, qwen2, phi3, minicpm, gemma3');
  });
});
