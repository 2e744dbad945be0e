import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { loadTokenizer } from '../../src/model/tokenizer/load.js';
import { tinyModel } from '../serve/helpers.js';
import { cliHere, runHere } from './inProcess.js';

const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

/** Starts `serve ARGS`, waits for its URL on stdout, gives it to `use`, then SIGTERMs it; resolves with its exit and stderr. */
function serveOnce(args: string[], use: (url: string) => Promise<void>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let used = false;
    const ready = () => {
      // The model's own "model ID ready" line (the loading line says when /v1/health will be ready too).
      if (used || !/^model \S+ ready$/m.test(stderr) || !stdout.includes('\n')) return;
      used = true;
      use(stdout.split('\n')[0]!).then(() => p.kill('SIGTERM'), (e: unknown) => { p.kill('SIGKILL'); reject(e); });
    };
    p.stderr.on('data', (b: Buffer) => { stderr += b.toString(); ready(); });
    p.stdout.on('data', (b: Buffer) => { stdout += b.toString(); ready(); });
    p.on('close', (code) => resolve({ code, stderr, stdout }));
  });
}

/**
 * `serve ARGS` in this process (runHere, see inProcess.ts): once it printed its URL and its model's
 * ready line, gives the URL to `use`, then stops it as a SIGTERM would (its own SIGTERM listener, called
 * through process.emit: no signal is sent). For the tests of flags reaching the server; a signal, as the
 * subject, needs serveOnce's process. Fails as a child's hang or leftover would: a serve that does not
 * stop, calls process.exit, or leaves a socket or timer open.
 */
