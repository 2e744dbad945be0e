#!/usr/bin/env node
/**
 * Planted slips: does a realistic one-line bug fail a test? (issue 27, item 11.) A developer tool, not
 * part of `npm test`. Run after `npm run build`:
 *
 *   node scripts/mutants.mjs                 every mutant in scripts/mutants.list.mjs
 *   node scripts/mutants.mjs --only a,b      those ids
 *   node scripts/mutants.mjs --kind sampler  those of one kind
 *   node scripts/mutants.mjs --list          the list, without running
 *   node scripts/mutants.mjs --baseline      also run each mutant's tests unmutated first (they must pass)
 *   node scripts/mutants.mjs --before        only each mutant's `tests` (the suite before its `added` slip tests)
 *   node scripts/mutants.mjs --added         only each mutant's `added` tests (quick: what the slip tests catch alone)
 *   node scripts/mutants.mjs --json FILE     the results as JSON too
 *
 * Each mutant is one line of compiled output (a file under dist/, a search string found exactly once,
 * its replacement). The checkout is never touched: dist/ is copied to a scratch folder (the rest of the
 * checkout linked beside it), the mutation is written into the copy, only the mutant's test files run
 * there (mocha --bail), and the copy's file is put back in a `finally` before the next mutant; the scratch
 * folder is removed at exit. A mutant is caught when its tests fail (or time out), escaped when they pass,
 * stale when its search string is not found exactly once (the code moved on: update the list).
 * Native (C++) mutants are not planted: they need the addon rebuilt.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTANTS } from './mutants.list.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function args(argv) {
  const o = { only: undefined, kind: undefined, list: false, baseline: false, before: false, added: false, json: undefined, timeout: 300 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') o.only = argv[++i].split(',');
    else if (a === '--kind') o.kind = argv[++i];
    else if (a === '--list') o.list = true;
    else if (a === '--baseline') o.baseline = true;
    else if (a === '--before') o.before = true;
    else if (a === '--added') o.added = true;
    else if (a === '--json') o.json = argv[++i];
    else if (a === '--timeout') o.timeout = Number(argv[++i]);
    else throw new Error(`scripts/mutants.mjs: unknown argument ${a}`);
  }
  return o;
}

/** The list checked: unique ids, each a known kind's, with tests. */
function checkList(list, before) {
  const ids = new Set();
  for (const m of list) {
    for (const k of ['id', 'kind', 'file', 'find', 'replace']) if (typeof m[k] !== 'string') throw new Error(`mutant ${m.id ?? '?'}: ${k} is not a string`);
    if (ids.has(m.id)) throw new Error(`mutant ${m.id}: id twice`);
    ids.add(m.id);
    if (!Array.isArray(m.tests) || m.tests.length === 0) throw new Error(`mutant ${m.id}: no tests`);
    for (const t of [...m.tests, ...(before ? [] : m.added ?? [])]) {
      if (!existsSync(join(ROOT, 'dist', t))) throw new Error(`mutant ${m.id}: no dist/${t} (build first, or update the list)`);
    }
    if (m.find === m.replace) throw new Error(`mutant ${m.id}: replacement equals the search string`);
  }
}

function count(text, s) {
  let n = 0;
  for (let i = text.indexOf(s); i >= 0; i = text.indexOf(s, i + 1)) n++;
  return n;
}

/** A scratch checkout: dist/ copied, everything else in the root linked. */
function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'npuo-mutants-'));
  for (const name of readdirSync(ROOT)) {
    if (name === 'dist' || name === '.git') continue;
    symlinkSync(join(ROOT, name), join(dir, name));
  }
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  return dir;
}

