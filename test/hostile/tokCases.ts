/**
 * Hostile inputs of the tokenizer, reachable from `npu-offload tokenize` and loadTokenizer: text that
 * is not Unicode, ids past the vocabulary, GGUFs and tokenizer.json files that are not tokenizers,
 * chat templates that fail. A bad line is refused on its own line (exit 1); a bad source refuses once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gv, type GgufValue } from '../../src/model/gguf/types.js';
import { writeGguf } from '../../src/model/gguf/writer.js';
import { QWEN3_DIR, tinyTokenizerJson, tinyTokenizerMetadata } from '../model/tokenizer/helpers.js';
import type { HostileCase } from './case.js';

function fail(what: string): never {
  throw new Error(what);
}

const tok = (over: Record<string, unknown> = {}) => (dir: string) => writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(over)));

function withConfig(config: Record<string, unknown>) {
  return (dir: string) => {
    mkdirSync(join(dir, 'm'));
    writeFileSync(join(dir, 'm', 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    writeFileSync(join(dir, 'm', 'tokenizer_config.json'), JSON.stringify(config));
  };
}

function gguf(meta: Map<string, GgufValue>) {
  return (dir: string) => writeFileSync(join(dir, 'm.gguf'), writeGguf({ metadata: new Map([['general.architecture', gv.str('qwen3')], ...meta]) }));
}

function tinyGgufWith(key: string, v: GgufValue) {
  const m = tinyTokenizerMetadata();
  m.set(key, v);
  return gguf(m);
}

/** Every stdout line is an error of `code`, and there are `n` of them. */
const errorLines = (n: number, code: string) => (r: { stdout: string }) => {
  const docs = r.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { error?: { code: string } });
  if (docs.length !== n || docs.some((d) => d.error?.code !== code)) fail(`expected ${n} ${code} lines, got ${r.stdout}`);
};

const mentions = (s: string) => (r: { stdout: string; stderr: string }) => {
  if (!(r.stdout + r.stderr).includes(s)) fail(`the output does not mention ${s}`);
};

const T = '{dir}/tokenizer.json';
const cli = (...a: string[]) => ['tokenize', ...a];

