/**
 * Hostile cases of the `files` part of issue 9: --force that would delete its own input (item 1),
 * terminal escapes quoted from files (2), output folders under /proc (4), FIFOs and devices given as
 * files and the file-size bound (10), output paths the system refuses (15), and the small ones of 16
 * (--steps 1e20, "not a undefined", key-file messages, EPIPE).
 */
import { expect } from 'chai';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { serializeManifest, MANIFEST_FORMAT } from '../../src/seal/manifest.js';
import { gv } from '../../src/model/gguf/types.js';
import { quantizedTensor, writeGguf } from '../../src/model/gguf/writer.js';
import { writeQ4nx } from '../../src/model/q4nx/writer.js';
import type { HostileCase } from './case.js';
import { ADD_PROGRAM, clearSet, fifo, keys, noControl, previousPack, put, tinyGguf, tokenizer } from './fixtures.js';

const ESC = '\u001b[31mred\u0007';
const INPUTS = { x: { dtype: 'f32', shape: [2], data: [1, 2] } };

/** A Q4NX container whose header is `text`, with no data. */
function q4nxWithHeader(text: string): Uint8Array {
  const json = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(8 + json.length);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(out, 8);
  return out;
}

/** Every named file still exists after the call. */
const kept = (...rels: string[]) => (r: { dir: string }): void => {
  for (const rel of rels) expect(existsSync(join(r.dir, rel)), `${rel} was deleted`).to.equal(true);
};

/** Runs the CLI in-process with an environment variable set (a case has no env of its own). */
const withEnv = (name: string, value: string, argv: readonly string[]): string => `
process.env[${JSON.stringify(name)}] = ${JSON.stringify(value)};
const { main } = await import(new URL('./cli/main.js', '{pkg}'));
process.exitCode = await main(${JSON.stringify(argv)});`;

const force: HostileCase[] = [
  {
    name: 'gguf pack --force into the folder that holds its GGUF and tokenizer deletes nothing (exit 2)',
    setup: (d) => { tinyGguf(d, 'out/models/t.gguf'); tokenizer(d, 'out/models'); put(d, 'out/notes.txt', 'mine'); },
    cli: ['gguf', 'pack', 'out/models/t.gguf', 'out', '--tokenizer', 'out/models', '--force'],
    exit: 2, code: 'UsageError',
    check: (r) => { kept('out/models/t.gguf', 'out/models/tokenizer.json', 'out/notes.txt')(r); expect(r.stderr).to.contain('holds the GGUF'); },
  },
  {
    name: 'gguf pack into a folder that holds the tokenizer directory is refused even without a GGUF in it',
    setup: (d) => { tinyGguf(d, 't.gguf'); tokenizer(d, 'out/tok'); },
    cli: ['gguf', 'pack', 't.gguf', 'out', '--tokenizer', 'out/tok', '--force'],
    exit: 2, code: 'UsageError',
    check: (r) => { kept('out/tok/tokenizer.json')(r); expect(r.stderr).to.contain('holds the tokenizer directory'); },
  },
  {
    name: 'gguf pack --force through a symlink to the GGUF\'s folder is refused',
    setup: (d) => { tinyGguf(d, 'models/t.gguf'); tokenizer(d, 'tok'); symlinkSync(join(d, 'models'), join(d, 'link')); },
    cli: ['gguf', 'pack', 'models/t.gguf', 'link', '--tokenizer', 'tok', '--force'],
    exit: 2, code: 'UsageError', check: kept('models/t.gguf'),
  },
  {
    name: 'gguf pack --force over a previous pack plus a file of the user names the file and removes nothing',
    setup: (d) => { previousPack(d, 'out'); put(d, 'out/notes.txt', 'mine'); },
    cli: ['gguf', 'pack', 't.gguf', 'out', '--tokenizer', 'tok', '--force'],
    exit: 2, code: 'UsageError',
    check: (r) => { kept('out/notes.txt', 'out/model.q4nx')(r); expect(r.stderr).to.match(/--force would remove out with "notes\.txt"/); },
  },
  {
    name: 'gguf pack --force over a folder with no model.q4nx (not a pack) is refused',
    setup: (d) => { tinyGguf(d, 't.gguf'); tokenizer(d, 'tok'); put(d, 'out/config.json', '{}'); },
    cli: ['gguf', 'pack', 't.gguf', 'out', '--tokenizer', 'tok', '--force'],
    exit: 2, code: 'UsageError', check: kept('out/config.json'),
  },
  {
    name: 'gguf pack --force replaces a previous pack',
    setup: (d) => previousPack(d, 'out'),
    cli: ['gguf', 'pack', 't.gguf', 'out', '--tokenizer', 'tok', '--force'],
    exit: 0, check: kept('out/model.q4nx', 'out/config.json', 'out/tokenizer.json', 't.gguf', 'tok/tokenizer.json'),
  },
];

