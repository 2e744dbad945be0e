/**
 * Carried state on every target, as a property: seeded random programs of elementwise chains whose
 * state's next value is sometimes an intermediate (read by a later equation, not a result) and
 * sometimes a result, run for a few steps through the engine on cpu, xdna2, npu4 and host. Each
 * program either gives the oracle's results (verified under the target's numerics, and its final
 * state compared with the oracle's) or is refused at plan time with a typed error; every target must
 * have run some of them, so the property cannot hold vacuously.
 */
import { expect } from 'chai';
import { EngineError } from '../../src/errors/index.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { checkProgram } from '../../src/ops/validate.js';
import { parseProgram } from '../../src/ir/codec.js';
import { runProgram } from '../../src/oracle/index.js';
import { tensor } from '../../src/ir/tensor.js';
import { mulberry32 } from '../../src/numerics/random.js';
import { tempDir } from './helpers.js';

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

interface Generated {
  readonly program: {
    format: string; name: string;
    args: { name: string; role: string; dtype: string; shape: number[] }[];
    eqns: { op: string; in: (string | { lit: number })[]; out: string }[];
    results: string[]; state: Record<string, string>;
  };
  readonly steps: number;
  readonly inputs: Record<string, unknown>;
  /** Per state arg: whether its next value is an intermediate (no result). */
  readonly intermediate: Record<string, boolean>;
}

/**
 * One random program: x (an activation) and 1-2 states, 2-5 equations of bounded elementwise ops
 * (values stay within a few units over 4 steps, so a narrowing target's range holds), each state's
 * next value one of the equations' outputs, the results one or two outputs.
 */
export function generate(seed: number): Generated {
  const r = mulberry32(seed);
  const shape = pick(r, [[4], [2, 3], [3]]);
  const n = shape.reduce((a, b) => a * b, 1);
  const nState = r() < 0.5 ? 1 : 2;
  const states = Array.from({ length: nState }, (_, k) => `s${k}`);
  const eqns: Generated['program']['eqns'] = [];
  const values = ['x', ...states];
  const outs: string[] = [];
  const nEqns = 2 + Math.floor(r() * 4);
  for (let i = 0; i < nEqns; i++) {
    const out = `v${i}`;
    // The first equations read the states, so every state reaches something.
    const first = i < nState ? states[i]! : pick(r, values);
    const kind = r();
    if (kind < 0.55) {
      const op = pick(r, ['add', 'sub', 'max', 'min']);
      const other = i < nState ? 'x' : pick(r, values);
      eqns.push({ op, in: [first, other], out });
    } else if (kind < 0.8) {
      eqns.push({ op: 'mul', in: [first, { lit: pick(r, [0.5, -0.75, 0.25, 1.5]) }], out });
    } else {
      eqns.push({ op: pick(r, ['tanh', 'neg', 'abs']), in: [first], out });
    }
    values.push(out);
    outs.push(out);
  }
  const last = outs[outs.length - 1]!;
  const results = [...new Set([last, ...(r() < 0.4 ? [pick(r, outs)] : [])])];
  const state: Record<string, string> = {};
  const intermediate: Record<string, boolean> = {};
  for (const s of states) {
    // Half the time a value some later equation reads that is not a result (an intermediate).
    const inner = outs.filter((o) => !results.includes(o));
    const next = r() < 0.6 && inner.length > 0 ? pick(r, inner) : pick(r, results);
    state[s] = next;
    intermediate[s] = !results.includes(next);
  }
  const steps = 2 + Math.floor(r() * 3);
  const data = (): number[] => Array.from({ length: n }, () => Math.round((r() * 4 - 2) * 8) / 8);
  const inputs: Record<string, unknown> = {
    x: Array.from({ length: steps }, () => ({ dtype: 'f32', shape, data: data() })),
  };
  for (const s of states) inputs[s] = { dtype: 'f32', shape, data: data() };
  return {
    program: {
      format: 'program@1', name: `state-${seed}`,
      args: [{ name: 'x', role: 'activation', dtype: 'f32', shape }, ...states.map((s) => ({ name: s, role: 'state', dtype: 'f32', shape }))],
      eqns, results, state,
    },
    steps, inputs, intermediate,
  };
}

