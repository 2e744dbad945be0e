/**
 * `npm start` (`npu-offload demo`): builds a small program with the builder (a carried running sum,
 * an RMSNorm row kernel with a weight, exp and a literal), runs three steps of it through the actors
 * on the CPU target with oracle verification, and prints every stage as it happens.
 */
import { createEngine } from '../jobs/engine.js';
import { program } from '../ops/builder.js';
import { tensor } from '../ir/tensor.js';
import type { CliCommand } from './command.js';
import { cacheDirOption } from './options.js';
import type { Io } from './output.js';
import { EXIT, formatTensor } from './output.js';

/** The demo program: acc2 = acc + x; y = rmsnorm(acc2) * w; z = exp(y) * 0.5. */
function demoProgram() {
  const p = program('demo-rms-step');
  const x = p.activation('x', 'f32', [4, 64]);
  const w = p.weight('w', 'f32', [64]);
  const acc = p.state('acc', 'f32', [4, 64]);
  const acc2 = p.named('acc2').add(acc, x);
  const [y] = p.named('y').rowKernel([acc2, w], (b, v, g) => {
    const ms = b.div(b.reduceSum(b.mul(v, v)), 64);
    return b.mul(b.div(v, b.sqrt(b.add(ms, 1e-6))), g);
  });
  const z = p.named('z').mul(p.exp(y!), 0.5);
  p.results(z);
  p.carry(acc, acc2);
  return p.build();
}

function demoInputs(steps: number) {
  const ramp = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => Math.fround(f(i)));
  return {
    w: tensor('f32', [64], ramp(64, (i) => 0.5 + i / 64)),
    acc: tensor('f32', [4, 64], ramp(256, () => 0)),
    x: Array.from({ length: steps }, (_, s) => tensor('f32', [4, 64], ramp(256, (i) => Math.sin(i * 0.37 + s)))),
  };
}

/** Runs the demo; `cacheDir` overrides the default cache. */
async function demoCommand(opts: { cacheDir?: string }, io: Io): Promise<number> {
  const started = performance.now();
  const engine = createEngine({ ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}) });
  io.out(`npu-offload demo: cache in ${engine.cacheDir}`);
  try {
    const prog = demoProgram();
    io.out(`program ${prog.name}: ${prog.eqns.length} equations, ${prog.args.length} args (x activation, w weight, acc state)`);
    const job = engine.submit({ program: prog, target: 'cpu', inputs: demoInputs(3), steps: 3, verify: true });
    const t = () => `${(performance.now() - started).toFixed(0).padStart(5)} ms`;
    job.on('planned', (e) => io.out(`${t()}  planned for ${e.target}: ${e.regions} region`));
    job.on('cache-hit', (e) => io.out(`${t()}  cache hit ${e.key.slice(0, 16)}…`));
    job.on('compiled', (e) => io.out(`${t()}  compiled ${e.key.slice(0, 16)}… in ${e.ms.toFixed(1)} ms`));
    job.on('loaded', (e) => io.out(`${t()}  loaded on ${e.device}${e.simulated ? ' (simulated)' : ''}`));
    job.on('step', (e) => io.out(`${t()}  step ${e.index}: z = ${formatTensor(e.results['z']!, 4)}`));
    job.on('verified', (v) => io.out(`${t()}  verified against the oracle (${v.numericsClass}): ${v.pass ? 'every result matches' : 'MISMATCH'}`));
    const r = await job.result;
    io.out(`${t()}  done: state acc = ${formatTensor(r.state['acc']!, 4)}`);
    return r.verification?.pass === false ? EXIT.refused : EXIT.ok;
  } finally {
    await engine.close();
  }
}

/** `demo`, what `npm start` runs. */
export const demo: CliCommand = {
  register(cli, { io, action }) {
    cli.command('demo')
      .description('run the demo program through the actors on the CPU target (npm start)')
      .addOption(cacheDirOption())
      .action(action((o: { cacheDir?: string }) => demoCommand(o, io)));
  },
};
