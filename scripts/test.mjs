#!/usr/bin/env node
/**
 * `npm test`'s runner (after the build): mocha over every compiled test file, two files at a time
 * (--parallel --jobs 2), the slowest files first.
 *
 * Mocha's parallel mode hands files to its workers in the order it is given them; by name, the slowest
 * files came late and a worker ran the last of them alone while the other sat idle. Starting the slowest
 * ones first (longest first, the rest by name) lets the many short files fill in around them, so both
 * workers finish together. SLOWEST is ordered by time measured per file alone; a file missing from it
 * runs among the rest, and a name in it that is no test file is reported and skipped (keep it current).
 *
 * Only files compiled from a test/**\/*.test.ts that still exists run: a test renamed or removed leaves
 * its old output in dist/ (tsc does not delete it), which must not run with the suite.
 *
 * Arguments are passed on to mocha (`npm test -- --grep TEXT`).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Test files (under test/, without .test.ts), slowest first: CPU seconds of each alone, measured one at a
 * time on a loaded 2-core machine (2026-12-03, after that day's second round of speed-ups), with the files that mostly
 * wait (a deadline, a browser, child processes) moved up by their wall time.
 */
const SLOWEST = [
  'hostile/hostile', // ~56 s of CPU (28 child cases: memory bounds, hangs, signals; the rest in-process)
  'cli/architectures', // ~22-27 (21 CLI calls over seven architectures)
  'farm/farm', // ~23 (redis-server and worker processes)
  'cli/serve', // ~17 (serve processes where a signal is the subject)
  'model/tokenizer/limits', // ~18 (a 2M-token vocabulary)
  'model/arch/llamacpp', // ~17 (seven architectures in four types, beside llama.cpp)
  'native/sweep', // ~15-17
  'browser/servePages', // ~15, more waiting on chromium and a missed deadline
  'package/consumer', // ~14 (npm pack and install)
  'model/qwen3/programs', // ~14
  'contracts/exhaustive', // ~13
  'model/qwen3/npu4', // ~13
  'browser/contractReport', // ~11
  'serve/text', // ~11
  'model/pack/architectures', // ~10.5
  'cli/generate', // ~10
  'model/arch/yarn', // ~10
  'serve/openai', // ~9
  'model/qwen3/batch', // ~9
  'jobs/engine', // ~8
  'jobs/close', // ~8
  'cli/tokenize', // ~8
  'serve/supervision', // ~6, more waiting on a missed deadline
  'farm/remoteCache', // ~7
  'contracts/report', // ~7
  'model/qwen3/samplerSelect', // ~7
  'cli/score', // ~6.5
  'jobs/embed', // ~6, engines in worker threads
  'jobs/abort', // ~5, more waiting on slow runs (50 ms a step)
];

const tests = readdirSync(join(ROOT, 'test'), { recursive: true })
  .map((f) => String(f).replaceAll('\\', '/'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => f.slice(0, -'.test.ts'.length))
  .sort();
// A name here whose file was renamed or removed only costs the order: said, and skipped.
for (const name of SLOWEST.filter((n) => !tests.includes(n))) process.stderr.write(`scripts/test.mjs: SLOWEST names test/${name}.test.ts, which does not exist (update the list)\n`);
const order = [...SLOWEST.filter((n) => tests.includes(n)), ...tests.filter((t) => !SLOWEST.includes(t))];
const files = order.map((t) => join('dist/test', `${t}.test.js`));
const missing = files.filter((f) => !existsSync(join(ROOT, f)));
if (missing.length > 0) throw new Error(`scripts/test.mjs: not built (run npm run build): ${missing.join(', ')}`);

const mocha = join(ROOT, 'node_modules/mocha/bin/mocha.js');
const child = spawn(process.execPath, [mocha, '--parallel', '--jobs', '2', ...process.argv.slice(2), ...files], { cwd: ROOT, stdio: 'inherit' });
child.on('exit', (code, signal) => { process.exitCode = code ?? (signal !== null ? 1 : 0); });
