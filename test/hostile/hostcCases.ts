/**
 * Hostile inputs against `contracts --target host`: an op host does not verify, a bulk past its bound,
 * a seed that is no integer; each a usage error (exit 2) before anything runs. And one real sweep of
 * one op, whose JSON says it passed.
 */
import { expect } from 'chai';
import type { HostileCase } from './case.js';

const h = ['contracts', '--target', 'host'];

export const cases: readonly HostileCase[] = [
  { name: 'contracts --target host --op all_reduce (refused by host)', cli: [...h, '--op', 'all_reduce'], exit: 2, code: 'UsageError' },
  { name: 'contracts --target host --op nosuchop', cli: [...h, '--op', 'nosuchop', '--json'], exit: 2, code: 'UsageError' },
  { name: 'contracts --target host --bulk past the bound', cli: [...h, '--bulk', '100000000'], exit: 2, code: 'UsageError' },
  { name: 'contracts --target host --seed 1.5', cli: [...h, '--seed', '1.5'], exit: 2 },
  {
    name: 'contracts --target host --op gather --json: one JSON document, every quantized dtype and every axis passing',
    cli: [...h, '--op', 'gather', '--bulk', '100', '--json'], exit: 0,
    check: ({ stdout }) => {
      const doc = JSON.parse(stdout) as { pass: boolean; reports: { op: string; programs: string[]; failures: number }[] };
      expect(doc.pass).to.equal(true);
      // Every quantized weight type the host reads, and a gather along every axis of a typed table.
      expect(doc.reports[0]!.programs).to.include.members(['gather q4_0', 'gather q4_1', 'gather q8_0', 'gather q4_k', 'gather q6_k', 'gather q4nx_q41', 'gather f16 axis 1', 'gather i32 axis 2']);
      expect(doc.reports[0]!.failures).to.equal(0);
    },
  },
];
