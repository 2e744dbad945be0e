/**
 * Hostile add-ons (src/serve/addons.ts) and embedding hosts that never start: an add-on whose import
 * or register never settles, or whose hooks throw or answer out of contract, is an AddonError naming it
 * and the hook (exit 1), never exit 0 and never an internal error (exit 3); a worker whose module
 * throws at import fails every pending call of connectEngine with ActorCrashed, and the host lives.
 */
import { tinyTokenizerJson } from '../model/tokenizer/helpers.js';
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

const REPORT = 'const report = (e) => { process.stderr.write(`[${e.code}] ${e.message}\\n`); process.exitCode = 1; };';

/**
 * A script that runs the CLI with `env` added (the hostile runner sets no environment of its own),
 * passing its output and exit code through; with `untilReady`, a SIGTERM once serve says the model is ready.
 */
const cliWith = (env: Record<string, string>, args: readonly string[], untilReady = false) => `import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const bin = fileURLToPath(new URL('./cli/bin.js', '{pkg}'));
const p = spawn(process.execPath, [bin, ...${JSON.stringify(args)}], { env: { ...process.env, ...${JSON.stringify(env)} }, stdio: ['ignore', 'inherit', 'pipe'] });
let err = '';
let sent = false;
p.stderr.on('data', (b) => { process.stderr.write(b); err += b; if (${String(untilReady)} && !sent && /model \\S+ ready/.test(err)) { sent = true; p.kill('SIGTERM'); } });
p.on('close', (code, signal) => { process.exit(code ?? (signal === null ? 98 : 99)); });`;

const addon = (body: string) => (d: string) => { put(d, 'a.mjs', body); };
/**
 * A model directory the `x` route of an add-on is asked for; with a tokenizer (a small byte-level one:
 * Qwen3's takes most of a second to load), so a route that opens serves it.
 */
const xModel = (d: string) => {
  put(d, 'm/config.json', { model_type: 'x' });
  put(d, 'm/tokenizer.json', tinyTokenizerJson());
};
const route = (hooks: string) => `export function register(r) { r.addRoute({ modelType: 'x', ${hooks} }); }`;
const session = 'async open() { return { async *generate() { yield 1; } ${CLOSE} }; }';

const named = (hook: string) => (r: { stderr: string }) => {
  if (!r.stderr.includes(`a.mjs failed in ${hook}:`)) throw new Error(`the error does not name the add-on and the hook ${hook}: ${r.stderr}`);
};

