/**
 * The in-process CLI runner (inProcess.ts) stands in for a child process in the hostile and CLI tests:
 * it must still fail a command that would have kept its process alive, ended it, or hung, and must show
 * what a terminal shows (escaped lines, the exit code, stdin read). Each failure is planted through an
 * add-on command, the one place a test can put arbitrary code behind the CLI.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../jobs/helpers.js';
import { QWEN3_TOKENIZER } from '../model/tokenizer/helpers.js';
import { cliHere, importHere, runHere } from './inProcess.js';

describe('cli: the in-process runner keeps what a child process would show', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let n = 0;
  before(() => { tmp = tempDir('npuo-inproc-'); });
  after(() => tmp.remove());

  /** An add-on whose command `c` runs `body` (an async function body) and returns its exit code. */
  function addon(body: string): string {
    const file = join(tmp.dir, `a${n++}.mjs`);
    writeFileSync(file, `export function register(r) { r.addCommand({ name: "c", description: "", run: async () => { ${body} } }); }`);
    return file;
  }

  it('a command that does its work and closes it: exit code and escaped output, nothing left behind', async () => {
    const r = await runHere(['addon', addon('const t = setTimeout(() => {}, 60000); clearTimeout(t); return 0;'), 'c']);
    expect(r).to.deep.include({ status: 0, hung: false, leftBehind: [] });
    expect(r.exitCalled).to.equal(undefined);
    const bad = await runHere(['validate', join(tmp.dir, 'no\u001b[31mfile.json')]);
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.contain('no\\u001b[31mfile.json').and.not.contain('\u001b');
  });

  it('a command that leaves a timer or a server open fails, naming it (a child would not have exited)', async () => {
    const timer = await runHere(['addon', addon('globalThis.__t = setTimeout(() => {}, 60000); return 0;'), 'c'], { boundMs: 500 });
    expect(timer.status).to.equal(0);
    expect(timer.leftBehind).to.deep.equal(['Timeout']);
    // Counted against the call that opened it, not the next one.
    expect((await cliHere(['addon', addon('return 0;'), 'c'])).status).to.equal(0);
    await cliHere(['addon', addon('clearTimeout(globalThis.__t); return 0;'), 'c']);
    let e: unknown;
    const server = addon('const { createServer } = await import("node:net"); globalThis.__s = createServer().listen(0, "127.0.0.1"); return 0;');
    try { await cliHere(['addon', server, 'c'], { boundMs: 500 }); } catch (x) { e = x; }
    expect(String(e)).to.match(/left open after the command was done.*TCPServerWrap/);
    await cliHere(['addon', addon('await new Promise((go) => globalThis.__s.close(go)); return 0;'), 'c']);
  });

  it('a command that calls process.exit fails instead of ending the test run', async () => {
    const r = await runHere(['addon', addon('process.exit(0);'), 'c']);
    expect(r.exitCalled).to.equal('process.exit(0)');
    let e: unknown;
    try { await cliHere(['addon', addon('process.exit(1);'), 'c']); } catch (x) { e = x; }
    expect(String(e)).to.contain('called process.exit(1)');
  });

  it('a command that never settles is hung after its bound', async () => {
    const r = await runHere(['addon', addon('await new Promise(() => {});'), 'c'], { boundMs: 300 });
    expect(r).to.deep.include({ hung: true, status: null });
  });

  it('stdin, the environment and the working directory are the call\'s, and restored after', async () => {
    const cwd = process.cwd();
    const r = await cliHere(['tokenize', QWEN3_TOKENIZER, '--json'], { stdin: '"Hello world"\n' });
    expect(r).to.deep.equal({ status: 0, out: '{"ids":[9707,1879]}\n', err: '' });
    const check = addon(`return process.cwd() === ${JSON.stringify(tmp.dir)} && process.env.NPU_OFFLOAD_CACHE_DIR === 'here' ? 0 : 1;`);
    expect((await cliHere(['addon', check, 'c'], { cwd: tmp.dir, env: { NPU_OFFLOAD_CACHE_DIR: 'here' } })).status).to.equal(0);
    expect((await cliHere(['addon', check, 'c'])).status).to.equal(1);
    expect(process.cwd()).to.equal(cwd);
    expect(process.env['NPU_OFFLOAD_CACHE_DIR']).to.not.equal('here');
  });

  it('a script imported here: its exit code, console, streams and warnings; an exit, a leak or a throw shows as a child\'s would', async () => {
    const ok = await importHere(`console.log('a', 1); process.stdout.write('b\\n'); console.error('c'); process.stderr.write('d\\n');
process.emitWarning(Object.assign(new Error('w'), { name: 'ListenerError' })); process.exitCode = 4;`);
    expect(ok).to.deep.include({ status: 4, hung: false, leftBehind: [], stdout: 'a 1\nb\n' });
    expect(ok.stderr).to.match(/^c\nd\n\(node:\d+\) ListenerError: w\n$/);
    expect(process.exitCode).to.equal(undefined);
    expect((await importHere('process.exit(2);')).exitCalled).to.equal('process.exit(2)');
    const timer = await importHere('globalThis.__st = setTimeout(() => {}, 60000);', { boundMs: 300 });
    expect(timer.leftBehind).to.deep.equal(['Timeout']);
    clearTimeout((globalThis as { __st?: NodeJS.Timeout }).__st);
    const thrown = await importHere('throw new TypeError("boom");');
    expect(thrown.status).to.equal(1);
    expect(thrown.stderr).to.match(/^Uncaught TypeError: boom\n\s+at /);
    expect((await importHere('await new Promise(() => {});', { boundMs: 300 })).hung).to.equal(true);
  });
});
