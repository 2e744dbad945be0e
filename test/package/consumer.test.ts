/**
 * The packed package as a consumer project meets it, packed and installed once for both (packed.ts):
 * - embedding: installed into a throwaway consumer project elsewhere, it runs a job and its CLI from yet
 *   another working directory. Any path resolved from the working directory or from the source tree
 *   (worker entries, package.json) fails here.
 * - the shipped types: a consumer project, strict, NodeNext, with TypeScript's default
 *   `skipLibCheck: false`, type-checks a file using the public API against the packed package's .d.ts
 *   files. A declaration the emitted types refer to but stripInternal left out fails it.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packedConsumer, root } from './packed.js';

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

const CONSUMER = `
import {
  createEngine, connectEngine, exposeEngine, loadModel, tokenizer, gguf, program, tensor,
  EngineError, ActorCrashed, Aborted, DeadlineExceeded, fromWire,
  type Engine, type Job, type JobResult, type JobSpec, type GenerateRequest, type GenerationResult,
  type Qwen3Model, type Tokenizer, type RemoteEngine,
} from 'npu-offload';
import { Worker } from 'node:worker_threads';

const p = program('consumer');
const x = p.activation('x', 'f32', [2]);
p.results(p.named('y').neg(x));
const engine: Engine = createEngine({ cacheDir: '/tmp/x' });
const spec: JobSpec = { program: p, target: 'host', inputs: { x: tensor('f32', [2], [1, 2]) } };
const controller = new AbortController();
const job: Job = engine.submit(spec, { signal: controller.signal });
job.on('step', (e) => { console.log(e.index, e.results['y']?.data[0]); });
export async function run(): Promise<number> {
  try {
    const r: JobResult = await job.result;
    return r.stepCount;
  } catch (e) {
    if (e instanceof Aborted) return -1;
    if (e instanceof EngineError) console.log(e.code, e.toWire(), fromWire(e.toWire())?.message);
    if (e instanceof DeadlineExceeded) console.log(e.deadlineMs);
    if (e instanceof ActorCrashed) console.log(e.actor);
    return 0;
  }
}
export async function generate(path: string): Promise<string> {
  const model: Qwen3Model = await loadModel(path, { target: 'host', ctx: 64 });
  const request: GenerateRequest = { prompt: 'hi', maxTokens: 4 };
  const t: Tokenizer | null = model.tokenizer;
  for await (const token of model.generate(request, { signal: controller.signal })) console.log(token.id, token.text, t?.decode([token.id]));
  const r: GenerationResult = await model.complete(request, { signal: AbortSignal.timeout(1000) });
  await model.close();
  return r.text;
}
export function remote(): RemoteEngine {
  const w = new Worker(new URL('./host.js', import.meta.url));
  return connectEngine(w);
}
void exposeEngine; void tokenizer; void gguf;
`;

describe('package: the shipped types', function () {
  this.timeout(300_000);

  it('a strict NodeNext consumer type-checks against the packed .d.ts files with skipLibCheck false', () => {
    const { consumer } = packedConsumer();
    const dir = join(consumer, 'typed');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.ts'), CONSUMER);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
        skipLibCheck: false,
        // A Node consumer has @types/node of its own; this one borrows ours rather than install it.
        typeRoots: [join(root, 'node_modules/@types')], types: ['node'],
      },
      files: ['main.ts'],
    }));
    // The build's compiler (TypeScript 7, installed as @typescript/native; `typescript` is 6.0 for eslint).
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/@typescript/native/bin/tsc'), '-p', dir], { cwd: dir, encoding: 'utf8' });
    expect(`${tsc.stdout}${tsc.stderr}`).to.equal('');
    expect(tsc.status).to.equal(0);
  });
});
