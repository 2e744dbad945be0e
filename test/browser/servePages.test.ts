/**
 * The server's pages in a real headless browser: the chat page streams an answer from the demo model,
 * its stop button ends a long answer (the server's generation returns early) and the next message is
 * answered; the status page shows the host device poisoned after an injected hang and ready again, with
 * one restart, after it. A screenshot of each page is written under the test's temporary folder.
 * Without a browser the tests are skipped, saying why (helpers.ts).
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import { demoModel } from '../../src/serve/demo.js';
import type { ServedModel } from '../../src/serve/model.js';
import { createServer, type Server } from '../../src/serve/server.js';
import { untilDevicesSettle } from '../../src/serve/status.js';
import { coldLoadAndRequestMs, tinyModel } from '../serve/helpers.js';
import { closeBrowser, openBrowser, type BrowserPage } from './helpers.js';

async function shoot(b: BrowserPage, file: string): Promise<void> {
  await b.page.screenshot({ path: file, fullPage: true });
  expect(existsSync(file) && statSync(file).size > 5_000, file).to.equal(true);
}

async function until(f: () => boolean): Promise<void> {
  while (!f()) await new Promise((r) => setTimeout(r, 10));
}

describe('the server\'s pages in a browser', function () {
  this.timeout(120_000);
  let dir: string;
  let b: BrowserPage | undefined;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'npu-pages-browser-')); });
  afterEach(async () => { await b?.close(); b = undefined; });
  after(async () => {
    await closeBrowser();
    // Kept for a person to look at when NPU_OFFLOAD_KEEP_SCREENSHOTS is set.
    if (process.env['NPU_OFFLOAD_KEEP_SCREENSHOTS'] === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`      screenshots kept in ${dir}`);
  });

  describe('the chat page over the demo model', () => {
    let server: Server;
    let url: string;
    // While `hold` is set, every token after the 2nd waits for it, so an answer is still running when stop is clicked.
    let hold: Promise<void> | undefined;
    const generations: { made: number; max: number; returnedEarly: boolean }[] = [];
    before(async function () {
      const demo = demoModel(join(dir, 'cache'));
      server = createServer({
        modelId: 'qwen3-demo', apiKey: 'sesame',
        open: async (): Promise<ServedModel> => {
          const m = await loadModel(demo.path, { target: 'host', tokenizer: demo.tokenizer, ctx: 512, cacheDir: join(dir, 'cache') });
          return {
            async *generate(r) {
              const g = { made: 0, max: r.maxTokens ?? 0, returnedEarly: true };
              generations.push(g);
              const it = m.generate(r);
              for (;;) {
                const n = await it.next();
                if (n.done === true) { g.returnedEarly = false; return n.value; }
                if (g.made >= 2 && hold !== undefined) await hold;
                g.made++;
                yield n.value;
              }
            },
            close: () => m.close(),
          };
        },
      });
      url = await server.listen(0, '127.0.0.1');
      await server.loaded;
    });
    after(async () => { await server?.close(); });

    async function chatPage(ctx: Mocha.Context): Promise<BrowserPage> {
      const p = await openBrowser(ctx, { offline: false });
      // Nothing but this server: a page that reached elsewhere would fail offline.
      await p.page.route((u) => !u.href.startsWith(url), async (route) => { p.errors.push(`network request to ${route.request().url()}`); await route.abort(); });
      await p.page.goto(`${url}/`);
      await p.page.fill('#api-key', 'sesame');
      await p.page.dispatchEvent('#api-key', 'change');
      await p.page.waitForSelector('#model-state[data-state=ready]');
      expect(await p.page.textContent('#model-id')).to.equal('qwen3-demo');
      return p;
    }

    it('sends a message and shows the streamed answer with time to first token and tokens per second', async function () {
      b = await chatPage(this);
      await b.page.fill('#max-tokens', '8');
      await b.page.fill('#prompt', 'Hello there');
      await b.page.click('#send');
      const answer = b.page.locator('.msg.assistant').first();
      await b.page.waitForSelector('.msg.assistant[data-state=done]');
      expect(await b.page.textContent('.msg.user')).to.equal('Hello there');
      expect((await answer.locator('.text').textContent())!.length).to.be.greaterThan(0);
      const tokens = Number(await answer.getAttribute('data-tokens'));
      expect(tokens).to.be.within(1, 8);
      expect(generations.at(-1)!.made).to.equal(tokens);
      expect(Number(await answer.getAttribute('data-ttft-ms'))).to.be.at.least(0);
      const meta = (await answer.locator('.meta').textContent())!;
      expect(meta).to.match(/first token \d+ ms/);
      if (tokens > 1) expect(meta).to.match(/[\d.]+ tok\/s/);
      await shoot(b, join(dir, 'chat.png'));
      expect(b.errors).to.deep.equal([]);
    });

    it('stop ends a long answer, the server\'s generation returns early, and the next message is answered', async function () {
      b = await chatPage(this);
      let release!: () => void;
      hold = new Promise<void>((r) => { release = r; });
      try {
        await b.page.fill('#max-tokens', '400');
        await b.page.fill('#prompt', 'Tell me a long story');
        await b.page.click('#send');
        await b.page.waitForFunction("(document.querySelector('.msg.assistant .text')?.textContent ?? '').length > 0");
        expect(await b.page.isEnabled('#stop')).to.equal(true);
        await b.page.click('#stop');
        await b.page.waitForSelector('.msg.assistant[data-state=stopped]');
      } finally { hold = undefined; release(); }
      // The server frees the model at the next token: the generation returned before its 400 tokens.
      await until(() => server.inFlight === 0);
      const long = generations.at(-1)!;
      expect(long.max).to.equal(400);
      expect(long.returnedEarly).to.equal(true);
      expect(long.made).to.be.below(400);
      expect(await b.page.isEnabled('#send')).to.equal(true);
      await b.page.fill('#max-tokens', '5');
      await b.page.fill('#prompt', 'And now?');
      await b.page.click('#send');
      await b.page.waitForSelector('.msg.assistant >> nth=1');
      await b.page.waitForFunction("document.querySelectorAll('.msg.assistant')[1]?.getAttribute('data-state') === 'done'");
      const second = b.page.locator('.msg.assistant').nth(1);
      expect(Number(await second.getAttribute('data-tokens'))).to.be.within(1, 5);
      expect(await b.page.locator('.msg.assistant').first().locator('.meta').textContent()).to.match(/stopped/);
      await shoot(b, join(dir, 'chat-stopped.png'));
      expect(b.errors).to.deep.equal([]);
    });
  });

  describe('the status page', () => {
    it('shows the host device poisoned after an injected hang, then ready with one restart', async function () {
      b = await openBrowser(this);
      const model = tinyModel();
      // The 8th replay on the host device blocks its thread: the second request's prefill misses its deadline.
      const counter = new Int32Array(new SharedArrayBuffer(4));
      // A step's deadline also bounds the load's device calls (a cold device worker's start among them),
      // so it is tied to a cold load and one request timed here first, on an engine without faults.
      const deadlineMs = Math.max(2000, 4 * await coldLoadAndRequestMs(model.path));
      const engine: Engine = createEngine({ cacheDir: model.dir, devices: { host: { plan: { counter, hang: [8] } } } });
      const server = createServer({
        modelId: 'tiny', engine,
        open: async () => { await untilDevicesSettle(engine); return loadModel(model.path, { target: 'host', ctx: 64, engine, deadlineMs }); },
      });
      try {
        const url = await server.listen(0, '127.0.0.1');
        await server.loaded;
        const req = (): Promise<Response> => fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0 }) });
        expect((await req()).status).to.equal(200);
        await b.page.goto(`${url}/status?every=200`);
        const host = '#devices tr[data-kind=host]';
        await b.page.waitForSelector(`${host}[data-state=ready]`);
        expect(await b.page.textContent(`${host} td.restarts`)).to.equal('0');
        await shoot(b, join(dir, 'status-ready.png'));

        // The page asks the moment the device is poisoned (the replacement is ready soon after).
        const page = b.page;
        const off = engine.device('host').on('poisoned', () => { off(); void page.evaluate("document.getElementById('refresh').click()"); });
        const failed = await req();
        expect(failed.status).to.equal(500);
        expect(((await failed.json()) as { error: { code: string } }).error.code).to.equal('DeadlineExceeded');
        await page.waitForSelector(`${host}[data-state=poisoned]`, { timeout: 20_000 });
        await shoot(b, join(dir, 'status-poisoned.png'));

        await page.waitForSelector(`${host}[data-state=ready]`);
        expect(await page.textContent(`${host} td.restarts`)).to.equal('1');
        await server.holder.load();
        expect((await req()).status).to.equal(200);
        await page.click('#refresh');
        await page.waitForFunction("[...document.querySelectorAll('#failures td.code')].some((td) => td.textContent === 'DeadlineExceeded')");
        expect(await page.textContent('#by-code')).to.match(/DeadlineExceeded \u00d71/);
        expect(await page.textContent('#model-state')).to.equal('ready');
        await shoot(b, join(dir, 'status.png'));
        expect(b.errors).to.deep.equal([]);
      } finally { await server.close(); await engine.close(); model.remove(); }
    });
  });
});
