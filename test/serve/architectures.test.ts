/**
 * `serve` answers chat completions with a GGUF of each architecture beside qwen3 (llama, qwen2, phi3, minicpm, gemma3, qwen3moe; tiny, random weights, byte-level
 * vocabulary): each reply is the greedy continuation its own model gives the rendered prompt, so
 * the architectures' replies differ (the negative control: a server that ran one graph for all,
 * or ignored the model, would give the same text twice).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import { startServer } from './helpers.js';

const TINY = { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, contextLength: 256, std: 0.3, type: 'Q8_0' } as const;
const ARCHS = ['llama', 'qwen2', 'phi3', 'minicpm', 'gemma3', 'qwen3moe'] as const;
const TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:';

describe('serve: chat completions with llama, qwen2, phi3, minicpm, gemma3 and qwen3moe GGUFs', function () {
  this.timeout(300_000);
  let dir = '';
  // One engine for every load here (the server's and the direct one): a fresh engine is not the subject.
  let engine: Engine;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'npu-serve-arch-')); engine = createEngine({ cacheDir: join(dir, 'cache') }); });
  after(async () => { await engine.close(); rmSync(dir, { recursive: true, force: true }); });

  const replies: Record<string, string> = {};
  for (const arch of ARCHS) {
    it(`${arch}: a chat completion is the model's own greedy continuation of the rendered prompt`, async () => {
      const path = join(dir, `${arch}.gguf`);
      writeFileSync(path, tinyQwen3Gguf({ ...TINY, arch, seed: 11 }));
      const s = await startServer(path, { chatTemplate: TEMPLATE, load: { engine } });
      let content: string;
      try {
        const r = await s.client.chat.completions.create({ model: 'tiny', max_tokens: 6, temperature: 0, messages: [{ role: 'user', content: 'hello there' }] });
        expect(r.choices).to.have.length(1);
        expect(r.usage!.completion_tokens).to.equal(6);
        content = r.choices[0]!.message.content ?? '';
      } finally { await s.server.close(); }
      // The same prompt through the model directly, with no server, under the same default sampling (greedy with the
      // default repetition penalty, as the request names none).
      const m = await loadModel(path, { target: 'host', ctx: 64, engine });
      try {
        const tok = m.tokenizer;
        if (tok === null) throw new Error(`the ${arch} GGUF's tokenizer did not load`);
        const ids = tok.encode('user: hello there\nassistant:');
        const direct = await m.complete({ promptIds: ids, maxTokens: 6, ignoreEos: true });
        expect(content).to.equal(tok.decode(direct.ids));
      } finally { await m.close(); }
      replies[arch] = content;
    });
  }

  it('the architectures answer differently', () => {
    expect(Object.keys(replies)).to.have.length(ARCHS.length);
    expect(new Set(Object.values(replies)).size).to.equal(ARCHS.length);
  });
});