const escapes: HostileCase[] = [
  {
    name: 'seal check: a manifest listing a name with terminal escapes prints them escaped',
    setup: (d) => { put(d, 'set/manifest.json', serializeManifest({ format: MANIFEST_FORMAT, files: [{ path: ESC, sha256: '0'.repeat(64), size: 1 }] })); },
    cli: ['seal', 'check', 'set'], exit: 1, code: 'SealError',
    check: (r) => { noControl(r); expect(r.stderr).to.contain('\\u001b[31mred\\u0007'); },
  },
  {
    name: 'seal check: a manifest with an unexpected key holding escapes prints it escaped',
    setup: (d) => { put(d, 'set/manifest.json', `{"format":"${MANIFEST_FORMAT}","files":[],"\\u001b]0;pwned\\u0007":1}`); },
    cli: ['seal', 'check', 'set'], exit: 1, code: 'SealError', check: noControl,
  },
  {
    name: 'validate: names with escapes are quoted escaped in the refusal',
    setup: (d) => { put(d, 'p.json', { ...ADD_PROGRAM, name: ESC, eqns: [{ op: 'add', in: ['x', `q${ESC}`], out: 'y' }] }); },
    cli: ['validate', 'p.json'], exit: 1, code: 'InvalidProgram', check: noControl,
  },
  {
    name: 'validate: a program name with escapes and a C1 CSI is printed escaped',
    setup: (d) => { put(d, 'p.json', { ...ADD_PROGRAM, name: `${ESC}\u009b2J` }); },
    cli: ['validate', 'p.json'], exit: 0, check: (r) => { noControl(r); expect(r.stdout).to.contain('\\u009b2J'); },
  },
  {
    name: 'gguf info: metadata keys, strings and tensor names with escapes are printed escaped',
    setup: (d) => {
      const metadata = new Map([[`k${ESC}`, gv.str(`v${ESC}\u009b`)], ['list', gv.strings([ESC])]]);
      put(d, 'e.gguf', writeGguf({ metadata, tensors: [quantizedTensor(`t${ESC}`, 'F32', [4], [1, 2, 3, 4])] }));
    },
    cli: ['gguf', 'info', 'e.gguf'], exit: 0, check: noControl,
  },
  {
    name: 'gguf info --json: still one JSON document, with C1 characters escaped',
    setup: (d) => { put(d, 'e.gguf', writeGguf({ metadata: new Map([['k', gv.str(`${ESC}\u009b`)]]), tensors: [] })); },
    cli: ['gguf', 'info', 'e.gguf', '--json'], exit: 0,
    check: (r) => { noControl(r); expect((JSON.parse(r.stdout) as { metadata: { k: { value: string } } }).metadata.k.value).to.equal(`${ESC}\u009b`); },
  },
  {
    name: 'q4nx check: tensor names with escapes are printed escaped',
    setup: (d) => { put(d, 'm/model.q4nx', writeQ4nx([{ name: `t${ESC}`, dtype: 'F32', shape: [1], data: new Uint8Array(4) }])); },
    cli: ['q4nx', 'check', 'm'], exit: 0, check: noControl,
  },
  {
    name: 'run --inputs: a JSON syntax error near control characters is reported escaped',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); put(d, 'in.json', `{"x": ${ESC}}`); },
    cli: ['run', 'p.json', '--target', 'cpu', '--inputs', 'in.json'], exit: 1, code: 'InvalidInput', check: noControl,
  },
  {
    name: 'gguf check-config: a config that is not JSON is reported escaped',
    setup: (d) => { tinyGguf(d, 't.gguf'); put(d, 'config.json', `${ESC}{"a": 1}`); },
    cli: ['gguf', 'check-config', 't.gguf', 'config.json'], exit: 1, code: 'InvalidInput', check: noControl,
  },
  {
    name: 'q4nx check: a header that is not JSON is reported escaped',
    setup: (d) => { put(d, 'm/model.q4nx', q4nxWithHeader(`{"a":${ESC}}`)); },
    cli: ['q4nx', 'check', 'm'], exit: 1, code: 'Q4nxError', check: noControl,
  },
  {
    name: 'seal write: a layout.json that is not JSON is reported escaped',
    setup: (d) => { keys(d); clearSet(d, 'set'); put(d, 'set/layout.json', `${ESC}{`); },
    cli: ['seal', 'write', 'set', '--key', 'release.key', '--kernel-key', 'kernel.key'], exit: 1, code: 'SealError', check: noControl,
  },
];