/** The oracle's final state of a generated program. */
function oracleState(g: Generated): Record<string, number[]> {
  const checked = checkProgram(parseProgram(g.program));
  const xs = g.inputs['x'] as { shape: number[]; data: number[] }[];
  const state = Object.fromEntries(Object.keys(g.program.state).map((s) => {
    const t = g.inputs[s] as { shape: number[]; data: number[] };
    return [s, tensor('f32', t.shape, t.data)];
  }));
  const out = runProgram(checked, { weights: {}, state, steps: xs.map((t) => ({ x: tensor('f32', t.shape, t.data) })) });
  return Object.fromEntries(Object.entries(out[out.length - 1]!.state).map(([k, t]) => [k, Array.from(t.data)]));
}

/** Plan-time refusals a target may answer with: what it does not admit, never a wrong answer. */
const REFUSALS = ['CapabilityMissing', 'MissingContract', 'MissingBound', 'RegionLimit', 'NarrowingRange', 'IntegerToFloat'];
const TARGETS = ['cpu', 'xdna2', 'npu4', 'host'] as const;
const PROGRAMS = 20;

describe('engine: carried state gives the oracle\'s results on every target (property)', function () {
  this.timeout(120_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  before(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  after(async () => { await engine.close(); tmp.remove(); });

  it('host carries an intermediate: acc2 = acc + x, y = acc2 * 2, acc <- acc2 over 3 steps is the running sum', async () => {
    const program = {
      format: 'program@1', name: 'carry-intermediate',
      args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4] }, { name: 'acc', role: 'state', dtype: 'f32', shape: [4] }],
      eqns: [{ op: 'add', in: ['acc', 'x'], out: 'acc2' }, { op: 'mul', in: ['acc2', { lit: 2 }], out: 'y' }],
      results: ['y'], state: { acc: 'acc2' },
    };
    const inputs = {
      acc: { dtype: 'f32', shape: [4], data: [0, 0, 0, 0] },
      x: [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400]].map((data) => ({ dtype: 'f32', shape: [4], data })),
    };
    const r = await engine.submit({ program, target: 'host', inputs, verify: true }).result;
    expect(r.steps.map((s) => Array.from(s['y']!.data))).to.deep.equal([[2, 4, 6, 8], [22, 44, 66, 88], [222, 444, 666, 888]]);
    expect(Array.from(r.state['acc']!.data)).to.deep.equal([111, 222, 333, 444]);
    expect(r.verification?.pass).to.equal(true);
  });

  it(`${PROGRAMS} seeded programs with state: each target gives the oracle's results or refuses at plan time`, async () => {
    const ran: Record<string, number> = { cpu: 0, xdna2: 0, npu4: 0, host: 0 };
    let inner = 0;
    for (let seed = 1; seed <= PROGRAMS; seed++) {
      const g = generate(seed);
      if (Object.values(g.intermediate).some((b) => b)) inner++;
      const want = oracleState(g);
      for (const target of TARGETS) {
        const what = `seed ${seed} on ${target}: ${JSON.stringify(g.program.eqns)} state ${JSON.stringify(g.program.state)}`;
        let r;
        try {
          r = await engine.submit({ program: g.program, target, inputs: g.inputs, verify: true }).result;
        } catch (e) {
          expect(e, `${what}: ${String(e)}`).to.be.instanceOf(EngineError);
          expect(REFUSALS, `${what}: ${String(e)}`).to.include((e as EngineError).code);
          continue;
        }
        ran[target]!++;
        expect(r.verification?.pass, `${what}: ${JSON.stringify(r.verification?.firstFailure ?? null)}`).to.equal(true);
        for (const [s, w] of Object.entries(want)) {
          const got = Array.from(r.state[s]!.data);
          // The oracle's state within the narrowing targets' f16 precision (the bug above is off by a whole step's sum).
          got.forEach((v, i) => expect(Math.abs(v - w[i]!), `${what}: state ${s}[${i}] = ${v}, want ${w[i]}`).to.be.at.most(1e-2 * Math.abs(w[i]!) + 1e-2));
        }
      }
    }
    expect(inner, 'programs whose state is carried from an intermediate').to.be.at.least(5);
    for (const t of TARGETS) expect(ran[t], `programs that ran on ${t}`).to.be.at.least(5);
  });
});