export const cases: readonly HostileCase[] = [
  { name: 'tokenize: a lone surrogate in a line', setup: tok(), cli: cli(T, '--json'), stdin: '"ok \\ud800"\n', exit: 1, code: 'InvalidInput', check: mentions('lone surrogate U+D800') },
  { name: 'tokenize: a lone low surrogate inside a chat message', setup: tok(), cli: cli(T, '--chat', '--json'), stdin: '[{"role":"user","content":"\\udfff"}]\n', exit: 1, code: 'InvalidInput', check: mentions('line 1/0/content') },
  {
    name: 'tokenize: bytes that are not UTF-8 on stdin, between good lines',
    setup: tok(),
    cli: cli(T, '--json'),
    stdin: Buffer.concat([Buffer.from('"a"\n'), Buffer.from([0x22, 0xc3, 0x28, 0x22, 0x0a, 0xff, 0xfe, 0x0a]), Buffer.from('"b"\n')]),
    exit: 1, code: 'InvalidInput',
    check: (r) => { if (r.stdout.split('\n').filter((l) => l.includes('not valid UTF-8')).length !== 2 || !r.stdout.includes('{"ids":[98]}')) fail(r.stdout); },
  },
  { name: 'tokenize --decode: an id past the vocabulary is named', setup: tok(), cli: cli(T, '--decode', '--json'), stdin: '[104, 99999999]\n', exit: 1, code: 'InvalidInput', check: mentions('token id 99999999 is outside the vocabulary') },
  { name: 'tokenize --decode: negative, fractional, huge, string and null ids, one error line each', setup: tok(), cli: cli(T, '--decode', '--json'), stdin: '[-1]\n[0.5]\n[1e300]\n["1"]\n[null]\n', exit: 1, check: errorLines(5, 'InvalidInput') },
  { name: 'tokenize --decode: a line that is an object, not ids', setup: tok(), cli: cli(T, '--decode', '--json'), stdin: '{"ids": [1]}\n', exit: 1, code: 'InvalidInput' },
  { name: 'tokenize --decode: an id past the real Qwen3 vocabulary', cli: cli(QWEN3_DIR, '--decode', '--json'), stdin: '[151669]\n', exit: 1, code: 'InvalidInput', check: mentions('(0 to 151668)') },
  { name: 'tokenize: a line nested 100000 arrays deep', setup: tok(), cli: cli(T, '--json'), stdin: `${'['.repeat(100_000)}${']'.repeat(100_000)}\n`, exit: 1, code: 'InvalidInput' },
  { name: 'tokenize: a megabyte of spaces and newlines on one line is tokenized, not stalled on', ownProcess: 'hang', cli: cli(QWEN3_DIR, '--json'), stdin: `"${' '.repeat(1 << 19)}${'\\n'.repeat(1 << 19)}"\n`, exit: 0, timeoutMs: 40_000, check: (r) => { if (!r.stdout.startsWith('{"ids":[')) fail(r.stdout.slice(0, 200)); } },
  { name: 'tokenize: a GGUF with no tokenizer metadata', setup: gguf(new Map()), cli: cli('{dir}/m.gguf', '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError', check: mentions('the GGUF carries no tokenizer') },
  { name: 'tokenize: a GGUF whose tokens are numbers', setup: tinyGgufWith('tokenizer.ggml.tokens', gv.numbers('u32', [1, 2, 3])), cli: cli('{dir}/m.gguf'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a GGUF of a SentencePiece tokenizer', setup: tinyGgufWith('tokenizer.ggml.model', gv.str('llama')), cli: cli('{dir}/m.gguf', '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a GGUF with a token type llama.cpp does not have', setup: (d) => { const m = tinyTokenizerMetadata(); const n = (m.get('tokenizer.ggml.tokens') as { value: readonly string[] }).value.length; m.set('tokenizer.ggml.token_type', gv.numbers('i32', Array.from({ length: n }, (_, i) => (i === 5 ? 99 : 1)))); gguf(m)(d); }, cli: cli('{dir}/m.gguf', '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError', check: mentions('type 99') },
  { name: 'tokenize: a GGUF cut short', setup: (d) => writeFileSync(join(d, 'm.gguf'), Buffer.from('GGUF\x03\x00\x00\x00\xff\xff', 'latin1')), cli: cli('{dir}/m.gguf', '--json'), stdin: '"x"\n', exit: 1, code: 'GgufError' },
  { name: 'tokenize: a tokenizer.json that is another JSON file', setup: (d) => writeFileSync(join(d, 'tokenizer.json'), '{"architectures": ["Qwen3ForCausalLM"]}'), cli: cli(T), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a tokenizer.json that is not JSON', setup: (d) => writeFileSync(join(d, 'tokenizer.json'), '{"model": {"vocab": '), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a tokenizer.json that is not UTF-8', setup: (d) => writeFileSync(join(d, 'tokenizer.json'), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a tokenizer.json of a WordPiece model', setup: tok({ model: { type: 'WordPiece', vocab: { a: 0 } } }), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a tokenizer.json whose merge makes no token', setup: tok({ model: { ...(tinyTokenizerJson() as { model: object }).model, merges: ['h e', 'q z'] } }), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError', check: mentions('/model/merges/1') },
  { name: 'tokenize: a tokenizer.json whose vocabulary ids are not numbers', setup: tok({ model: { ...(tinyTokenizerJson() as { model: object }).model, vocab: { a: 'zero' } } }), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a tokenizer.json whose Split pattern is possessive', setup: tok({ pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: '\\w++' }, behavior: 'Isolated' }, { type: 'ByteLevel', add_prefix_space: false, use_regex: false }] } }), cli: cli(T, '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError', check: mentions('possessive') },
  { name: 'tokenize: a directory without tokenizer.json', setup: (d) => mkdirSync(join(d, 'empty')), cli: cli('{dir}/empty', '--json'), stdin: '"x"\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize: a source that does not exist', cli: cli('{dir}/nothing-here', '--json'), stdin: '"x"\n', exit: 2, code: 'UsageError' },
  { name: 'tokenize: --decode and --chat together', setup: tok(), cli: cli(T, '--decode', '--chat'), stdin: '', exit: 2, code: 'UsageError' },
  { name: 'tokenize --chat: messages without content, and not an array', setup: tok(), cli: cli(T, '--chat', '--json'), stdin: '[{"role":"user"}]\n"hi"\n', exit: 1, check: errorLines(2, 'InvalidInput') },
  { name: 'tokenize --chat: a chat template that raises', setup: withConfig({ chat_template: "{{ raise_exception('only user turns') }}" }), cli: cli('{dir}/m', '--chat', '--json'), stdin: '[{"role":"user","content":"hi"}]\n', exit: 1, code: 'TokenizerError', check: mentions('only user turns') },
  { name: 'tokenize --chat: a chat template that does not parse', setup: withConfig({ chat_template: '{% for %}' }), cli: cli('{dir}/m', '--chat', '--json'), stdin: '[{"role":"user","content":"hi"}]\n', exit: 1, code: 'TokenizerError' },
  { name: 'tokenize --chat: a chat template of the wrong type', setup: withConfig({ chat_template: 42 }), cli: cli('{dir}/m', '--chat', '--json'), stdin: '[{"role":"user","content":"hi"}]\n', exit: 1, code: 'TokenizerError' },
  {
    name: 'loadTokenizer (API): a GGUF with no tokenizer is a TokenizerError',
    setup: gguf(new Map()),
    here: true,
    script: `import { loadTokenizer } from '{pkg}';
try { loadTokenizer('{dir}/m.gguf'); process.exitCode = 0; } catch (e) { console.error('[' + e.code + '] ' + e.message); process.exitCode = e.code === 'TokenizerError' ? 1 : 3; }`,
    exit: 1, code: 'TokenizerError',
  },
];
