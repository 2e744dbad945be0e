/**
 * Hostile inputs of the engine API and of `run` (issue 9, items 5, 7, 13, 16): a step count past the
 * maximum, caller mistakes in createEngine's and submit's options, programs and inputs JSON cannot
 * carry, and listeners that throw. Each is a typed refusal naming the field (or, for a listener, a job
 * that settles as it would have), never a heap abort, an unsettled job or ActorCrashed("engine"). The API
 * scripts run in the test's process (`here`), but for the step count past the maximum: a regression there
 * is a heap abort, which needs a process of its own under its memory bound.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostileCase } from './case.js';

const PROGRAM = {
  format: 'program@1', name: 'acc',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [2] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [2] },
  ],
  eqns: [{ op: 'add', in: ['acc', 'x'], out: 'y' }],
  results: ['y'], state: { acc: 'y' },
};
const INPUTS = { x: { dtype: 'f32', shape: [2], data: [1, 2] }, acc: { dtype: 'f32', shape: [2], data: [0, 0] } };

function files(dir: string): void {
  writeFileSync(join(dir, 'p.json'), JSON.stringify(PROGRAM));
  writeFileSync(join(dir, 'in.json'), JSON.stringify(INPUTS));
}

const run = (...more: string[]): readonly string[] =>
  ['run', '{dir}/p.json', '--target', 'cpu', '--inputs', '{dir}/in.json', '--cache-dir', '{dir}/cache', ...more];

/**
 * An API here: true, script: `body` runs with `engine` (made by `make`, default a plain engine), `P` and `X`
 * (the program and inputs above) in scope; a typed error is printed as `[Code]` and exits 1.
 */
function api(body: string, make = 'createEngine({ cacheDir: "{dir}/cache" })'): string {
  return `
import { createEngine } from '{pkg}';
const P = ${JSON.stringify(PROGRAM)};
const X = ${JSON.stringify(INPUTS)};
let engine;
try {
  engine = ${make};
  ${body}
} catch (e) {
  console.error('error [' + e.code + ']: ' + e.message);
  process.exitCode = 1;
} finally {
  await engine?.close();
}
`;
}

/** A job whose spec is `spec` (a JS expression over P and X): it must fail with the code it names. */
const job = (spec: string) => api(`const r = await engine.submit(${spec}).result; console.log('ran', r.stepCount);`);

function contains(what: string, text: string): void {
  if (!text.includes(what)) throw new Error(`expected ${JSON.stringify(what)} in the output`);
}