/** Runs mocha on `tests` in `cwd`: 'pass', 'fail' or 'timeout', and the output's tail. */
function run(cwd, tests, grep, timeoutS) {
  const mocha = join(ROOT, 'node_modules/mocha/bin/mocha.js');
  const files = tests.map((t) => join('dist', t.replace(/\.ts$/, '.js')));
  const argv = [mocha, '--bail', '--reporter', 'dot', ...(grep !== undefined ? ['--grep', grep] : []), ...files];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutS * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const passing = /(\d+) passing/.exec(out);
      resolve({ result: timedOut ? 'timeout' : code === 0 && passing !== null && !/\b0 passing/.test(out) ? 'pass' : 'fail', tail: out.trim().split('\n').slice(-6).join('\n') });
    });
  });
}

async function main() {
  const o = args(process.argv.slice(2));
  checkList(MUTANTS, o.before);
  let list = MUTANTS;
  if (o.only !== undefined) list = list.filter((m) => o.only.includes(m.id));
  if (o.kind !== undefined) list = list.filter((m) => m.kind === o.kind);
  if (o.list) {
    for (const m of list) console.log(`${m.id.padEnd(28)} ${m.kind.padEnd(14)} ${m.file}: ${m.why ?? ''}`);
    return;
  }
  if (!existsSync(join(ROOT, 'dist/src'))) throw new Error('scripts/mutants.mjs: not built (run npm run build)');
  const dir = scratch();
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => { cleanup(); process.exit(130); });
  const results = [];
  const baselines = new Map();
  try {
    for (const m of list) {
      const path = join(dir, 'dist', m.file);
      const original = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
      const n = original === undefined ? 0 : count(original, m.find);
      if (n !== 1) {
        results.push({ id: m.id, kind: m.kind, result: 'stale', note: `search string found ${n} times in dist/${m.file}` });
        console.log(`${m.id.padEnd(28)} stale (found ${n} times)`);
        continue;
      }
      const tests = o.before ? m.tests : o.added ? m.added ?? [] : [...(m.added ?? []), ...m.tests];
      if (o.baseline) {
        const key = JSON.stringify([tests, m.grep]);
        if (!baselines.has(key)) baselines.set(key, await run(dir, tests, m.grep, o.timeout));
        const b = baselines.get(key);
        if (b.result !== 'pass') {
          results.push({ id: m.id, kind: m.kind, result: 'baseline-fails', note: b.tail });
          console.log(`${m.id.padEnd(28)} baseline fails:\n${b.tail}`);
          continue;
        }
      }
      if (tests.length === 0) {
        results.push({ id: m.id, kind: m.kind, result: 'no-tests' });
        console.log(`${m.id.padEnd(28)} no tests to run`);
        continue;
      }
      const t0 = Date.now();
      let r;
      try {
        writeFileSync(path, original.replace(m.find, () => m.replace));
        r = await run(dir, tests, m.grep, o.timeout);
      } finally {
        writeFileSync(path, original);
      }
      const result = r.result === 'pass' ? 'escaped' : r.result === 'timeout' ? 'caught (timeout)' : 'caught';
      const s = ((Date.now() - t0) / 1000).toFixed(0);
      results.push({ id: m.id, kind: m.kind, result, seconds: Number(s), note: r.result === 'pass' ? '' : r.tail });
      console.log(`${m.id.padEnd(28)} ${m.kind.padEnd(14)} ${result.padEnd(16)} ${s.padStart(4)} s`);
    }
  } finally {
    cleanup();
  }
  const judged = results.filter((r) => r.result.startsWith('caught') || r.result === 'escaped');
  const caught = judged.filter((r) => r.result.startsWith('caught')).length;
  console.log(`\n${caught} of ${judged.length} caught (${judged.length === 0 ? 0 : ((100 * caught) / judged.length).toFixed(1)}%)` +
    `; ${results.length - judged.length} not judged (stale or baseline failing)`);
  for (const r of results.filter((x) => x.result === 'escaped')) console.log(`  escaped: ${r.id} (${r.kind})`);
  if (o.json !== undefined) writeFileSync(o.json, JSON.stringify(results, null, 2));
  process.exitCode = judged.length === results.length && caught === judged.length ? 0 : 1;
}

await main();