const proc: HostileCase[] = [
  {
    name: 'cache ls --cache-dir under /proc fails typed instead of spinning',
    // CacheError today; the cache part (item 12) makes an unopenable cache CacheUnavailable.
    ownProcess: 'hang', cli: ['cache', 'ls', '--cache-dir', '/proc/1/x', '--json'], exit: 1,
    check: (r) => { expect(r.stdout).to.match(/"code":"Cache(Error|Unavailable)"/); expect(r.stdout).to.contain('cannot create /proc/1/x'); },
  },
  {
    name: 'seal keygen --out under /proc fails typed naming the folder',
    cli: ['seal', 'keygen', '--out', '/proc/1/x/y'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.contain('cannot create /proc/1/x'),
  },
  {
    name: 'gguf pack into a folder under /proc fails typed naming the folder',
    setup: (d) => { tinyGguf(d, 't.gguf'); tokenizer(d, 'tok'); },
    cli: ['gguf', 'pack', 't.gguf', '/proc/1/x/y', '--tokenizer', 'tok'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.contain('/proc/1/x'),
  },
  {
    name: 'gguf pack --cache with the cache under /proc fails typed',
    setup: (d) => { tinyGguf(d, 't.gguf'); },
    script: withEnv('NPU_OFFLOAD_CACHE_DIR', '/proc/1/x', ['gguf', 'pack', '{dir}/t.gguf', '--cache']),
    exit: 2, code: 'UsageError',
  },
  {
    // The engine opens the cache in its cache actor; how the actor reports it is the cache part's (item 12).
    name: 'run --cache-dir under /proc ends, refused, instead of spinning',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); put(d, 'in.json', INPUTS); },
    ownProcess: 'hang', cli: ['run', 'p.json', '--target', 'cpu', '--inputs', 'in.json', '--cache-dir', '/proc/1/x'], exit: 1,
  },
];

const special: HostileCase[] = [
  { name: 'validate /dev/zero is refused: not a regular file', ownProcess: 'memory', cli: ['validate', '/dev/zero'], exit: 2, code: 'UsageError', check: (r) => expect(r.stderr).to.contain('character device') },
  {
    name: 'run --inputs /dev/zero is refused: not a regular file',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); },
    ownProcess: 'memory', cli: ['run', 'p.json', '--target', 'cpu', '--inputs', '/dev/zero'], exit: 2, code: 'UsageError',
  },
  { name: 'validate on a FIFO is refused without opening it', setup: (d) => { fifo(d, 'p.json'); }, ownProcess: 'hang', cli: ['validate', 'p.json'], exit: 2, code: 'UsageError' },
  {
    name: 'gguf info on a FIFO is refused without opening it',
    setup: (d) => { fifo(d, 'm.gguf'); }, ownProcess: 'hang', cli: ['gguf', 'info', 'm.gguf'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.contain('FIFO'),
  },
  { name: 'q4nx check on a model.q4nx that is a FIFO is refused', setup: (d) => { fifo(d, 'm/model.q4nx'); }, ownProcess: 'hang', cli: ['q4nx', 'check', 'm'], exit: 1, code: 'Q4nxError' },
  {
    name: 'gguf check-config with a FIFO for config.json is refused',
    setup: (d) => { tinyGguf(d, 't.gguf'); fifo(d, 'config.json'); },
    ownProcess: 'hang', cli: ['gguf', 'check-config', 't.gguf', 'config.json'], exit: 2, code: 'UsageError',
  },
  {
    name: 'gguf pack --tokenizer with a tokenizer.json that is a FIFO is refused',
    setup: (d) => { tinyGguf(d, 't.gguf'); fifo(d, 'tok/tokenizer.json'); },
    ownProcess: 'hang', cli: ['gguf', 'pack', 't.gguf', 'out', '--tokenizer', 'tok'], exit: 2, code: 'UsageError',
  },
  {
    name: 'seal write --key on a FIFO is refused',
    setup: (d) => { keys(d); clearSet(d, 'set'); fifo(d, 'fifo.key'); },
    ownProcess: 'hang', cli: ['seal', 'write', 'set', '--key', 'fifo.key', '--kernel-key', 'kernel.key'], exit: 2, code: 'UsageError',
  },
  { name: 'seal verify --pub /dev/zero is refused', setup: (d) => { clearSet(d, 'set'); }, ownProcess: 'memory', cli: ['seal', 'verify', 'set', '--pub', '/dev/zero'], exit: 2, code: 'UsageError' },
  {
    name: 'a program past NPU_OFFLOAD_MAX_FILE_BYTES is ResourceLimit file-bytes, before it is read',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); },
    env: { NPU_OFFLOAD_MAX_FILE_BYTES: '100' }, cli: ['validate', '{dir}/p.json', '--json'],
    exit: 1, code: 'ResourceLimit', check: (r) => expect(r.stdout).to.contain('"what":"file-bytes"'),
  },
  {
    name: 'a NPU_OFFLOAD_MAX_FILE_BYTES that is not a number is InvalidOptions naming it',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); },
    env: { NPU_OFFLOAD_MAX_FILE_BYTES: 'lots' }, cli: ['validate', '{dir}/p.json'],
    exit: 1, code: 'InvalidOptions', check: (r) => expect(r.stderr).to.contain('NPU_OFFLOAD_MAX_FILE_BYTES'),
  },
];

