/**
 * The house's layers point down only (docs/ARCHITECTURE.md): every import in src/ goes to its own
 * folder or to a folder lower in LAYERS, and no two files import each other, directly or round a loop.
 */
import { expect } from 'chai';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const LAYERS = ['errors', 'io', 'numerics', 'ir', 'ops', 'oracle', 'targets', 'planner', 'compiler', 'devices',
  'session', 'contracts', 'cache', 'actors', 'workers', 'jobs', 'model', 'seal', 'serve', 'cli', 'index'];
const root = fileURLToPath(new URL('../../../src/', import.meta.url));
const IMPORT = /(?:^|[\s;])(?:import|export)\b[^'"`;]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}
const layerOf = (file: string): string => relative(root, file).split(/[\\/]/)[0]!.replace(/\.ts$/, '');
const imports = new Map(sources(root).map((f) => [f, [...readFileSync(f, 'utf8').matchAll(IMPORT)]
  .map((m) => normalize(join(dirname(f), (m[1] ?? m[2])!)).replace(/\.js$/, '.ts'))]));

describe('layers', () => {
  it('every folder of src/ has a place in the layers', () => {
    expect([...imports.keys()].map(layerOf).filter((l) => !LAYERS.includes(l))).to.deep.equal([]);
  });

  it('no import points up a layer', () => {
    const up = [...imports].flatMap(([f, to]) => to.filter((t) => LAYERS.indexOf(layerOf(t)) > LAYERS.indexOf(layerOf(f)))
      .map((t) => `${relative(root, f)} imports ${relative(root, t)} (${layerOf(f)} is below ${layerOf(t)})`));
    expect(up).to.deep.equal([]);
  });

  it('no file imports itself round a loop', () => {
    const state = new Map<string, 'open' | 'done'>();
    const loops: string[] = [];
    const visit = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') { loops.push([...path.slice(path.indexOf(f)), f].map((p) => relative(root, p)).join(' -> ')); return; }
      state.set(f, 'open');
      for (const t of imports.get(f) ?? []) visit(t, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of imports.keys()) visit(f, []);
    expect(loops).to.deep.equal([]);
  });
});