async function serveHere(args: string[], use: (url: string) => Promise<void>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  let used = false;
  let failed: { e: unknown } | undefined;
  const r = await runHere(['serve', '--port', '0', ...args], {
    onOutput: (stdout, stderr) => {
      if (used || !/^model \S+ ready$/m.test(stderr) || !stdout.includes('\n')) return;
      used = true;
      use(stdout.split('\n')[0]!).catch((e: unknown) => { failed = { e }; }).finally(() => process.emit('SIGTERM', 'SIGTERM'));
    },
  });
  if (failed !== undefined) throw failed.e;
  const shown = `--- stdout ---\n${r.stdout.slice(0, 2000)}\n--- stderr ---\n${r.stderr.slice(0, 2000)}`;
  if (r.hung) throw new Error(`serve hung\n${shown}`);
  if (r.exitCalled !== undefined) throw new Error(`serve called ${r.exitCalled}\n${shown}`);
  if (r.leftBehind.length > 0) throw new Error(`serve left open: ${r.leftBehind.join(', ')}\n${shown}`);
  expect(used, `serve never said its URL and its model ready\n${shown}`).to.equal(true);
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('cli: serve', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  before(() => { model = tinyModel(); });
  after(() => model.remove());

  // The greedy text of PREFILL_PROMPT served on host alone, asked of the first test's server (or of one of
  // its own when that test did not run): what the --prefill-target servers must give.
  const PREFILL_PROMPT = JSON.stringify({ model: 'tiny', prompt: 'abcdef', max_tokens: 5, temperature: 0, repetition_penalty: 1 });
  const greedy = async (url: string): Promise<string> => {
    const res = await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: PREFILL_PROMPT });
    return ((await res.json()) as { choices: { text: string }[] }).choices[0]!.text;
  };
  let hostAlone: string | undefined;

  it('serves MODEL, prints its URL and a curl line, and exits 0 on SIGTERM', async () => {
    let answer: unknown;
    const r = await serveOnce([model.path, '--ctx', '64'], async (url) => {
      const res = await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: 'ab', max_tokens: 3 }) });
      answer = await res.json();
      hostAlone = await greedy(url);
    });
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^http:\/\/127\.0\.0\.1:\d+\ncurl http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions /);
    expect((answer as { usage: { completion_tokens: number } }).usage.completion_tokens).to.equal(3);
    expect(r.stderr).to.include('SIGTERM');
  });

  it('--cache-ram MiB sets the prefix cache\'s budget (on /v1/status), --no-prefix-cache keeps none, a bad --cache-ram is a usage error', async () => {
    const statusOf = async (url: string) => ((await (await fetch(`${url}/v1/status`)).json()) as { prefixCache: { budget: number } | null }).prefixCache;
    let on: unknown;
    expect((await serveHere([model.path, '--ctx', '64', '--cache-ram', '3'], async (url) => { on = await statusOf(url); })).code).to.equal(0);
    expect(on).to.deep.include({ budget: 3 * 2 ** 20, lookups: 0 });
    let off: unknown = 'unread';
    expect((await serveHere([model.path, '--ctx', '64', '--no-prefix-cache'], async (url) => { off = await statusOf(url); })).code).to.equal(0);
    expect(off).to.equal(null);
    expect((await cliHere(['serve', model.path, '--port', '0', '--cache-ram', 'lots'])).status).to.equal(2);
  });

  it('a SIGTERM while the model is still loading stops the server cleanly: exit 0, no stack trace', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [BIN, 'serve', '--port', '0', model.path, '--ctx', '64'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let sent = false;
      p.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        // The URL is out and the model is loading: stop now.
        if (!sent && stderr.includes(' loading; ')) { sent = true; p.kill('SIGTERM'); }
      });
      p.stdout.resume();
      p.on('close', (code) => resolve({ code, stderr }));
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.include('SIGTERM');
    expect(r.stderr).to.not.match(/\n\s+at /);
  });

  it('--prefill-target xdna2,host and npu4,host prefill there and decode on host: the same greedy text as host alone', async () => {
    const texts: string[] = [];
    const ask = async (url: string) => { texts.push(await greedy(url)); };
    const a = await serveHere([model.path, '--ctx', '64', '--prefill-target', 'xdna2,host'], ask);
    const b = await serveHere([model.path, '--ctx', '64', '--prefill-target', 'npu4,host'], ask);
    if (hostAlone === undefined) expect((await serveHere([model.path, '--ctx', '64'], async (url) => { hostAlone = await greedy(url); })).code).to.equal(0);
    expect([a.code, b.code]).to.deep.equal([0, 0]);
    expect(texts).to.have.length(2);
    expect(hostAlone).to.be.a('string');
    expect(texts[0]).to.equal(hostAlone);
    expect(texts[1]).to.equal(hostAlone);
  });

  it('--cors ORIGIN... and --chat-template FILE reach the server; a template that does not parse exits 1 naming the file', async () => {
    const tpl = join(model.dir, 'chat.jinja');
    writeFileSync(tpl, '{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}[assistant] ');
    let prompt = 0;
    const r = await serveHere([model.path, '--ctx', '64', '--chat-template', tpl, '--cors', 'http://a.example', 'http://b.example'], async (url) => {
      const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://b.example' }, body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
      expect(res.headers.get('access-control-allow-origin')).to.equal('http://b.example');
      prompt = ((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
      const other = await fetch(`${url}/v1/models`, { headers: { origin: 'http://c.example' } });
      expect(other.headers.get('access-control-allow-origin')).to.equal(null);
    });
    expect(r.code, r.stderr).to.equal(0);
    // The server's prompt is the template's "[user] hi\n[assistant] ", token for token; the model's own
    // rendering (what a server without --chat-template uses, here without starting one) is another length.
    const tok = loadTokenizer(model.path);
    const mine = tok.encode('[user] hi\n[assistant] ').length;
    const chatml = tok.encode(tok.applyChatTemplate([{ role: 'user', content: 'hi' }])).length;
    expect(mine, 'the two renderings are told apart by their length').to.not.equal(chatml);
    expect(prompt, 'prompt tokens of the --chat-template rendering').to.equal(mine);
    const bad = join(model.dir, 'bad.jinja');
    writeFileSync(bad, '{% for m in messages %}');
    // Refused before anything loads or listens: in this process (see inProcess.ts), not a process of its own.
    const refused = await cliHere(['serve', '--port', '0', model.path, '--chat-template', bad]);
    expect(refused.status).to.equal(1);
    expect(refused.err).to.include(bad).and.include('TokenizerError');
  });

  it('--demo serves the demo model with Qwen3\'s tokenizer and says its weights are random', async () => {
    let text = '';
    // --threads reaches the host device through the server's engine (an engine-held model takes none itself).
    const r = await serveHere(['--demo', '--cache-dir', join(model.dir, 'cache'), '--ctx', '64', '--threads', '1'], async (url) => {
      const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'qwen3-demo', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 }) });
      const body = (await res.json()) as { usage: { prompt_tokens: number }; choices: { message: { content: string } }[] };
      // Qwen3's chat template around "Hello": a handful of tokens, not a byte per character.
      expect(body.usage.prompt_tokens).to.be.within(5, 12);
      text = body.choices[0]!.message.content;
    });
    expect(r.code).to.equal(0);
    expect(r.stderr).to.include('RANDOM weights');
    expect(text.length).to.be.greaterThan(0);
  });
});

describe('cli: addon', function () {
  this.timeout(60_000);
  const ADDON = fileURLToPath(new URL('../serve/fixtures/addon.js', import.meta.url));
  // In this process (cliHere): nothing here is about a signal, a memory bound or the process's exit.
  const run = async (args: string[]): Promise<{ code: number | null; stdout: string }> => {
    const r = await cliHere(['addon', ADDON, ...args]);
    return { code: r.status, stdout: r.out };
  };

  it('lists an add-on\'s routes and commands, runs a command with its arguments, and refuses an unknown one', async () => {
    expect((await run([])).stdout).to.equal('route qwen3 (optional)\nroute echo\ncommand echo-info: prints its arguments\n');
    expect(await run(['echo-info', 'a', 'b'])).to.deep.equal({ code: 0, stdout: 'echo-info a b\n' });
    expect((await run(['echo-info'])).code).to.equal(1);
    expect((await run(['nope'])).code).to.equal(2);
  });
});