const outputs: HostileCase[] = [
  {
    name: 'seal keygen --out FILE/sub (FILE a file) is typed, naming FILE',
    setup: (d) => { put(d, 'FILE', 'x'); },
    cli: ['seal', 'keygen', '--out', 'FILE/sub'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.match(/FILE exists and is not a directory/),
  },
  {
    name: 'seal keygen --out into /sys is typed, naming the path',
    cli: ['seal', 'keygen', '--out', '/sys/kernel/npuo/'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.contain('/sys/kernel/npuo'),
  },
  {
    name: 'seal write --out under /sys is typed, naming the path',
    setup: (d) => { keys(d); clearSet(d, 'set'); },
    cli: ['seal', 'write', 'set', '--key', 'release.key', '--kernel-key', 'kernel.key', '--out', '/sys/kernel/npuo'],
    exit: 2, code: 'UsageError', check: (r) => expect(r.stderr).to.contain('/sys/kernel/npuo'),
  },
  {
    name: 'gguf pack into /sys/kernel/x is typed, naming the path',
    setup: (d) => { tinyGguf(d, 't.gguf'); tokenizer(d, 'tok'); },
    cli: ['gguf', 'pack', 't.gguf', '/sys/kernel/npuo', '--tokenizer', 'tok'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.contain('/sys/kernel/npuo'),
  },
];

const small: HostileCase[] = [
  {
    name: 'run --steps 1e20 is a usage error (exit 2)',
    setup: (d) => { put(d, 'p.json', ADD_PROGRAM); },
    cli: ['run', 'p.json', '--target', 'cpu', '--steps', '1e20', '--json'], exit: 2, code: 'UsageError',
  },
  {
    name: 'a missing key is named as missing, not "a undefined"',
    setup: (d) => { put(d, 'p.json', { ...ADD_PROGRAM, args: [{ name: 'x', dtype: 'f32', shape: [2] }] }); },
    cli: ['validate', 'p.json'], exit: 1, code: 'InvalidProgram',
    check: (r) => { expect(r.stderr).to.contain('/args/0/role'); expect(r.stderr).to.not.contain('undefined'); },
  },
  {
    name: 'a bad kernel key file is named as a key file, not as a sealed set',
    setup: (d) => { keys(d); clearSet(d, 'set'); put(d, 'bad.key', 'not hex\n'); },
    cli: ['seal', 'write', 'set', '--key', 'release.key', '--kernel-key', 'bad.key'], exit: 1, code: 'SealError',
    check: (r) => { expect(r.stderr).to.match(/key file bad\.key: not a usable key/); expect(r.stderr).to.not.contain('sealed set'); },
  },
  {
    name: 'seal verify --pub with a private key is named as a key file',
    setup: (d) => { keys(d); clearSet(d, 'set'); },
    cli: ['seal', 'verify', 'set', '--pub', 'release.key'], exit: 1, code: 'SealError',
    check: (r) => expect(r.stderr).to.match(/^error \[SealError\]: key file release\.key: /),
  },
  {
    // `gguf info M.gguf | head -1`: the reader leaves after the first line; the CLI must stop quietly.
    name: 'gguf info into a pipe closed early exits quietly (EPIPE)',
    setup: (d) => {
      const metadata = new Map(Array.from({ length: 20000 }, (_, i) => [`key.${i}`, gv.str('x'.repeat(60))] as const));
      put(d, 'big.gguf', writeGguf({ metadata: new Map(metadata), tensors: [] }));
    },
    script: `
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const bin = fileURLToPath(new URL('./cli/bin.js', '{pkg}'));
const child = spawn(process.execPath, [bin, 'gguf', 'info', '{dir}/big.gguf'], { stdio: ['ignore', 'pipe', 'inherit'] });
child.stdout.once('data', () => child.stdout.destroy());
child.on('close', (code, signal) => { process.exitCode = signal === null ? code : 99; });`,
    exit: 0,
  },
];

export const cases: readonly HostileCase[] = [...force, ...escapes, ...proc, ...special, ...outputs, ...small];
