import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { STEP_PROGRAM, chainProgram, stepInputs, tempDir } from '../jobs/helpers.js';

function capture(): Io & { outs: string[]; errs: string[] } {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l) => outs.push(l), err: (l) => errs.push(l) };
}

const bin = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

describe('cli', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let cache: string;
  const file = (name: string, v: unknown) => { const p = join(tmp.dir, name); writeFileSync(p, typeof v === 'string' ? v : JSON.stringify(v)); return p; };
  beforeEach(() => { tmp = tempDir('npuo-cli-'); cache = join(tmp.dir, 'cache'); });
  afterEach(() => tmp.remove());

  it('validate: accepts a valid program and names its results', async () => {
    const io = capture();
    expect(await main(['validate', file('p.json', STEP_PROGRAM)], io)).to.equal(0);
    expect(io.outs[0]).to.match(/^ok: program "step" is valid/);
    expect(io.outs.join('\n')).to.contain('result y: f32[2, 3]');
  });

  it('validate: refuses with the code, the JSON pointer and the reason, exit 1', async () => {
    const bad = { ...STEP_PROGRAM, eqns: [STEP_PROGRAM.eqns[0], { op: 'expp', in: ['acc2'], out: 'e' }] };
    const io = capture();
    expect(await main(['validate', file('bad.json', bad)], io)).to.equal(1);
    expect(io.errs[0]).to.match(/^error \[InvalidProgram\]: invalid program at \/eqns\/1\/op: /);
    const j = capture();
    expect(await main(['validate', file('bad.json', bad), '--json'], j)).to.equal(1);
    const doc = JSON.parse(j.outs[0]!) as { error: { code: string; path: string; reason: string } };
    expect(doc.error.code).to.equal('InvalidProgram');
    expect(doc.error.path).to.equal('/eqns/1/op');
    expect(doc.error.reason).to.be.a('string').and.not.empty;
  });

  it('validate: a JSON syntax error names the line and column', async () => {
    const io = capture();
    expect(await main(['validate', file('broken.json', '{\n  "format": "program@1",\n  "name": }')], io)).to.equal(1);
    expect(io.errs[0]).to.match(/line 3, column 11/);
  });

  it('run --json prints results and state as b64 tensors', async () => {
    const io = capture();
    const code = await main(['run', file('p.json', STEP_PROGRAM), '--target', 'cpu', '--inputs', file('in.json', stepInputs(2)), '--steps', '2', '--json', '--cache-dir', cache], io);
    expect(code, io.errs.join('\n')).to.equal(0);
    const doc = JSON.parse(io.outs[0]!) as { results: Record<string, { dtype: string; shape: number[]; b64: string }>; state: Record<string, { b64: string }>; steps: unknown[] };
    expect(Object.keys(doc.results)).to.deep.equal(['y']);
    expect(doc.results['y']!.dtype).to.equal('f32');
    expect(doc.results['y']!.shape).to.deep.equal([2, 3]);
    const acc = Buffer.from(doc.state['acc']!.b64, 'base64');
    // acc = x(step 0) + x(step 1) = [0.25, -2, 3, 4, -1, 0.25]
    expect([0, 1, 2, 3, 4, 5].map((i) => acc.readFloatLE(i * 4))).to.deep.equal([0.25, -2, 3, 4, -1, 0.25]);
    expect(doc.steps).to.have.length(2);
  });

  it('run: a refusal exits non-zero and --json prints { error: { code, ...fields } }', async () => {
    const io = capture();
    const p = { ...STEP_PROGRAM, eqns: [...STEP_PROGRAM.eqns, { op: 'all_reduce', in: ['y'], out: 'z', reduce: 'sum' }], results: ['z'] };
    const code = await main(['run', file('p.json', p), '--target', 'cpu', '--inputs', file('in.json', stepInputs(1)), '--json', '--cache-dir', cache], io);
    expect(code).to.equal(1);
    expect(JSON.parse(io.outs[0]!)).to.deep.equal({ error: { code: 'CapabilityMissing', eqn: 3, op: 'all_reduce', capability: 'collective.all_reduce' } });
  });

  it('run: a bad inputs file names the place', async () => {
    const io = capture();
    const inputs = { ...stepInputs(1), acc: { dtype: 'f32', shape: [2, 3], data: [1, 2, 3] } };
    const code = await main(['run', file('p.json', STEP_PROGRAM), '--target', 'cpu', '--inputs', file('in.json', inputs), '--json', '--cache-dir', cache], io);
    expect(code).to.equal(1);
    const e = (JSON.parse(io.outs[0]!) as { error: { code: string; path: string } }).error;
    expect(e.code).to.equal('InvalidInput');
    expect(e.path).to.match(/^\/acc/);
  });

  it('run --device: native answers NoDevice on this machine; simulated runs and says so', async () => {
    const native = capture();
    const args = ['run', file('p.json', STEP_PROGRAM), '--target', 'xdna2', '--inputs', file('in.json', stepInputs(1)), '--cache-dir', cache];
    expect(await main([...args, '--device', 'native', '--json'], native)).to.equal(1);
    expect((JSON.parse(native.outs[0]!) as { error: { code: string; device: string } }).error).to.include({ code: 'NoDevice', device: 'xdna2' });
    const sim = capture();
    expect(await main([...args, '--device', 'simulated'], sim), sim.errs.join('\n')).to.equal(0);
    expect(sim.outs.join('\n')).to.match(/ran on xdna2 \(simulated\)/);
  });

  it('usage errors exit 2: a missing file, an unknown target, a bad --steps', async () => {
    const a = capture();
    expect(await main(['run', join(tmp.dir, 'none.json'), '--target', 'cpu'], a)).to.equal(2);
    expect(a.errs.join('\n')).to.match(/cannot read .*none\.json: no such file/);
    const b = capture();
    expect(await main(['run', file('p.json', STEP_PROGRAM), '--target', 'gpu'], b)).to.equal(2);
    expect(b.errs.join('\n')).to.match(/gpu/);
    const c = capture();
    expect(await main(['run', file('p.json', STEP_PROGRAM), '--target', 'cpu', '--steps', 'two'], c)).to.equal(2);
    const d = capture();
    expect(await main(['run', file('p.json', STEP_PROGRAM), '--json'], d)).to.equal(2);
    expect(JSON.parse(d.outs[0]!)).to.deep.equal({ error: { code: 'UsageError', reason: "required option '--target <target>' not specified" } });
  });

  it('farm compiles a directory into the cache; a second run is all hits', async () => {
    const dir = join(tmp.dir, 'programs');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, `p${i}.json`), JSON.stringify(chainProgram(4, i)));
    writeFileSync(join(dir, 'nested', 'q.json'), JSON.stringify(STEP_PROGRAM));
    writeFileSync(join(dir, 'inputs.json'), JSON.stringify(stepInputs(1)));
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...STEP_PROGRAM, eqns: [{ op: 'nope', in: [], out: 'z' }] }));
    const first = capture();
    expect(await main(['farm', dir, '--target', 'cpu', '--workers', '2', '--json', '--cache-dir', cache], first)).to.equal(1);
    const s1 = JSON.parse(first.outs[0]!) as { programs: number; hits: number; compiled: number; skipped: number; refused: { file: string; error: { code: string; path: string } }[] };
    expect(s1).to.include({ programs: 7, hits: 0, compiled: 6, skipped: 1 });
    expect(s1.refused).to.have.length(1);
    expect(s1.refused[0]!.file).to.equal('bad.json');
    expect(s1.refused[0]!.error).to.include({ code: 'InvalidProgram', path: '/eqns/0/op' });
    const second = capture();
    await main(['farm', dir, '--target', 'cpu', '--json', '--cache-dir', cache], second);
    expect(JSON.parse(second.outs[0]!)).to.include({ programs: 7, hits: 6, compiled: 0 });
    const ls = capture();
    expect(await main(['cache', 'ls', '--json', '--cache-dir', cache], ls)).to.equal(0);
    expect(JSON.stringify(JSON.parse(ls.outs.join('\n')))).to.contain('cpu:oracle');
  });

  it('the installed binary prints no stack trace for a user mistake', () => {
    const r = spawnSync(process.execPath, [bin, 'run', join(tmp.dir, 'missing.json'), '--target', 'cpu'], { encoding: 'utf8' });
    expect(r.status).to.equal(2);
    expect(r.stderr).to.match(/^error \[UsageError\]: cannot read/);
    expect(r.stderr).to.not.match(/\n\s+at /);
    const v = execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
    expect(v.trim()).to.match(/^\d+\.\d+\.\d+$/);
  });
});
