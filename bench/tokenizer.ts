/**
 * `npm run bench`, the tokenizer's part: how long loadTokenizer takes on Qwen3's real tokenizer.json and
 * on generated vocabularies of 100k, 400k and 2M tokens (the time per token shows whether loading grows
 * linearly), and encode throughput in MB/s on ordinary text and on one long word.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTokenizer } from '../src/model/tokenizer/index.js';
import { QWEN3_TOKENIZER } from '../test/model/tokenizer/helpers.js';
import { syntheticTokenizerJson } from '../test/model/tokenizer/synthetic.js';

function timed<T>(f: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = f();
  return { value, ms: performance.now() - t };
}

const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-tok-'));
try {
  console.log(`tokenizer bench (load average ${loadavg()[0]!.toFixed(1)})`);
  const qwen = timed(() => loadTokenizer(QWEN3_TOKENIZER));
  console.log(`load Qwen3 tokenizer.json (${qwen.value.vocabSize} ids): ${qwen.ms.toFixed(0)} ms`);
  for (const size of [100_000, 400_000, 2_000_000]) {
    const file = join(dir, `v${size}.json`);
    writeFileSync(file, JSON.stringify(syntheticTokenizerJson(size)));
    const r = timed(() => loadTokenizer(file));
    console.log(`load generated ${size} tokens: ${r.ms.toFixed(0)} ms (${((r.ms * 1e3) / size).toFixed(2)} us a token)`);
  }
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const text = readme.repeat(Math.ceil(4e6 / readme.length)).slice(0, 4e6);
  const enc = timed(() => qwen.value.encode(text));
  console.log(`encode 4 MB of text with Qwen3: ${enc.ms.toFixed(0)} ms, ${(4e3 / enc.ms).toFixed(2)} MB/s, ${enc.value.length} ids`);
  const word = timed(() => qwen.value.encode('a'.repeat(1e6)));
  console.log(`encode one 1 MB word with Qwen3: ${word.ms.toFixed(0)} ms, ${(1e3 / word.ms).toFixed(2)} MB/s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