export const cases: readonly HostileCase[] = [
  { name: 'run --steps 1000000000 is refused before any step, not a heap abort', setup: files, ownProcess: 'memory', cli: run('--steps', '1000000000'), exit: 1, code: 'ResourceLimit',
    check: (r) => { contains('steps 1000000000 is past the limit 1000000', r.stderr); } },
  { name: 'run --steps 1000000000 --json', setup: files, ownProcess: 'memory', cli: run('--steps', '1000000000', '--json'), exit: 1, code: 'ResourceLimit' },
  { name: 'run --deadline-ms 0 is a usage error', setup: files, cli: run('--deadline-ms', '0'), exit: 2, code: 'UsageError' },
  { name: 'run 3000 steps --json keeps 1000 and says how many ran', setup: files, cli: run('--steps', '3000', '--json'), exit: 0,
    check: (r) => {
      const doc = JSON.parse(r.stdout) as { steps: unknown[]; stepCount: number; firstStep: number };
      if (doc.steps.length !== 1000 || doc.stepCount !== 3000 || doc.firstStep !== 2000) throw new Error(`steps ${doc.steps.length}, stepCount ${doc.stepCount}, firstStep ${doc.firstStep}`);
    } },
  { name: 'api: steps 1e9 is ResourceLimit, the host survives', script: job('{ program: P, target: "cpu", inputs: X, steps: 1e9 }'), exit: 1, code: 'ResourceLimit' },
  { name: 'api: maxSteps raises the maximum', here: true, script: api('const r = await engine.submit({ program: P, target: "cpu", inputs: X, steps: 5 }).result; console.log("ran", r.stepCount);', 'createEngine({ cacheDir: "{dir}/cache", maxSteps: 4 })'),
    exit: 1, code: 'ResourceLimit' },
  ...['0', '-1', '"2"'].map((w): HostileCase => ({
    name: `api: createEngine({ workers: ${w} }) is InvalidOptions`, here: true, script: api('', `createEngine({ cacheDir: "{dir}/cache", workers: ${w} })`), exit: 1, code: 'InvalidOptions',
    check: (r) => { contains('invalid option workers', r.stderr); },
  })),
  ...['-1', 'NaN', '"100"', 'null', '0'].map((d): HostileCase => ({
    name: `api: submit({ deadlineMs: ${d} }) is InvalidOptions`, here: true, script: job(`{ program: P, target: "cpu", inputs: X, deadlineMs: ${d} }`), exit: 1, code: 'InvalidOptions',
    check: (r) => { contains('invalid option deadlineMs', r.stderr); },
  })),
  { name: 'api: createEngine({ deadlineMs: 0 }) is InvalidOptions', here: true, script: api('', 'createEngine({ cacheDir: "{dir}/cache", deadlineMs: 0 })'), exit: 1, code: 'InvalidOptions' },
  { name: 'api: inputs with a throwing getter', here: true, script: job('{ program: P, target: "cpu", inputs: { acc: X.acc, get x() { throw new Error("boom"); } } }'), exit: 1, code: 'InvalidInput',
    check: (r) => { contains('invalid input at /x', r.stderr); } },
  { name: 'api: circular inputs', here: true, script: job('{ program: P, target: "cpu", inputs: (() => { const x = { ...X.x }; x.again = x; return { ...X, x }; })() }'), exit: 1, code: 'InvalidInput',
    check: (r) => { contains('/x/again', r.stderr); } },
  { name: 'api: BigInt inputs', here: true, script: job('{ program: P, target: "cpu", inputs: { ...X, x: { ...X.x, data: [1n, 2n] } } }'), exit: 1, code: 'InvalidInput' },
  { name: 'api: Symbol inputs', here: true, script: job('{ program: P, target: "cpu", inputs: { ...X, x: { ...X.x, dtype: Symbol("f32") } } }'), exit: 1, code: 'InvalidInput' },
  { name: 'api: a program with a throwing getter', here: true, script: job('{ program: { ...P, get eqns() { throw new Error("boom"); } }, target: "cpu", inputs: X }'), exit: 1, code: 'InvalidProgram',
    check: (r) => { contains('invalid program at /eqns', r.stderr); } },
  { name: 'api: a circular program', here: true, script: job('{ program: (() => { const p = { ...P }; p.again = p; return p; })(), target: "cpu", inputs: X }'), exit: 1, code: 'InvalidProgram' },
  { name: 'api: a BigInt in a program', here: true, script: job('{ program: { ...P, args: [{ ...P.args[0], shape: [2n] }, P.args[1]] }, target: "cpu", inputs: X }'), exit: 1, code: 'InvalidProgram' },
  { name: 'api: a Symbol in a program', here: true, script: job('{ program: { ...P, name: Symbol("p") }, target: "cpu", inputs: X }'), exit: 1, code: 'InvalidProgram' },
  ...(['planned', 'step', 'done'] as const).map((ev): HostileCase => ({
    name: `api: a listener that throws on '${ev}' leaves the job to succeed`,
    here: true, script: api(`const j = engine.submit({ program: P, target: "cpu", inputs: X, steps: 2 }); const seen = []; engine.on("error", (e) => seen.push(e.event)); j.on("${ev}", () => { throw new Error("listener"); }); const r = await j.result; console.log("ran", r.stepCount, Array.from(r.results.y.data).join(","), seen.join(","));`),
    exit: 0, check: (r) => { contains(`ran 2 2,4 ${ev === 'step' ? 'step,step' : ev}`, r.stdout); },
  })),
  { name: "api: a listener that throws on 'failed' leaves the job to fail typed; no error listener: a warning",
    here: true, script: api('const j = engine.submit({ program: { ...P, eqns: [] }, target: "cpu", inputs: X }); j.on("failed", () => { throw new Error("listener"); }); await j.result;'),
    exit: 1, code: 'InvalidProgram', check: (r) => { contains('ListenerError', r.stderr); } },
];
