/**
 * A real headless browser for the page tests: Debian's chromium driven by playwright-core, which
 * downloads nothing (it is pointed at the system binary). Where no browser can be run, `openBrowser`
 * prints why and skips the calling test, so a machine without one never passes these tests silently.
 * `.ci/run` installs chromium where it is missing. NPU_OFFLOAD_CHROMIUM names another binary.
 * One browser is launched per test file and each test gets a page in a context of its own (no cookies,
 * storage or routes shared): a launch cost more than a page. A file calls `closeBrowser` in its `after`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { skipWith } from '../skip.js';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

let found: { path: string } | { missing: string } | undefined;
let launched: { path: string; browser: Promise<Browser> } | undefined;

/** The browser binary, or why there is none (asked once per process). */
function browserPath(): { path: string } | { missing: string } {
  return (found ??= whichBrowser());
}

function whichBrowser(): { path: string } | { missing: string } {
  const given = process.env['NPU_OFFLOAD_CHROMIUM'];
  const path = given ?? CANDIDATES.find((p) => existsSync(p));
  if (path === undefined) return { missing: `no chromium at ${CANDIDATES.join(', ')} (install Debian's chromium package, as .ci/run does, or set NPU_OFFLOAD_CHROMIUM)` };
  const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return { missing: `${path} cannot be run (${r.error.message})` };
  if (r.status !== 0) return { missing: `${path} --version exited ${String(r.status)}: ${r.stderr.trim().slice(0, 200)}` };
  return { path };
}

/** A page of a launched browser, and everything the page logged as an error. */
export interface BrowserPage {
  readonly browser: Browser;
  readonly page: Page;
  /** Console errors and uncaught exceptions, in order. */
  readonly errors: string[];
  /** Closes this page's context (the browser stays for the file's next test). */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Refuse (and record as an error) every request but file:, data: and about: URLs: a self-contained page makes none. */
  readonly offline?: boolean;
}

/** The file's browser, launched at its first use; a launch that failed is tried again next time. */
function theBrowser(path: string): Promise<Browser> {
  if (launched === undefined || launched.path !== path) {
    // --no-sandbox: CI containers run as root, where chromium's sandbox refuses to start.
    const browser = chromium.launch({ executablePath: path, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    launched = { path, browser };
    browser.catch(() => { if (launched?.browser === browser) launched = undefined; });
  }
  return launched.browser;
}

/** Closes the file's browser, if one was launched (a test file's `after`). */
export async function closeBrowser(): Promise<void> {
  const l = launched;
  launched = undefined;
  if (l !== undefined) await (await l.browser.catch(() => undefined))?.close();
}

/** A page of the system chromium headless, in a context of its own; skips `ctx`'s test (saying why) where there is none. */
export async function openBrowser(ctx: Mocha.Context, opts: OpenOptions = {}): Promise<BrowserPage> {
  const found = browserPath();
  if ('missing' in found) {
    skipWith(ctx, found.missing);
  }
  const path = (found).path;
  let browser: Browser;
  try {
    browser = await theBrowser(path);
  } catch (e) {
    skipWith(ctx, `${path} does not launch headless (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
  }
  const context = await browser!.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m: ConsoleMessage) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e: Error) => errors.push(e.message));
  // A page that reaches for the network is a defect of a self-contained page: record and refuse it.
  if (opts.offline === true) await page.route(/^(?!file:|data:|about:)/, async (route) => {
    errors.push(`network request to ${route.request().url()}`);
    await route.abort();
  });
  return { browser: browser!, page, errors, close: () => context.close() };
}
