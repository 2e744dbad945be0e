/**
 * The contract report (`contracts --report FILE.html`): for every target the command sweeps, one plot
 * per op with its verdict, the per-binade tally behind the plots, and a failing op drawn as failing.
 * The page in a real browser is test/browser/contractReport.test.ts.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTRACT_TARGETS, contractsCommand } from '../../src/cli/contracts.js';
import { BinadeTally, binadeIndex } from '../../src/numerics/binades.js';
import { ContractTally } from '../../src/devices/xdna2/contractTally.js';
import { reportOps } from '../../src/contracts/report.js';
import { reportHtml } from '../../src/contracts/reportHtml.js';
import { UsageError } from '../../src/errors/index.js';

describe('contracts --report', () => {
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'npu-report-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const target of CONTRACT_TARGETS) {
    it(`writes one plot per op of ${target}, each with its verdict and worst input`, async () => {
      const file = join(dir, `${target}.html`);
      const out: string[] = [];
      const code = await contractsCommand({ target, bulk: 512, json: true, report: file }, { out: (l) => out.push(l), err: () => undefined });
      expect(code).to.equal(0);
      // --json keeps stdout one document: the report's path is not printed.
      expect(out).to.have.length(1);
      const { reports } = JSON.parse(out[0]!) as { reports: { op: string; pass: boolean }[] };
      const html = readFileSync(file, 'utf8');
      const plots = [...html.matchAll(/<svg class="plot" data-op="([^"]+)"/g)].map((m) => m[1]);
      expect(plots).to.deep.equal(reports.map((r) => r.op));
      expect(html.match(/<span class="verdict">pass<\/span>/g)).to.have.length(reports.length);
      expect(html.match(/<p class="worst">worst input: /g)).to.have.length(reports.length);
      // Self-contained: nothing is loaded from anywhere.
      expect(html).not.to.match(/<link|<img|\ssrc=|https?:\/\//);
    });
  }

  it('says where the report went, and refuses a directory that is not there before sweeping', async () => {
    const out: string[] = [];
    const file = join(dir, 'one.html');
    expect(await contractsCommand({ target: 'xdna2', op: 'exp', bulk: 256, report: file }, { out: (l) => out.push(l), err: () => undefined })).to.equal(0);
    expect(out.at(-1)).to.equal(`report written to ${file}`);
    let err: unknown;
    await contractsCommand({ target: 'xdna2', report: join(dir, 'no', 'such', 'r.html') }, { out: () => undefined, err: () => undefined }).catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(UsageError);
    expect((err as Error).message).to.include(join(dir, 'no', 'such'));
  });

  it('refuses --report with --exhaustive', async () => {
    let err: unknown;
    await contractsCommand({ target: 'xdna2', op: 'exp', exhaustive: true, report: join(dir, 'x.html') }, { out: () => undefined, err: () => undefined }).catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(UsageError);
    expect((err as Error).message).to.include('--exhaustive');
  });
});

describe('the per-binade tally', () => {
  it('keeps the worst ratio per binade, in number-line order, and counts inputs outside the domain', () => {
    const t = new BinadeTally();
    t.add(3, true, 0.25, 1e-7);
    t.add(2.5, true, 0.5, 2e-7);
    t.add(-0.75, true, 2, 1e-6, true);
    t.add(1e30, false);
    const s = t.stats();
    expect(s.map((b) => b.range)).to.deep.equal(['(-2^0, -2^-1]', '[2^1, 2^2)', '[2^99, 2^100)']);
    expect(s[0]).to.include({ failures: 1, maxRatio: 2, maxError: 1e-6, inDomain: 1 });
    expect(s[1]).to.include({ elements: 2, maxRatio: 0.5, maxError: 2e-7 });
    expect(s[2]).to.include({ elements: 1, inDomain: 0, maxRatio: null });
    expect(binadeIndex(-0)).to.equal(256);
  });

  it('draws a failing op as failing, its worst input and its over-the-bound binade marked', () => {
    const t = new ContractTally('exp', 'rel 1e-5', { error: { kind: 'rel', rel: 1e-5 }, domain: { kind: 'any' } }, 'oracle-fp64');
    t.check(Math.exp(1), Math.exp(1), [1]);
    t.check(Math.exp(4) * 1.001, Math.exp(4), [4]);
    const r = t.report();
    expect(r.pass).to.equal(false);
    expect(r.binades.map((b) => b.range)).to.deep.equal(['[2^0, 2^1)', '[2^2, 2^3)']);
    const html = reportHtml({ target: 'xdna2', pass: false, generated: 'now', how: 'test', ops: reportOps([r]) });
    expect(html).to.include('<span class="verdict">FAIL</span> exp');
    expect(html).to.include('worst input: exp(4)');
    expect(html.match(/<circle class="point bad"/g)).to.have.length(1);
    expect(html.match(/<circle class="point"/g)).to.have.length(1);
  });
});
