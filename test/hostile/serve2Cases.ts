/**
 * Hostile chat templates reachable from the CLI: `tokenize --chat` and `generate --chat` render the
 * model's template in the bounded text worker, so a template that loops a billion times or writes about
 * 1 GB is a typed ResourceLimit (exit 1), never a signal death, an abort or a hang.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quantize } from '../../src/model/gguf/quantize.js';
import { gv } from '../../src/model/gguf/types.js';
import { writeGguf } from '../../src/model/gguf/writer.js';
import { tinyQwen3Config, tinyQwen3Metadata, tinyQwen3Tensors } from '../../src/model/qwen3/tiny.js';
import { tinyTokenizerJson } from '../model/tokenizer/helpers.js';
import type { HostileCase } from './case.js';

/** The template: a billion-step loop (2.4 GB and a signal before the text worker). */
const LOOP = '{% for i in range(1000000000) %}x{% endfor %}';
/** About 1 GB of output in 100 kB pieces (a hang before the text worker). */
const GIGABYTE = `{% set k = "${'x'.repeat(100_000)}" %}{% for i in range(10000) %}{{ k }}{% endfor %}`;

const tokenizerWith = (template: string) => (dir: string) => {
  mkdirSync(join(dir, 't'));
  writeFileSync(join(dir, 't', 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  writeFileSync(join(dir, 't', 'tokenizer_config.json'), JSON.stringify({ chat_template: template }));
};

/** A tiny Qwen3 GGUF carrying `template` as tokenizer.chat_template, and a chat file. */
const ggufWith = (template: string) => (dir: string) => {
  const c = tinyQwen3Config({ layers: 1 });
  const metadata = tinyQwen3Metadata(c);
  metadata.set('tokenizer.chat_template', gv.str(template));
  const tensors = tinyQwen3Tensors(c).map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: quantize(t.type, t.values) }));
  writeFileSync(join(dir, 'm.gguf'), writeGguf({ version: c.version, metadata, tensors }));
  writeFileSync(join(dir, 'chat.json'), JSON.stringify([{ role: 'user', content: 'hi' }]));
};

const says = (pattern: RegExp) => (r: { stdout: string; stderr: string }) => {
  if (!pattern.test(r.stdout + r.stderr)) throw new Error(`the output does not match ${pattern}`);
};

const CHAT_LINE = '[{"role":"user","content":"hi"}]\n';
// The worker fills its heap or its time bound first; a loaded machine takes longer to fill either.
const SLOW = 120_000;

export const cases: readonly HostileCase[] = [
  { name: 'tokenize --chat: a template looping a billion times', setup: tokenizerWith(LOOP), ownProcess: 'memory', cli: ['tokenize', '{dir}/t', '--chat', '--json'], stdin: CHAT_LINE, exit: 1, code: 'ResourceLimit', check: says(/"what":"template-(memory|ms)"/), timeoutMs: SLOW },
  { name: 'tokenize --chat: a template writing about 1 GB, then a good line still answered', setup: tokenizerWith(`{% if messages[0].content == 'big' %}${GIGABYTE}{% endif %}ok`), ownProcess: 'memory', cli: ['tokenize', '{dir}/t', '--chat', '--json'], stdin: `[{"role":"user","content":"big"}]\n${CHAT_LINE}`, exit: 1, code: 'ResourceLimit', check: (r) => { says(/"what":"template-bytes"/)(r); says(/"prompt":"ok"/)(r); }, timeoutMs: SLOW },
  { name: 'tokenize --chat (human output): a looping template is a typed error line', setup: tokenizerWith(LOOP), ownProcess: 'memory', cli: ['tokenize', '{dir}/t', '--chat'], stdin: CHAT_LINE, exit: 1, code: 'ResourceLimit', check: says(/line 1: error \[ResourceLimit\]: .*t \(chat template\): template-(memory|ms)/), timeoutMs: SLOW },
  { name: 'generate --chat: a GGUF whose template loops a billion times', setup: ggufWith(LOOP), ownProcess: 'memory', cli: ['generate', '{dir}/m.gguf', '--target', 'host', '--chat', '{dir}/chat.json', '--max-tokens', '1'], exit: 1, code: 'ResourceLimit', check: says(/m\.gguf \(chat template\): template-(memory|ms)/), timeoutMs: SLOW },
  { name: 'generate --chat --json: a GGUF whose template writes about 1 GB', setup: ggufWith(GIGABYTE), ownProcess: 'memory', cli: ['generate', '{dir}/m.gguf', '--target', 'host', '--chat', '{dir}/chat.json', '--json'], exit: 1, code: 'ResourceLimit', check: says(/"what":"template-bytes"/), timeoutMs: SLOW },
];
