/**
 * Hostile inputs against `contracts --exhaustive` (issue 16): the flags that make no sense together, an
 * op the sweep does not cover, fixed-value counts and thread counts past their bounds. Each is a usage
 * error (exit 2) before anything is swept; a whole NPU4 sweep (65536 inputs) is quick enough to run.
 */
import { expect } from 'chai';
import type { HostileCase } from './case.js';

const x = ['contracts', '--target', 'xdna2', '--exhaustive'];

export const cases: readonly HostileCase[] = [
  { name: 'contracts --exhaustive without --op', cli: x, exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --op reduce_sum (not elementwise)', cli: [...x, '--op', 'reduce_sum', '--json'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --op nosuchop', cli: [...x, '--op', 'nosuchop'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive with --bulk', cli: [...x, '--op', 'exp', '--bulk', '5'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --fixed on a unary op', cli: [...x, '--op', 'exp', '--fixed', '3'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --fixed past its bound', cli: [...x, '--op', 'add', '--fixed', '1000000'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --fixed 0', cli: [...x, '--op', 'add', '--fixed', '0'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --operand c', cli: [...x, '--op', 'add', '--operand', 'c'], exit: 2, code: 'UsageError' },
  { name: 'contracts --exhaustive --workers past the bound', cli: [...x, '--op', 'neg', '--workers', '100000'], exit: 2, code: 'UsageError' },
  { name: 'contracts --fixed without --exhaustive', cli: ['contracts', '--target', 'xdna2', '--op', 'add', '--fixed', '3'], exit: 2, code: 'UsageError' },
  {
    name: 'contracts --target npu4 --exhaustive --op sqrt --json: every FP16 input, one JSON document',
    cli: ['contracts', '--target', 'npu4', '--exhaustive', '--op', 'sqrt', '--json'], exit: 0,
    check: ({ stdout }) => {
      const doc = JSON.parse(stdout) as { pass: boolean; report: { elements: number; failures: number } };
      expect(doc.pass).to.equal(true);
      expect(doc.report.elements).to.equal(65536);
      expect(doc.report.failures).to.equal(0);
    },
  },
];
