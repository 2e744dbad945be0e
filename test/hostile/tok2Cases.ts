/**
 * Hostile tokenizer files and texts, second table: files nested past the json-depth limit, GGUFs whose
 * special ids lie outside the vocabulary, pre-tokenizer patterns that backtrack exponentially, and one
 * line of 8 MB under a 128 MB heap. Each is refused with its typed error, or tokenized within its bounds.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gv } from '../../src/model/gguf/types.js';
import { writeGguf } from '../../src/model/gguf/writer.js';
import { QWEN3_DIR, tinyTokenizerJson, tinyTokenizerMetadata } from '../model/tokenizer/helpers.js';
import type { HostileCase } from './case.js';
import { ADD_PROGRAM, put, tinyGguf } from './fixtures.js';

function fail(what: string): never {
  throw new Error(what);
}

const mentions = (s: string) => (r: { stdout: string; stderr: string }) => {
  if (!(r.stdout + r.stderr).includes(s)) fail(`the output does not mention ${s}`);
};

const T = '{dir}/tokenizer.json';
const cli = (...a: string[]) => ['tokenize', ...a];

/** A tiny tokenizer.json whose normalizer is a Sequence nested `n` deep, written as text (JSON.stringify would overflow). */
const deepNormalizer = (n: number) => (dir: string) => {
  const deep = `${'{"type": "Sequence", "normalizers": ['.repeat(n)}{"type": "NFC"}${']}'.repeat(n)}`;
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson({ normalizer: 'DEEP' })).replace('"DEEP"', deep));
};

/** The tiny GGUF tokenizer with one special id set past its last token. */
const idPastVocab = (key: string) => (dir: string) => {
  const m = tinyTokenizerMetadata();
  m.set(key, gv.u32(1_000_000));
  writeFileSync(join(dir, 'm.gguf'), writeGguf({ metadata: new Map([['general.architecture', gv.str('qwen3')], ...m]) }));
};

/**
 * The big line's size and the heap it is tokenized under. The CLI with Qwen3's tokenizer loaded needs
 * 48 to 64 MB of heap, and with an 8 MB line 80 to 96 MB (measured 2026-12-03: about 4 bytes of heap per
 * byte of text); 128 MB leaves about 35 MB, so a tokenizer that needs 5 more bytes a byte (all of a
 * line's pieces or matches held at once, a copy per pass) fails. The 50 MB line under 512 MB this
 * replaced drew the line at about the same place (512 MB less the base, over 50 MB, is 9 bytes a byte)
 * and took six times as long.
 */
const BIG_LINE_BYTES = 8e6;
const BIG_LINE_HEAP_MB = 128;

/** One JSON line of BIG_LINE_BYTES of ordinary text (this repository's README, repeated). */
const bigLine = (dir: string) => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const text = readme.repeat(Math.ceil(BIG_LINE_BYTES / readme.length)).slice(0, BIG_LINE_BYTES);
  writeFileSync(join(dir, 'line.txt'), `${JSON.stringify(text)}\n`);
};

/** Runs the CLI (under BIG_LINE_HEAP_MB of heap) with a file as stdin and the ids to a file; prints a summary. */
const BIG_LINE_SCRIPT = `import { spawnSync } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const r = spawnSync(process.execPath, ['--max-old-space-size=${BIG_LINE_HEAP_MB}', fileURLToPath(new URL('./cli/bin.js', '{pkg}')), 'tokenize', ${JSON.stringify(QWEN3_DIR)}, '--json'],
  { stdio: [openSync('{dir}/line.txt', 'r'), openSync('{dir}/out.json', 'w'), 'inherit'] });
const out = readFileSync('{dir}/out.json', 'utf8');
let ids = 0; for (let i = out.indexOf(','); i >= 0; i = out.indexOf(',', i + 1)) ids++;
process.stdout.write(JSON.stringify({ head: out.slice(0, 9), tail: out.slice(-3), ids: ids + 1, signal: r.signal }) + '\\n');
process.exitCode = r.status ?? 3;`;

export const cases: readonly HostileCase[] = [
  {
    name: 'tokenize: a tokenizer.json with a 5000-deep normalizer Sequence is ResourceLimit json-depth naming the file',
    setup: deepNormalizer(5000), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'ResourceLimit',
    check: (r) => { mentions('"what":"json-depth","needed":10002,"max":64')(r); if ((r.stdout + r.stderr).includes('Internal')) fail('Internal'); },
  },
  { name: 'tokenize: a GGUF whose eos_token_id is past the vocabulary', setup: idPastVocab('tokenizer.ggml.eos_token_id'), cli: cli('{dir}/m.gguf', '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError', check: mentions('tokenizer.ggml.eos_token_id: id 1000000 is outside the vocabulary') },
  { name: 'tokenize: a GGUF whose bos_token_id is past the vocabulary', setup: idPastVocab('tokenizer.ggml.bos_token_id'), cli: cli('{dir}/m.gguf'), stdin: '"x"\n', exit: 1, code: 'TokenizerError', check: mentions('tokenizer.ggml.bos_token_id: id 1000000') },
  {
    name: `tokenize: one line of ${BIG_LINE_BYTES / 1e6} MB of text is tokenized under a ${BIG_LINE_HEAP_MB} MB heap bound (streamed pre-tokenization, linear matcher)`,
    setup: bigLine, script: BIG_LINE_SCRIPT, exit: 0, timeoutMs: 60_000,
    check: (r) => {
      const s = JSON.parse(r.stdout) as { head: string; tail: string; ids: number };
      // 2 316 835 ids from the README of 2026-12-03; one per 10 bytes still shows the line was not cut short.
      if (s.head !== '{"ids":[2' || s.tail !== ']}\n' || s.ids < BIG_LINE_BYTES / 10) fail(r.stdout);
    },
  },
  {
    name: 'gguf check-config: a config.json nested 100000 deep is ResourceLimit json-depth naming it',
    setup: (d) => { tinyGguf(d, 't.gguf'); put(d, 'config.json', `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`); },
    cli: ['gguf', 'check-config', 't.gguf', 'config.json'], exit: 1, code: 'ResourceLimit', check: mentions('config.json: json-depth 100001 is past the limit 64'),
  },
  {
    name: 'run --inputs: an inputs file nested 100000 deep is ResourceLimit json-depth naming it',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); put(d, 'in.json', `{"x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`); },
    cli: ['run', 'p.json', '--target', 'cpu', '--inputs', 'in.json'], exit: 1, code: 'ResourceLimit', check: mentions('in.json: json-depth 100001 is past the limit 64'),
  },
];
