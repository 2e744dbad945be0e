/**
 * The contract report as one self-contained HTML page: inline CSS, inline SVG plots and a few lines of
 * inline script (a filter to show only failing ops); it loads nothing, so it opens offline from a file.
 * Per op, one plot: x is the binade of the input along the number line (negative binades on the left,
 * the subnormals in the middle), y the worst error / bound there on a log scale, with the bound (1)
 * drawn across; the binades where the op's domain holds inputs are shaded, the ones with inputs only
 * outside it are hatched. An exact op's ratio is 0 when it matches (drawn on the "0" row at the bottom)
 * and infinite when it differs (the "∞" row at the top).
 */
import type { BinadeStat } from '../numerics/binades.js';
import { binadeOrder } from '../numerics/binades.js';
import type { ContractReportData, ReportOp } from './reportTypes.js';

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function num(v: number | null): string {
  if (v === null) return '–';
  if (Object.is(v, -0)) return '-0';
  return !Number.isFinite(v) || (Number.isInteger(v) && Math.abs(v) < 1e6) ? String(v) : v.toPrecision(4);
}

const W = 960;
const H = 260;
const LEFT = 56;
const RIGHT = 12;
const TOP = 26;
const BOTTOM = 44;
/** Rows kept for ∞ at the top and 0 at the bottom, outside the log scale. */
const EDGE = 24;

/** The log10 span of the y axis: from the smallest nonzero ratio seen (at least 1e-8 down) to 10. */
function ySpan(bins: readonly BinadeStat[]): { lo: number; hi: number } {
  let lo = -3;
  for (const b of bins) {
    if (b.maxRatio !== null && b.maxRatio > 0 && Number.isFinite(b.maxRatio)) lo = Math.min(lo, Math.floor(Math.log10(b.maxRatio)));
  }
  return { lo: Math.max(lo, -12), hi: 1 };
}

/** A binade's axis label: the power of two at its end nearest zero. */
function shortName(b: BinadeStat): string {
  if (b.exponent === -127) return `${b.sign === '-' ? '-' : ''}subnormal`;
  if (b.exponent === 128) return `${b.sign}inf, NaN`;
  return `${b.sign === '-' ? '-' : ''}2^${b.exponent}`;
}

/** One op's plot, as an SVG element. */
function plotSvg(op: ReportOp): string {
  const bins = op.binades;
  if (bins.length === 0) return `<svg class="plot" data-op="${esc(op.op)}" viewBox="0 0 ${W} 40" width="${W}" height="40" role="img"><text x="${LEFT}" y="24">no inputs were checked</text></svg>`;
  const first = binadeOrder(bins[0]!.index);
  const last = binadeOrder(bins[bins.length - 1]!.index);
  const columns = last - first + 1;
  const cw = (W - LEFT - RIGHT) / columns;
  const x = (b: BinadeStat) => LEFT + (binadeOrder(b.index) - first) * cw;
  const { lo, hi } = ySpan(bins);
  const top = TOP + EDGE;
  const bottom = H - BOTTOM - EDGE;
  const y = (r: number) => (r === 0 ? H - BOTTOM - EDGE / 2 : !Number.isFinite(r) ? TOP + EDGE / 2 : bottom - ((Math.min(Math.max(Math.log10(r), lo), hi) - lo) / (hi - lo)) * (bottom - top));
  const parts: string[] = [];
  for (const b of bins) {
    const cls = b.inDomain > 0 ? 'domain' : 'outside';
    parts.push(`<rect class="${cls}" x="${x(b).toFixed(2)}" y="${TOP}" width="${Math.max(cw, 0.5).toFixed(2)}" height="${H - BOTTOM - TOP}"><title>${esc(b.range)}: ${b.elements} ${op.unit}s, ${b.inDomain} in the domain</title></rect>`);
  }
  for (let e = lo; e <= hi; e++) {
    const yy = y(10 ** e);
    parts.push(`<line class="${e === 0 ? 'bound' : 'grid'}" x1="${LEFT}" x2="${W - RIGHT}" y1="${yy.toFixed(1)}" y2="${yy.toFixed(1)}"/>`);
    // The top line is left unlabelled: the ∞ row sits just above it.
    if (e < hi) parts.push(`<text class="tick" x="${LEFT - 4}" y="${(yy + 3).toFixed(1)}" text-anchor="end">${e === 0 ? 'bound' : `1e${e}`}</text>`);
  }
  parts.push(`<text class="tick" x="${LEFT - 4}" y="${(TOP + EDGE / 2 + 3).toFixed(1)}" text-anchor="end">∞</text>`);
  parts.push(`<text class="tick" x="${LEFT - 4}" y="${(H - BOTTOM - EDGE / 2 + 3).toFixed(1)}" text-anchor="end">0</text>`);
  for (const b of bins) {
    if (b.maxRatio === null) continue;
    const bad = b.failures > 0 || !(b.maxRatio <= 1);
    const cx = x(b) + cw / 2;
    const cy = y(b.maxRatio);
    parts.push(`<line class="stem${bad ? ' bad' : ''}" x1="${cx.toFixed(2)}" x2="${cx.toFixed(2)}" y1="${(H - BOTTOM).toFixed(1)}" y2="${cy.toFixed(1)}"/>`);
    parts.push(`<circle class="point${bad ? ' bad' : ''}" cx="${cx.toFixed(2)}" cy="${cy.toFixed(1)}" r="${Math.min(3, Math.max(1.5, cw / 2)).toFixed(1)}"><title>${esc(b.range)}: worst error ${num(b.maxError)} = ${num(b.maxRatio)} of the bound; ${b.failures} failures of ${b.inDomain} in the domain</title></circle>`);
  }
  // Labels under the axis, each binade by its lower end, left to right as far apart as they fit.
  let lastLabel = -Infinity;
  for (const b of bins) {
    const cx = x(b) + cw / 2;
    if (cx - lastLabel < 64) continue;
    lastLabel = cx;
    parts.push(`<text class="tick" x="${cx.toFixed(1)}" y="${H - BOTTOM + 14}" text-anchor="middle">${esc(shortName(b))}</text>`);
  }
  parts.push(`<text class="axis" x="${(LEFT + W - RIGHT) / 2}" y="${H - 8}" text-anchor="middle">binade of the input (${op.unit === 'case' ? 'each case\'s largest |input|' : 'the element\'s largest operand'})</text>`);
  parts.push(`<text class="axis" x="${LEFT}" y="${TOP - 10}">worst error / bound per binade</text>`);
  return `<svg class="plot" data-op="${esc(op.op)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(op.op)}: error against its bound per binade">${parts.join('')}</svg>`;
}

