#!/usr/bin/env node
// Regenerates docs/FEATURE_MATRIX.md from the admission tables, through the normal build (dist/).
// Run `npm run build` first, then `node scripts/gen-matrix.mjs` (from anywhere). `--check` writes
// nothing and exits 1 when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const dist = new URL(process.env.NPU_OFFLOAD_DIST ?? 'dist/', root);
const { featureMatrixDoc } = await import(new URL('src/planner/matrix.js', dist).href);
const { TARGET_NAMES, resolveTarget } = await import(new URL('src/targets/index.js', dist).href);

const file = fileURLToPath(new URL('docs/FEATURE_MATRIX.md', root));
const text = featureMatrixDoc(TARGET_NAMES.map((n) => resolveTarget(n)));
if (process.argv.includes('--check')) {
  let old = '';
  try { old = readFileSync(file, 'utf8'); } catch { /* a missing file is stale */ }
  if (old !== text) { console.error(`${file} is stale: run node scripts/gen-matrix.mjs`); process.exit(1); }
  console.log(`${file} is up to date`);
} else {
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
