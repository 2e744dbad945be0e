import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HOST_CONTRACT_OPS, runHostContracts } from '../../src/contracts/host.js';
import type { HostContractReport } from '../../src/contracts/host.js';
import { withKernelFault } from '../../src/contracts/faultyDevice.js';
import { HostDevice } from '../../src/devices/host/device.js';
import { loadHostKernels } from '../../src/devices/host/native.js';
import { HOST_ADMISSION } from '../../src/targets/host/index.js';
import { QUANT_DTYPES } from '../../src/ir/types.js';

const BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

function hostBuilt(): boolean {
  try { loadHostKernels(); return true; } catch { return false; }
}

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 50_000, killSignal: 'SIGKILL' }, (error, stdout) => {
      const e = error as (Error & { code?: number | string }) | null;
      resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : null, stdout });
    });
  });
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
    expect(byOp(reports, 'row_kernel').programs).to.deep.equal(['row_kernel rmsnorm', 'row_kernel softmax']);
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
    const again = await runHostContracts({ target: 'host', op: 'matmul', bulk: 1024 });
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

  it('the CLI refuses an op host does not verify, with a usage error', async () => {
    const r = await cli(['contracts', '--target', 'host', '--op', 'all_reduce']);
    expect(r.code).to.equal(2);
  });
});
