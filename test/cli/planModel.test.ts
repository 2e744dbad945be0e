/**
 * `plan MODEL --target T`: a Qwen3 model stands for its decode program (or a prefill program with
 * --tokens), built in the form the target plans best, as loadModel builds it.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { TINY } from '../model/qwen3/helpers.js';
import { cliHere } from './inProcess.js';

/** `plan ARGS` in this process (see inProcess.ts). */
const run = async (...args: string[]) => {
  const r = await cliHere(['plan', ...args]);
  return { status: r.status, stdout: r.out, stderr: r.err };
};

interface PlanJson {
  program: string;
  placements: { eqn: number; op: string; target: string | null; segment: number | null; refusals: { target: string; error: { code: string } }[] }[];
  segments: { index: number; target: string; eqns: number[] }[];
  refused: unknown[];
  limits: unknown[];
}

describe('cli: plan a model', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'plan-model-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('plans a GGUF\'s decode program on xdna2,host: every equation placed, every segment and each host equation\'s XDNA2 refusal', async () => {
    const gguf = join(dir, 'q8.gguf');
    writeTinyQwen3(gguf, { ...TINY, type: 'Q8_0' });
    const r = await run(gguf, '--target', 'xdna2,host', '--json');
    expect(r.status, r.stderr).to.equal(0);
    const j = JSON.parse(r.stdout) as PlanJson;
    expect(j.program).to.equal('qwen3-decode-ctx256');
    expect(j.refused).to.deep.equal([]);
    expect(j.limits).to.deep.equal([]);
    expect(new Set(j.segments.map((s) => s.target))).to.deep.equal(new Set(['xdna2', 'host']));
    expect(j.segments.flatMap((s) => s.eqns)).to.deep.equal(j.placements.map((p) => p.eqn));
    for (const p of j.placements) expect(p.refusals.map((x) => x.target), `eqn ${p.eqn} ${p.op}`).to.deep.equal(p.target === 'host' ? ['xdna2'] : []);
    // The XDNA2 takes the RMSNorms (row kernels whose bound it derives); the quantized matmuls go to host.
    expect(j.placements.some((p) => p.op === 'row_kernel' && p.target === 'xdna2')).to.equal(true);
    expect(j.placements.filter((p) => p.op === 'matmul' && p.target === 'host').length).to.be.greaterThan(0);
  });

  it('plans an F16 model\'s prefill on npu4 whole in the plain form, refuses a quantized one, and keeps the model flags to models', async () => {
    const f16 = join(dir, 'f16.gguf');
    writeTinyQwen3(f16, { ...TINY, type: 'F16' });
    const ok = await run(f16, '--target', 'npu4', '--tokens', '8', '--ctx', '32', '--json');
    expect(ok.status, ok.stderr).to.equal(0);
    expect(JSON.parse(ok.stdout)).to.include({ program: 'qwen3-prefill-8-ctx32-plain', target: 'npu4' });
    const q8 = join(dir, 'q8b.gguf');
    writeTinyQwen3(q8, { ...TINY, type: 'Q8_0' });
    const refused = await run(q8, '--target', 'npu4', '--json');
    expect(refused.status).to.equal(1);
    expect(refused.stdout).to.contain('dtype.q8_0');
    const file = join(dir, 'p.json');
    writeFileSync(file, '{}');
    const usage = await run(file, '--target', 'npu4', '--tokens', '3');
    expect(usage.status).to.equal(2);
    expect(usage.stderr).to.contain('--tokens and --ctx are for a model');
    expect((await run(f16, '--target', 'npu4', '--tokens', '40', '--ctx', '32')).status).to.equal(2);
  });
});
