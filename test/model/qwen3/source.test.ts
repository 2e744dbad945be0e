import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openModelSource } from '../../../src/model/qwen3/source.js';
import { tinyQwen3Gguf } from '../../../src/model/qwen3/tiny.js';
import { loadTokenizer } from '../../../src/model/tokenizer/load.js';
import type { Tokenizer } from '../../../src/model/tokenizer/types.js';

function tokenizerOf(path: string): Tokenizer {
  const t = openModelSource(path).tokenizer;
  if (t instanceof Error) throw t;
  return t;
}

describe('model source: a GGUF\'s tokenizer is built once per file identity', () => {
  let dir = '';
  let bytes = Buffer.alloc(0);
  /** An added token (no merge makes it, so a rewrite of its text keeps the file valid) and where its text starts. */
  let id = -1;
  let at = -1;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'npu-source-'));
    bytes = Buffer.from(tinyQwen3Gguf({ layers: 1, std: 0.05, seed: 5 }));
    const fresh = loadTokenizerOf(bytes);
    id = fresh.encode('<|im_end|>', { addSpecial: false })[0]!;
    expect(fresh.tokenText(id)).to.equal('<|im_end|>');
    // A GGUF string is its u64 length, then its bytes: the token's entry in tokenizer.ggml.tokens.
    const entry = Buffer.alloc(8 + 10);
    entry.writeBigUInt64LE(10n);
    entry.write('<|im_end|>', 8, 'latin1');
    at = bytes.indexOf(entry) + 8;
    expect(at).to.be.at.least(8);
    expect(bytes.indexOf(entry, at)).to.equal(-1);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function loadTokenizerOf(b: Buffer): Tokenizer {
    const p = join(dir, `scratch-${Math.random()}.gguf`);
    writeFileSync(p, b);
    return loadTokenizer(p);
  }

  it('gives a second load of the same file the same tokenizer, which encodes as a fresh one', () => {
    const p = join(dir, 'same.gguf');
    writeFileSync(p, bytes);
    const a = tokenizerOf(p);
    expect(tokenizerOf(p)).to.equal(a);
    const fresh = loadTokenizer(p);
    expect(fresh).to.not.equal(a);
    expect(a.encode('the cat sat')).to.deep.equal(fresh.encode('the cat sat'));
    expect(a.tokenText(id)).to.equal(fresh.tokenText(id));
  });

  it('misses for a file rewritten in place with the same size and mtime, and for a copy elsewhere', () => {
    const p = join(dir, 'rewritten.gguf');
    writeFileSync(p, bytes);
    // A whole second, which utimes sets exactly: the rewrite below keeps inode, size and mtime.
    utimesSync(p, 1_700_000_000, 1_700_000_000);
    const before = tokenizerOf(p);
    const old = before.tokenText(id)!;
    const st = statSync(p, { bigint: true });
    const changed = Buffer.from(bytes);
    changed[at + 7] = 0x78; // <|im_enx|>: the same length, another text
    writeFileSync(p, changed);
    utimesSync(p, 1_700_000_000, 1_700_000_000);
    const now = statSync(p, { bigint: true });
    expect([now.ino, now.size, now.mtimeNs]).to.deep.equal([st.ino, st.size, st.mtimeNs]);
    const after = tokenizerOf(p);
    // Negative control of the key: a hit here would keep the old file's token text.
    expect(after).to.not.equal(before);
    expect(after.tokenText(id)).to.not.equal(old);
    expect(after.tokenText(id)).to.equal(loadTokenizer(p).tokenText(id));
    const copy = join(dir, 'copy.gguf');
    copyFileSync(p, copy);
    expect(tokenizerOf(copy)).to.not.equal(after);
  });
});
