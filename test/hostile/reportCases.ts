/** Hostile calls of `contracts --report`: paths it cannot write are refused before any sweep, typed. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { HostileCase } from './case.js';

export const cases: readonly HostileCase[] = [
  {
    name: 'contracts --report into a directory that does not exist',
    cli: ['contracts', '--target', 'xdna2', '--report', '{dir}/no/such/r.html'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.include('is not a directory'),
  },
  {
    name: 'contracts --report naming a directory',
    setup: (dir) => mkdirSync(join(dir, 'out.html')),
    cli: ['contracts', '--target', 'npu4', '--report', '{dir}/out.html', '--json'], exit: 2, code: 'UsageError',
  },
  {
    name: 'contracts --report under a path whose parent is a file',
    setup: (dir) => writeFileSync(join(dir, 'file'), 'x'),
    cli: ['contracts', '--target', 'xdna2', '--report', '{dir}/file/r.html'], exit: 2, code: 'UsageError',
  },
  {
    name: 'contracts --report with --exhaustive',
    cli: ['contracts', '--target', 'xdna2', '--op', 'exp', '--exhaustive', '--report', '{dir}/r.html'], exit: 2, code: 'UsageError',
    check: (r) => expect(r.stderr).to.include('--exhaustive'),
  },
  {
    name: 'contracts --report with no file',
    cli: ['contracts', '--target', 'xdna2', '--report'], exit: 2,
  },
];
