/**
 * The contract report in a real headless browser: the page of an xdna2 and an npu4 sweep renders one
 * plot per op, logs no error, loads nothing from the network, and a screenshot of it is written under
 * the test's temporary folder. Without a browser the tests are skipped, saying why (helpers.ts).
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { contractsCommand } from '../../src/cli/contracts.js';
import { closeBrowser, openBrowser, type BrowserPage } from './helpers.js';

describe('the contract report in a browser', function () {
  this.timeout(120_000);
  let dir: string;
  let b: BrowserPage | undefined;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'npu-report-browser-')); });
  afterEach(async () => { await b?.close(); b = undefined; });
  after(async () => {
    await closeBrowser();
    // Kept for a person to look at when NPU_OFFLOAD_KEEP_SCREENSHOTS is set.
    if (process.env['NPU_OFFLOAD_KEEP_SCREENSHOTS'] === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`      screenshots kept in ${dir}`);
  });

  for (const target of ['xdna2', 'npu4']) {
    it(`renders one plot per op of ${target} with no console errors`, async function () {
      b = await openBrowser(this, { offline: true });
      const file = join(dir, `${target}.html`);
      const out: string[] = [];
      expect(await contractsCommand({ target, bulk: 512, json: true, report: file }, { out: (l) => out.push(l), err: () => undefined })).to.equal(0);
      const ops = (JSON.parse(out[0]!) as { reports: { op: string }[] }).reports.map((r) => r.op);
      await b.page.goto(pathToFileURL(file).href);
      const drawn = await b.page.$$eval('section.op', (els) => els.map((s) => ({
        op: s.getAttribute('data-op'),
        plots: s.querySelectorAll('svg.plot').length,
        points: s.querySelectorAll('svg.plot circle').length,
        width: s.querySelector('svg.plot')?.getBoundingClientRect().width ?? 0,
      })));
      expect(drawn.map((d) => d.op)).to.deep.equal(ops);
      for (const d of drawn) {
        expect(d.plots, d.op ?? '').to.equal(1);
        expect(d.points, d.op ?? '').to.be.greaterThan(0);
        expect(d.width, d.op ?? '').to.be.greaterThan(200);
      }
      // The page's own script works: the filter hides the passing ops.
      await b.page.check('#only-failing');
      expect(await b.page.$$eval('section.op', (els) => els.filter((e) => (e as unknown as { offsetParent: unknown }).offsetParent !== null).length)).to.equal(0);
      await b.page.uncheck('#only-failing');
      const shot = join(dir, `${target}-report.png`);
      await b.page.screenshot({ path: shot, fullPage: true });
      expect(existsSync(shot) && statSync(shot).size > 10_000).to.equal(true);
      expect(b.errors).to.deep.equal([]);
    });
  }
});
