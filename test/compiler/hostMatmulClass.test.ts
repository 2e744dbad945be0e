/**
 * The host's matmul class as a compiler option (docs/HOST.md, "q8 activations"): the q8 class lowers a
 * matmul by a quantized weight to matmul_wq and every other op as the exact class does; the class is
 * part of the artifact's cache identity (the exact class's identity is the one without the option); the
 * engine option is checked typed; a model on host takes q8 unless told --exact-matmul.
 */
import { expect } from 'chai';
import { planJob } from '../../src/actors/plannerActor.js';
import { backendOf } from '../../src/compiler/index.js';
import { HOST_BACKEND } from '../../src/compiler/host/backend.js';
import { KERNEL_OPS } from '../../src/compiler/host/kernelList.js';
import { loadHostArtifact } from '../../src/compiler/host/backend.js';
import { InvalidOptions } from '../../src/errors/index.js';
import { programToJson } from '../../src/ir/codec.js';
import { checkEngineOptions } from '../../src/jobs/options.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { planProgram } from '../../src/planner/plan.js';
import { HOST_TARGET } from '../../src/targets/host/index.js';

/** The kernel ops of a compiled host artifact, by name. */
function opsOf(bytes: Uint8Array): string[] {
  const list = loadHostArtifact(bytes).lowered.list;
  const out: string[] = [];
  // Every record is [op, eqn, ...fields]; walk by the ops this test's program uses.
  const fields: Record<string, number> = { matmul_w: 4, matmul_wq: 4, matmul: 7, unary: 4, binary: 7 };
  for (let at = 0; at < list.length;) {
    const op = KERNEL_OPS[list[at]!]!;
    out.push(op);
    const n = fields[op];
    if (n === undefined) throw new Error(`the test does not know ${op}'s fields`);
    at += 2 + n;
  }
  return out;
}

function sample() {
  const p = program('mm');
  const x = p.activation('x', 'f32', [3, 64]);
  const w = p.weight('w', 'q4_0', [16, 64]);
  const v = p.weight('v', 'f32', [16, 8]);
  p.results(p.matmul(p.exp(p.matmul(x, w)), v));
  return checkProgram(p.build());
}

describe('host matmul class (compiler option)', () => {
  it('q8 lowers a matmul by a quantized weight to matmul_wq, and nothing else differs', () => {
    const checked = sample();
    const plan = planProgram(checked, HOST_TARGET);
    const exact = opsOf(HOST_BACKEND.compile(checked, plan, 0));
    const q8 = opsOf(backendOf('host', { hostMatmul: 'q8' }).compile(checked, plan, 0));
    expect(exact).to.include('matmul_w').and.not.include('matmul_wq');
    expect(q8).to.include('matmul_wq').and.not.include('matmul_w');
    expect(q8.map((o) => (o === 'matmul_wq' ? 'matmul_w' : o))).to.deep.equal(exact);
  });

  it('q4_k, q6_k and q4nx_q41 weights stay matmul_w in the q8 class (their unpack is not fast yet)', () => {
    for (const dtype of ['q4_k', 'q6_k', 'q4nx_q41'] as const) {
      const p = program('mm');
      p.results(p.matmul(p.activation('x', 'f32', [2, 256]), p.weight('w', dtype, [32, 256])));
      const checked = checkProgram(p.build());
      expect(opsOf(backendOf('host', { hostMatmul: 'q8' }).compile(checked, planProgram(checked, HOST_TARGET), 0)), dtype).to.deep.equal(['matmul_w']);
    }
  });

  it('the class is part of the cache identity; the exact class keeps the identity without the option', async () => {
    const json = programToJson(sample().program);
    const none = (await planJob(json, 'host')).units[0]!;
    const exact = (await planJob(json, 'host', undefined, { hostMatmul: 'exact' })).units[0]!;
    const q8 = (await planJob(json, 'host', undefined, { hostMatmul: 'q8' })).units[0]!;
    expect(exact.key).to.equal(none.key);
    expect(q8.key).to.not.equal(none.key);
    expect(q8.identity.options).to.deep.equal({ matmul: 'q8' });
    // Another target ignores the host's option.
    expect((await planJob(json, 'cpu', undefined, { hostMatmul: 'q8' })).units[0]!.key).to.equal((await planJob(json, 'cpu')).units[0]!.key);
  });

  it('devices.host.matmul is checked: exact or q8, on the host device only', () => {
    expect(() => checkEngineOptions({ devices: { host: { matmul: 'q8' } } })).to.not.throw();
    expect(() => checkEngineOptions({ devices: { host: { matmul: 'fast' } } })).to.throw(InvalidOptions, /one of exact, q8, not "fast"/);
    expect(() => checkEngineOptions({ devices: { xdna2: { matmul: 'q8' } } })).to.throw(InvalidOptions, /only the host device/);
  });
});
