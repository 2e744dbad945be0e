/** Human-readable lines for `gguf verify`: one table row per tensor, then the problems and a verdict. */
import type { VerifyReport } from './verify.js';

function fmt(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === 0) return '0';
  return Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5 ? x.toExponential(digits - 1) : x.toPrecision(digits);
}

/** The verify table and verdict, one line per entry. */
export function verifyLines(r: VerifyReport): string[] {
  const rows = [['NAME', 'SOURCE', 'KIND', 'OVER', 'MAX ERR', 'ERR/BOUND', 'COSINE', 'REL RMS', ''],
    ...r.tensors.map((t) => [
      t.name, t.sourceType, t.method, String(t.overBound), fmt(t.maxError, 3), fmt(t.worstRatio, 3),
      t.cosine.toFixed(6), fmt(t.relRms, 3), t.pass ? 'ok' : 'FAIL',
    ])];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const lines = rows.map((row) => row.map((cell, c) => (c >= 3 && c < 8 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd());
  for (const p of r.problems) lines.push(`problem: ${p}`);
  const failed = r.tensors.filter((t) => !t.pass).length;
  const requant = r.tensors.filter((t) => t.method === 'requant');
  const worst = requant.length === 0 ? '' : `; requantized: worst cosine ${Math.min(...requant.map((t) => t.cosine)).toFixed(6)} (threshold ${r.minCosine})`;
  lines.push(r.ok
    ? `ok: all ${r.tensors.length} tensors within their bounds${worst}`
    : `failed: ${failed} of ${r.tensors.length} tensors failed, ${r.problems.length} other problem${r.problems.length === 1 ? '' : 's'}${worst}`);
  return lines;
}