export const cases: readonly HostileCase[] = [
  {
    name: 'lib2: addon whose import never settles is AddonError at the default 10 s bound, not exit 0',
    setup: addon('await new Promise(() => {});\nexport function register() {}'),
    ownProcess: 'hang', cli: ['addon', '{dir}/a.mjs'], exit: 1, code: 'AddonError', timeoutMs: 60_000, check: named('load'),
  },
  {
    name: 'lib2: serve --addon whose import never settles is AddonError within NPU_OFFLOAD_ADDON_LOAD_MS',
    setup: (d) => { addon('await new Promise(() => {});\nexport function register() {}')(d); xModel(d); },
    env: { NPU_OFFLOAD_ADDON_LOAD_MS: '500' }, cli: ['serve', '{dir}/m', '--port', '0', '--addon', '{dir}/a.mjs'],
    exit: 1, code: 'AddonError', check: named('load'),
  },
  {
    name: 'lib2: an add-on whose register never settles is AddonError naming register',
    setup: addon('export function register() { return new Promise(() => {}); }'),
    env: { NPU_OFFLOAD_ADDON_LOAD_MS: '500' }, cli: ['addon', '{dir}/a.mjs'],
    exit: 1, code: 'AddonError', check: named('register'),
  },
  {
    name: 'lib2: NPU_OFFLOAD_ADDON_LOAD_MS that is not a whole number of ms is InvalidOptions naming it',
    setup: addon('export function register() {}'),
    env: { NPU_OFFLOAD_ADDON_LOAD_MS: '1e400' }, cli: ['addon', '{dir}/a.mjs'],
    exit: 1, code: 'InvalidOptions', check: (r) => { if (!r.stderr.includes('NPU_OFFLOAD_ADDON_LOAD_MS')) throw new Error(r.stderr); },
  },
  {
    name: 'lib2: an add-on whose register throws is AddonError naming register',
    setup: addon('export function register() { throw new TypeError("no registry for me"); }'),
    cli: ['addon', '{dir}/a.mjs'], exit: 1, code: 'AddonError', check: named('register'),
  },
  {
    name: 'lib2: an add-on command that throws is AddonError naming the command',
    setup: addon('export function register(r) { r.addCommand({ name: "boom", description: "", run: async () => { throw new Error("kaput"); } }); }'),
    cli: ['addon', '{dir}/a.mjs', 'boom'], exit: 1, code: 'AddonError', check: named('command'),
  },
  {
    name: 'lib2: an add-on command that returns a non-number is AddonError, not a stack trace',
    setup: addon('export function register(r) { r.addCommand({ name: "s", description: "", run: async () => "0" }); }'),
    cli: ['addon', '{dir}/a.mjs', 's'], exit: 1, code: 'AddonError', check: named('command'),
  },
  {
    name: 'lib2: an add-on command without a run function is AddonError at register',
    setup: addon('export function register(r) { r.addCommand({ name: "s" }); }'),
    cli: ['addon', '{dir}/a.mjs', 's'], exit: 1, code: 'AddonError', check: named('register'),
  },
  {
    name: 'lib2: serve --addon whose route\'s canServe throws is AddonError naming canServe',
    setup: (d) => { addon(route('canServe() { throw new Error("no NPU"); }, async open() {}'))(d); xModel(d); },
    cli: ['serve', '{dir}/m', '--port', '0', '--addon', '{dir}/a.mjs'], exit: 1, code: 'AddonError', check: named('canServe'),
  },
  {
    name: 'lib2: serve --addon whose route\'s canServe answers neither true nor { unavailable } is AddonError',
    setup: (d) => { addon(route('canServe() { return "yes"; }, async open() {}'))(d); xModel(d); },
    cli: ['serve', '{dir}/m', '--port', '0', '--addon', '{dir}/a.mjs'], exit: 1, code: 'AddonError', check: named('canServe'),
  },
  {
    name: 'lib2: serve --addon whose route\'s open throws is AddonError naming open, and no server is left',
    setup: (d) => { addon(route('canServe: () => true, async open() { throw new RangeError("no device"); }'))(d); xModel(d); },
    cli: ['serve', '{dir}/m', '--port', '0', '--addon', '{dir}/a.mjs'], exit: 1, code: 'AddonError', check: named('open'),
  },
  {
    name: 'lib2: serve --addon whose session\'s close throws at shutdown is AddonError naming close',
    setup: (d) => { addon(route(`canServe: () => true, ${session.replace('${CLOSE}', ', async close() { throw new Error("stuck"); }')}`))(d); xModel(d); },
    script: cliWith({}, ['serve', '{dir}/m', '--port', '0', '--addon', '{dir}/a.mjs'], true),
    exit: 1, code: 'AddonError', timeoutMs: 60_000, check: named('close'),
  },
  {
    name: 'lib2: connectEngine over a worker whose module throws at import: the pending job fails ActorCrashed, the host lives',
    here: true,
    setup: (d) => { put(d, 'engine.worker.mjs', 'throw new Error("this worker cannot load");\n'); },
    script: `import { Worker } from 'node:worker_threads';
import { connectEngine, tensor } from '{pkg}';
${REPORT}
const engine = connectEngine(new Worker('{dir}/engine.worker.mjs', { execArgv: [] }));
const program = { format: 'program@1', name: 'p', args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [2] }],
  eqns: [{ op: 'exp', in: ['x'], out: 'y' }], results: ['y'], state: {} };
const a = engine.submit({ program, target: 'cpu', inputs: { x: tensor('f32', [2], [0, 1]) } }).result;
const b = engine.status();
const [ra, rb] = await Promise.allSettled([a, b]);
if (ra.status !== 'rejected' || rb.status !== 'rejected' || ra.reason.code !== 'ActorCrashed' || rb.reason.code !== 'ActorCrashed') throw new Error('not both ActorCrashed');
if (!ra.reason.message.includes('this worker cannot load')) throw new Error('the crash does not say why: ' + ra.reason.message);
report(ra.reason);
await engine.close();`,
    exit: 1, code: 'ActorCrashed',
  },
];
