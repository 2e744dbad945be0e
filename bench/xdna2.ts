/**
 * `npm run bench` (after run.ts): the XDNA2 path's figures, printed with the machine they came from;
 * never part of `npm test`, and nothing here asserts on time.
 *
 * 1. Planning and compiling against program size: chains of 10 to 320 admitted equations (add, mul,
 *    exp over [4, 64] f32), timed through checkProgram + planProgram + XDNA2_BACKEND.units (the regions)
 *    + compiling every unit, as ms per program and ms per equation. The growth is called linear when the
 *    per-equation time at 320 is at most twice the time at 10 (a fixed cost per program makes the
 *    smallest programs the dearest per equation).
 * 2. The simulator's throughput: one compiled region of elementwise ops over a [256, 1024] f32
 *    activation, replayed through a Session, as millions of elements per second (an element through
 *    every op of the region counts once per op, and once through the whole region).
 */
import { cpus, totalmem } from 'node:os';
import { XDNA2_BACKEND } from '../src/compiler/aie/backend.js';
import { Session } from '../src/session/session.js';
import { Xdna2SimDevice } from '../src/devices/xdna2/simDevice.js';
import type { CheckedProgram } from '../src/ir/checked.js';
import { parseProgram } from '../src/ir/codec.js';
import { tensor } from '../src/ir/tensor.js';
import { checkProgram } from '../src/ops/validate.js';
import { planProgram } from '../src/planner/plan.js';
import { XDNA2_TARGET } from '../src/targets/xdna2/index.js';

const SIZES = [10, 20, 40, 80, 160, 320];
// Linear means the per-equation cost at the largest size is within this factor of the smallest's.
const LINEAR_FACTOR = 2;

/** A chain of `n` admitted equations over a [4, 64] f32 activation: add, mul and exp in turn. */
function chain(n: number, shape: readonly number[] = [4, 64]): unknown {
  const eqns = [];
  let prev = 'x';
  for (let i = 0; i < n; i++) {
    const op = (['add', 'mul', 'exp'] as const)[i % 3]!;
    // exp of exp overflows, which costs the compiler nothing; small literals keep the values finite anyway.
    eqns.push({ op, in: op === 'exp' ? [prev] : [prev, { lit: op === 'mul' ? 0.5 : -1 }], out: `v${i}` });
    prev = `v${i}`;
  }
  return { format: 'program@1', name: `bench-chain-${n}`, args: [{ name: 'x', role: 'activation', dtype: 'f32', shape }], eqns, results: [prev], state: {} };
}

/** The ms of each phase: check, plan, regions (XDNA2_BACKEND.units), compiling every unit; and the units. */
function planAndCompile(json: unknown): { phases: number[]; units: number } {
  const t0 = performance.now();
  const checked = checkProgram(parseProgram(json));
  const t1 = performance.now();
  const plan = planProgram(checked, XDNA2_TARGET);
  const t2 = performance.now();
  const units = XDNA2_BACKEND.units(checked, plan);
  const t3 = performance.now();
  for (let u = 0; u < units.length; u++) XDNA2_BACKEND.compile(checked, plan, u);
  const t4 = performance.now();
  return { phases: [t1 - t0, t2 - t1, t3 - t2, t4 - t3], units: units.length };
}

const median = (xs: readonly number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };

function compileScaling(): void {
  console.log('planning + compiling (checkProgram + planProgram + XDNA2_BACKEND.units + compile every unit), chains of add/mul/exp over [4, 64] f32:');
  // Warm-up, so the first size does not pay for V8's compilation of the compiler.
  for (let i = 0; i < 10; i++) planAndCompile(chain(80));
  const perEqn: number[] = [];
  for (const n of SIZES) {
    const json = chain(n);
    const reps = Math.max(10, Math.round(1280 / n));
    const runs = Array.from({ length: reps }, () => planAndCompile(json));
    const total = median(runs.map((r) => r.phases.reduce((a, b) => a + b, 0)));
    // Each phase's median on its own, so a reader sees which one grows.
    const [check, plan, regions, compile] = [0, 1, 2, 3].map((k) => median(runs.map((r) => r.phases[k]!)));
    perEqn.push(total / n);
    console.log(`  ${String(n).padStart(3)} equations, ${String(runs[0]!.units).padStart(2)} region(s): ${total.toFixed(2)} ms (median of ${reps}), ${(total / n * 1000).toFixed(1)} µs/equation`
      + ` [check ${check!.toFixed(2)}, plan ${plan!.toFixed(2)}, regions ${regions!.toFixed(2)}, compile ${compile!.toFixed(2)} ms]`);
  }
  const ratio = perEqn[perEqn.length - 1]! / perEqn[0]!;
  // A fixed cost per program makes small programs dearer per equation, so a falling ratio is linear too.
  const verdict = ratio <= LINEAR_FACTOR ? 'linear' : 'NOT linear';
  console.log(`  per-equation time at ${SIZES[SIZES.length - 1]} vs ${SIZES[0]} equations: x${ratio.toFixed(2)} -> ${verdict} (per-equation time grows by at most x${LINEAR_FACTOR})`);
}

/** A session over every region of `checked` on a fresh simulated XDNA2. */
async function openOn(device: Xdna2SimDevice, checked: CheckedProgram): Promise<Session> {
  const plan = planProgram(checked, XDNA2_TARGET);
  const units = XDNA2_BACKEND.units(checked, plan);
  const stages = [];
  for (let u = 0; u < units.length; u++) {
    stages.push({ loaded: await device.load({ target: 'xdna2', bytes: XDNA2_BACKEND.compile(checked, plan, u) }), wiring: units[u]!.wiring });
  }
  return Session.open(device, stages, { weights: {}, state: {}, activations: ['x'], stateNext: {}, results: checked.program.results });
}

async function simulatorThroughput(): Promise<void> {
  const shape = [256, 1024];
  const n = shape[0]! * shape[1]!;
  const eqns = 6;
  const checked = checkProgram(parseProgram(chain(eqns, shape)));
  const regions = XDNA2_BACKEND.units(checked, planProgram(checked, XDNA2_TARGET)).length;
  const device = new Xdna2SimDevice();
  try {
    const session = await openOn(device, checked);
    const x = tensor('f32', shape, Float64Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i) * 4)));
    await session.replay({ x }, checked.program.results, Infinity);
    const replays = 5;
    const times: number[] = [];
    for (let k = 0; k < replays; k++) {
      const t0 = performance.now();
      await session.replay({ x }, checked.program.results, Infinity);
      times.push(performance.now() - t0);
    }
    const s = median(times) / 1000;
    console.log(`simulator: ${eqns} elementwise ops (add, mul, exp) in ${regions} region(s) over [${shape.join(', ')}] f32, ${replays} replays through a Session:`);
    console.log(`  ${(median(times)).toFixed(1)} ms per replay (median); ${(n / s / 1e6).toFixed(2)} M elements/s through the region, ${(n * eqns / s / 1e6).toFixed(2)} M element-ops/s`);
    session.close();
  } finally {
    device.drop();
  }
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(`machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`);
compileScaling();
await simulatorThroughput();
