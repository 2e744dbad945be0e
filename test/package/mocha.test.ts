/**
 * How the suite runs for the people who run it: `npx mocha FILE` runs that file only (the glob of the
 * whole suite is `npm test`'s, not .mocharc.json's), and a skip's reason reaches every reporter through
 * mocha's pending state (test/skip.ts), so `--reporter json` stays one JSON document.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';

const ROOT = resolve(import.meta.dirname, '../../..');
const MOCHA = join(ROOT, 'node_modules/mocha/bin/mocha.js');
const SKIP = pathToFileURL(join(ROOT, 'dist/test/skip.js')).href;

interface JsonReport { stats: { tests: number; pending: number; passes: number }; pending: { fullTitle: string }[] }

describe('running the suite', function () {
  this.timeout(60_000);
  let dir = '';
  before(() => { dir = mkdtempSync(join(tmpdir(), 'npuo-mocha-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // Mocha run from the repository (so .mocharc.json applies) on one file, with the json reporter.
  const mocha = (file: string): { status: number | null; stdout: string } => {
    const r = spawnSync(process.execPath, [MOCHA, '--reporter', 'json', file], { cwd: ROOT, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout };
  };

  it('runs only the file it is given, and carries skip reasons in the pending titles', () => {
    const file = join(dir, 'one.test.mjs');
    writeFileSync(file, [
      `import { skipWith } from '${SKIP}';`,
      `describe('suite', () => { before(function () { skipWith(this, 'no widget here'); }); it('a', () => {}); describe('inner', () => { it('b', () => {}); }); });`,
      `it('c', function () { skipWith(this, 'no gadget here'); });`,
      `it('d', () => {});`,
    ].join('\n'));
    const r = mocha(file);
    const report = JSON.parse(r.stdout) as JsonReport;
    expect(report.stats.tests).to.equal(4);
    expect(report.stats.passes).to.equal(1);
    expect(report.pending.map((p) => p.fullTitle).sort()).to.deep.equal([
      'c (skipped: no gadget here)', 'suite a (skipped: no widget here)', 'suite inner b (skipped: no widget here)',
    ]);
  });

  it('negative control: a reason printed to stdout breaks the json report', () => {
    const file = join(dir, 'printed.test.mjs');
    writeFileSync(file, `it('c', function () { console.log('      skipped: no gadget here'); this.skip(); });`);
    const r = mocha(file);
    expect(() => { JSON.parse(r.stdout); }).to.throw(SyntaxError);
  });
});