function section(op: ReportOp): string {
  const w = op.worst;
  const worst = w === null ? 'nothing in the domain' : `${esc(w.input)}: error ${num(w.error)} = ${num(w.ratio)} of its bound ${num(w.bound)}`;
  const notes = op.notes.length === 0 ? '' : `<ul class="notes">${op.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>`;
  return `<section class="op ${op.pass ? 'pass' : 'fail'}" data-op="${esc(op.op)}">
<h2><span class="verdict">${op.pass ? 'pass' : 'FAIL'}</span> ${esc(op.op)}</h2>
<p class="contract">${esc(op.contract)}</p>
<p class="worst">worst input: ${worst}</p>
<p class="counts">${op.checked} ${op.unit}s checked, ${op.inDomain} in the domain, ${op.failures} failures</p>
${plotSvg(op)}
${notes}
</section>`;
}

const CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: 0 0 .2em; }
section.op { border: 1px solid #ddd; border-radius: 6px; padding: .8em 1em; margin: 1em 0; }
.verdict { display: inline-block; min-width: 3em; text-align: center; border-radius: 4px; color: #fff; padding: 0 .4em; }
.pass .verdict { background: #2e7d32; } .fail .verdict { background: #c62828; }
p { margin: .2em 0; } .notes { color: #555; font-size: .9em; }
svg.plot { display: block; max-width: 100%; height: auto; margin-top: .4em; }
rect.domain { fill: #e3f0fb; } rect.outside { fill: url(#hatch); }
line.grid { stroke: #ddd; } line.bound { stroke: #c62828; stroke-dasharray: 4 3; }
line.stem { stroke: #1565c0; stroke-width: 1; } line.stem.bad { stroke: #c62828; }
circle.point { fill: #1565c0; } circle.point.bad { fill: #c62828; }
text.tick { font-size: 10px; fill: #555; } text.axis { font-size: 11px; fill: #333; }
.legend span { margin-right: 1.2em; } .swatch { display: inline-block; width: 1em; height: .8em; vertical-align: middle; margin-right: .3em; }
body.only-failing section.pass { display: none; }
`;

const SCRIPT = `
document.getElementById('only-failing').addEventListener('change', function (e) {
  document.body.classList.toggle('only-failing', e.target.checked);
});
`;

/** The page. */
export function reportHtml(d: ContractReportData): string {
  const failing = d.ops.filter((o) => !o.pass).length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>contracts of ${esc(d.target)}: ${d.pass ? 'pass' : 'FAIL'}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${CSS}</style></head>
<body>
<svg width="0" height="0" style="position:absolute"><defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#ccc" stroke-width="2"/></pattern></defs></svg>
<h1>Contracts of ${esc(d.target)} (simulated device): ${d.pass ? 'every op passes' : `${failing} op(s) fail`}</h1>
<p>${d.ops.length} op(s), swept ${esc(d.generated)} by <code>${esc(d.how)}</code>.</p>
<p class="legend"><span><span class="swatch" style="background:#e3f0fb"></span>binades with inputs in the domain</span><span><span class="swatch" style="background:#ccc"></span>inputs outside the domain only</span><span><span class="swatch" style="background:#c62828"></span>over the bound</span>
<label><input type="checkbox" id="only-failing"> failing ops only</label></p>
${d.ops.map(section).join('\n')}
<script>${SCRIPT}</script>
</body></html>
`;
}
