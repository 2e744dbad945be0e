import { expect } from 'chai';
import { HOST_Q8_WEIGHTS } from '../../src/compiler/host/kernelList.js';
import { HOST_CONTRACT_OPS, runHostContracts } from '../../src/contracts/host.js';
import type { HostContractReport } from '../../src/contracts/host.js';
import { withKernelFault } from '../../src/contracts/faultyDevice.js';
import { HostDevice } from '../../src/devices/host/device.js';
import { loadHostKernels } from '../../src/devices/host/native.js';
import { HOST_ADMISSION } from '../../src/targets/host/index.js';
import { QUANT_DTYPES } from '../../src/ir/types.js';
import { cliHere } from '../cli/inProcess.js';

function hostBuilt(): boolean {
  try { loadHostKernels(); return true; } catch { return false; }
}

/** The CLI in this process (see test/cli/inProcess.ts): a process of its own cost more than the command. */
async function cli(args: readonly string[]): Promise<{ code: number; stdout: string }> {
  const r = await cliHere(args, { boundMs: 50_000 });
  return { code: r.status, stdout: r.out };
}

const byOp = (rs: readonly HostContractReport[], op: string) => rs.find((r) => r.op === op)!;

describe('host contracts: every admitted op on the native kernels against the oracle', function () {
  this.timeout(60_000);
  let reports: HostContractReport[];
  before(async function () {
    if (!hostBuilt()) this.skip();
    reports = await runHostContracts({ target: 'host', bulk: 4096 });
  });

  it('covers exactly the ops the host target admits', () => {
    const admitted = Object.keys(HOST_ADMISSION).filter((op) => op !== 'all_reduce').sort();
    expect([...HOST_CONTRACT_OPS].sort()).to.deep.equal(admitted);
    expect(reports.map((r) => r.op)).to.deep.equal([...HOST_CONTRACT_OPS]);
    expect(byOp(reports, 'matmul').programs).to.include.members(['matmul f32', 'matmul q4_0', 'matmul q8_0', 'matmul q4_k', 'matmul q6_k', 'matmul q4nx_q41', 'matmul q4_1']);
    expect(byOp(reports, 'row_kernel').programs).to.deep.equal(['row_kernel rmsnorm', 'row_kernel softmax', 'row_kernel attention decode', 'row_kernel attention prefill', 'row_kernel attention bias', 'row_kernel rmsnorm f16', 'row_kernel rmsnorm bf16', 'row_kernel i32']);
  });

  it('every op passes, each with elements in its domain', () => {
    for (const r of reports) {
      expect(r.pass, `${r.op}: ${JSON.stringify(r.firstFailure)}`).to.equal(true);
      expect(r.inDomain, r.op).to.be.greaterThan(0);
    }
  });

  it('the bounds are exercised: matmul and the sums differ from the oracle, within their bounds', () => {
    for (const op of ['matmul', 'reduce_sum', 'row_kernel']) {
      const w = byOp(reports, op).worst;
      expect(w, op).to.not.equal(null);
      expect(w!.error, op).to.be.greaterThan(0);
      expect(w!.ratio, op).to.be.lessThanOrEqual(1);
    }
  });

  it('negative control: an exp kernel off by 3 ulps in the addon fails, and passes again once reset', async () => {
    const k = loadHostKernels();
    k.setUnaryFault('exp', 3);
    let faulted: HostContractReport[];
    try {
      faulted = await runHostContracts({ target: 'host', op: 'exp', bulk: 2048 });
    } finally {
      k.setUnaryFault(null);
    }
    expect(faulted[0]!.pass).to.equal(false);
    expect(faulted[0]!.failures).to.be.greaterThan(1000);
    const f = faulted[0]!.firstFailure!;
    expect(f.got).to.be.greaterThan(f.want);
    const again = await runHostContracts({ target: 'host', op: 'exp', bulk: 2048 });
    expect(again[0]!.pass).to.equal(true);
  });

  it('negative control: a tanh (scalar path) off by 2 ulps fails: the 1-ulp bound is tight enough to notice', async () => {
    const k = loadHostKernels();
    k.setUnaryFault('tanh', 2);
    try {
      const r = await runHostContracts({ target: 'host', op: 'tanh', bulk: 2048 });
      expect(r[0]!.pass).to.equal(false);
    } finally {
      k.setUnaryFault(null);
    }
  });

  it('negative control: a matmul that drops one block of each weight row in the addon fails for every quantized dtype, and passes once reset', async () => {
    const k = loadHostKernels();
    k.setDropBlockFault(true);
    let faulted: HostContractReport[];
    try {
      faulted = await runHostContracts({ target: 'host', op: 'matmul', bulk: 1024 });
    } finally {
      k.setDropBlockFault(false);
    }
    expect(faulted[0]!.pass).to.equal(false);
    for (const dtype of QUANT_DTYPES) expect(faulted[0]!.programFailures[`matmul ${dtype}`], dtype).to.be.greaterThan(10);
    // The q8-activations class's programs (matmul_wq) drop the block too, and fail their own bound.
    for (const dtype of HOST_Q8_WEIGHTS) expect(faulted[0]!.programFailures[`matmul q8 ${dtype}`], `q8 ${dtype}`).to.be.greaterThan(10);
    const again = await runHostContracts({ target: 'host', op: 'matmul', bulk: 1024 });
    expect(again[0]!.pass).to.equal(true);
  });

  it('negative control: q8 activation codes one step off the nearest fail the q8 class\'s bound for every quantized dtype, and only there', async () => {
    const k = loadHostKernels();
    k.setQ8RoundFault(true);
    let faulted: HostContractReport[];
    try {
      faulted = await runHostContracts({ target: 'host', op: 'matmul', bulk: 1024 });
    } finally {
      k.setQ8RoundFault(false);
    }
    expect(faulted[0]!.pass).to.equal(false);
    for (const dtype of HOST_Q8_WEIGHTS) expect(faulted[0]!.programFailures[`matmul q8 ${dtype}`], `q8 ${dtype}`).to.be.greaterThan(10);
    for (const dtype of QUANT_DTYPES) expect(faulted[0]!.programFailures[`matmul ${dtype}`], `exact ${dtype}`).to.equal(0);
  });

  it('negative control: a fused attention that drops the last visible key position, or uses 1.0625 times the scale, fails; reset, it passes', async () => {
    const k = loadHostKernels();
    for (const fault of ['drop-last', 'scale'] as const) {
      k.setAttentionFault(fault);
      let faulted: HostContractReport[];
      try {
        faulted = await runHostContracts({ target: 'host', op: 'row_kernel', bulk: 1024 });
      } finally {
        k.setAttentionFault(null);
      }
      expect(faulted[0]!.pass, fault).to.equal(false);
      for (const v of ['decode', 'prefill', 'bias']) expect(faulted[0]!.programFailures[`row_kernel attention ${v}`], `${fault} ${v}`).to.be.greaterThan(10);
      expect(faulted[0]!.programFailures['row_kernel softmax'], fault).to.equal(0);
    }
    const again = await runHostContracts({ target: 'host', op: 'row_kernel', bulk: 1024 });
    expect(again[0]!.pass).to.equal(true);
  });

  it('negative control through a device wrapper: a q4_0 matmul scaled by 1 - 2^-10 fails the dot-product bound', async () => {
    const device = () => withKernelFault(new HostDevice(), { graph: 'host-contract-matmul-q4_0', fault: (x) => Math.fround(x * (1 - 2 ** -10)) });
    const r = await runHostContracts({ target: 'host', op: 'matmul', bulk: 1024, device });
    expect(r[0]!.pass).to.equal(false);
    expect(r[0]!.firstFailure!.program).to.equal('matmul q4_0');
  });

  it('the CLI: --json, --op, exit 0 when every op passes', async () => {
    const r = await cli(['contracts', '--target', 'host', '--op', 'sin', '--bulk', '1000', '--json']);
    expect(r.code).to.equal(0);
    const j = JSON.parse(r.stdout) as { target: string; pass: boolean; reports: HostContractReport[] };
    expect(j.target).to.equal('host');
    expect(j.pass).to.equal(true);
    expect(j.reports.map((x) => x.op)).to.deep.equal(['sin']);
  });

  it('sweeps the typed kernels: every elementwise op in f16 and bf16, reductions off the last axis, matmul in f16, bf16 and i32, gather on every axis', () => {
    for (const op of ['add', 'div', 'ge', 'exp', 'sqrt', 'cos']) expect(byOp(reports, op).programs, op).to.include.members([`${op} f16`, `${op} bf16`]);
    expect(byOp(reports, 'neg').programs).to.include.members(['neg f16', 'neg bf16', 'neg i32']);
    expect(byOp(reports, 'reduce_sum').programs).to.include.members(['reduce_sum f32 axes 0', 'reduce_sum f32 axes 0,2', 'reduce_sum f16 axes 0', 'reduce_sum bf16 axes 0,2', 'reduce_sum i32 axes 0']);
    expect(byOp(reports, 'reduce_max').programs).to.include.members(['reduce_max f16 axes 0,2', 'reduce_max i32 axes 0']);
    expect(byOp(reports, 'matmul').programs).to.include.members(['matmul f16', 'matmul bf16', 'matmul i32']);
    expect(byOp(reports, 'gather').programs).to.include.members(['gather f32 axis 1', 'gather f16 axis 2', 'gather i32 axis 0']);
    expect(byOp(reports, 'iota').programs).to.include.members(['iota f16', 'iota bf16']);
  });

  it('negative control: the typed exp off by 3 ulps of f16 and bf16 fails in both dtypes', async () => {
    const k = loadHostKernels();
    k.setUnaryFault('exp', 3);
    let r: HostContractReport[];
    try {
      r = await runHostContracts({ target: 'host', op: 'exp', bulk: 2048 });
    } finally {
      k.setUnaryFault(null);
    }
    expect(r[0]!.programFailures['exp f16']).to.be.greaterThan(100);
    expect(r[0]!.programFailures['exp bf16']).to.be.greaterThan(100);
  });

  it('negative control through a device wrapper: an f16 add and row kernel a few ulps off, a bf16 matmul and a sum over the first axis scaled fail', async () => {
    // A few ulps of the result's dtype: 2^-9 of an f16, 2^-5 of a bf16 (2^-10 of an f32 sum is far past γ(16)).
    const by = (rel: number) => (x: number) => (Number.isFinite(x) && x !== 0 ? x * (1 + rel) : x);
    for (const [op, graph, program] of [
      ['add', 'host-contract-add-f16', 'add f16'],
      ['matmul', 'host-contract-matmul-bf16', 'matmul bf16'],
      ['reduce_sum', 'host-contract-reduce_sum-f16-0', 'reduce_sum f16 axes 0'],
      ['reduce_sum', 'host-contract-reduce_sum-f32-0', 'reduce_sum f32 axes 0'],
      ['row_kernel', 'host-contract-row_kernel-rmsnorm-f16', 'row_kernel rmsnorm f16'],
    ] as const) {
      const device = () => withKernelFault(new HostDevice(), { graph, fault: by(program.includes('bf16') ? 2 ** -5 : program.includes('f32') ? 2 ** -10 : 2 ** -9) });
      const r = await runHostContracts({ target: 'host', op, bulk: 1024, device });
      expect(r[0]!.pass, program).to.equal(false);
      expect(r[0]!.programFailures[program], program).to.be.greaterThan(0);
      expect(r[0]!.firstFailure!.program, program).to.equal(program);
    }
  });

  it('the CLI refuses an op host does not verify, with a usage error', async () => {
    const r = await cli(['contracts', '--target', 'host', '--op', 'all_reduce']);
    expect(r.code).to.equal(2);
  });
});
