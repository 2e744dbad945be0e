/**
 * Embedding: the packed package, installed into a throwaway consumer project elsewhere, runs a job and
 * its CLI from yet another working directory. Any path resolved from the working directory or from the
 * source tree (worker entries, package.json) fails here.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packedConsumer } from './packed.js';

describe('package: embedding in another project', function () {
  this.timeout(300_000);

  it('packs, installs into a consumer, and runs a job and the CLI from another working directory', () => {
    const { work, consumer } = packedConsumer();
    writeFileSync(join(consumer, 'main.mjs'), `
import { createEngine, program, tensor } from 'npu-offload';
const p = program('embedded');
const x = p.activation('x', 'f32', [3]);
p.results(p.named('y').mul(p.exp(x), 2));
const engine = createEngine({ cacheDir: process.argv[2] });
const job = engine.submit({ program: p, target: 'cpu', inputs: { x: tensor('f32', [3], [0, 1, -1]) }, verify: true });
const stages = [];
for (const s of ['planned', 'compiled', 'cache-hit', 'loaded', 'step', 'verified', 'done']) job.on(s, () => stages.push(s));
const r = await job.result;
await engine.close();
console.log(JSON.stringify({ y: Array.from(r.results.y.data), pass: r.verification.pass, stages, threads: engine.liveThreads() }));
`);
    const elsewhere = join(work, 'elsewhere');
    mkdirSync(elsewhere);
    const out = execFileSync(process.execPath, [join(consumer, 'main.mjs'), join(work, 'cache')], { cwd: elsewhere, encoding: 'utf8' });
    const r = JSON.parse(out) as { y: number[]; pass: boolean; stages: string[]; threads: number };
    const f = Math.fround;
    expect(r.y).to.deep.equal([2, f(f(Math.E) * 2), f(f(Math.exp(-1)) * 2)]);
    expect(r.pass).to.equal(true);
    expect(r.stages).to.deep.equal(['planned', 'compiled', 'loaded', 'step', 'verified', 'done']);
    expect(r.threads).to.equal(0);

    writeFileSync(join(elsewhere, 'p.json'), JSON.stringify({
      format: 'program@1', name: 'cli', args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [2] }],
      eqns: [{ op: 'neg', in: ['x'], out: 'y' }], results: ['y'], state: {},
    }));
    writeFileSync(join(elsewhere, 'in.json'), JSON.stringify({ x: { dtype: 'f32', shape: [2], data: [1.5, '-0'] } }));
    const bin = join(consumer, 'node_modules/.bin/npu-offload');
    const cli = execFileSync(bin, ['run', 'p.json', '--target', 'cpu', '--inputs', 'in.json', '--json', '--cache-dir', join(work, 'cache')], { cwd: elsewhere, encoding: 'utf8' });
    const doc = JSON.parse(cli) as { results: { y: { dtype: string; shape: number[]; b64: string } } };
    const bytes = Buffer.from(doc.results.y.b64, 'base64');
    expect(doc.results.y.dtype).to.equal('f32');
    expect(bytes.readFloatLE(0)).to.equal(-1.5);
    expect(Object.is(bytes.readFloatLE(4), 0)).to.equal(true);
  });
});
