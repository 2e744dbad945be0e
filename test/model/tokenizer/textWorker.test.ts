/**
 * The text worker gives the ids the tokenizer gives in this thread, refuses by bytes only what cannot
 * fit a context, and is replaced after a call that ended it.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceLimit } from '../../../src/errors/index.js';
import { loadTokenizer } from '../../../src/model/tokenizer/load.js';
import { maxPromptBytes, TextWorker } from '../../../src/model/tokenizer/textWorker.js';
import { QWEN3_DIR } from './helpers.js';
import { tinyTokenizerJson } from './helpers.js';

describe('tokenizer: the text worker', function () {
  this.timeout(120_000);

  it('encodes and renders chats as the tokenizer does in this thread (Qwen3\'s own files)', async () => {
    const tok = loadTokenizer(QWEN3_DIR);
    const w = new TextWorker(QWEN3_DIR);
    try {
      const text = 'Hello, wörld! 你好 <|im_start|> \u{1F600} 12345';
      expect(await w.encode(text)).to.deep.equal(tok.encode(text));
      expect(await w.encode(text, { parseSpecial: false })).to.deep.equal(tok.encode(text, { parseSpecial: false }));
      const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi there' }];
      expect(await w.encodeChat(messages, { enableThinking: false })).to.deep.equal(tok.encodeChat(messages, { enableThinking: false }));
    } finally { await w.close(); }
  });

  it('refuses a text by its bytes only past ctx x the longest token x 4, before encoding it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npu-textw-'));
    const w = new TextWorker(join(dir, 'tokenizer.json'));
    try {
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
      const tok = loadTokenizer(join(dir, 'tokenizer.json'));
      let longest = 0;
      for (let id = 0; id < tok.vocabSize; id++) longest = Math.max(longest, tok.decodeBytes([id]).length);
      const max = maxPromptBytes(2, longest);
      expect(await w.encode('a'.repeat(max), {}, 2)).to.have.length(max);
      const e = await w.encode('a'.repeat(max + 1), {}, 2).catch((x: unknown) => x);
      expect(e).to.be.instanceOf(ResourceLimit);
      expect((e as ResourceLimit).what).to.equal('prompt-bytes');
      expect((e as ResourceLimit).needed).to.equal(max + 1);
    } finally { await w.close(); rmSync(dir, { recursive: true, force: true }); }
  });

  it('a call past its time bound ends the worker; the next call is served by a fresh one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npu-textw-'));
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ chat_template: "{% if messages[0].content == 'slow' %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}ok" }));
    const w = new TextWorker(dir, { renderMs: 500 });
    try {
      const e = await w.encodeChat([{ role: 'user', content: 'slow' }]).catch((x: unknown) => x);
      expect(e).to.be.instanceOf(ResourceLimit);
      expect((e as ResourceLimit).what).to.equal('template-ms');
      expect((e as ResourceLimit).place).to.equal(`${dir} (chat template)`);
      expect((await w.encodeChat([{ role: 'user', content: 'fast' }])).prompt).to.equal('ok');
    } finally { await w.close(); rmSync(dir, { recursive: true, force: true }); }
  });
});
