/**
 * The real link: where mlir-aie's `aiecc` (or `aiecc.py`) is on PATH and Peano is installed
 * (PEANO_INSTALL_DIR with bin/clang++), a region is built for real: its kernels compiled by Peano for
 * aie2p, its IRON design run to MLIR, and aiecc asked for the xclbin and the NPU instruction stream.
 * Without them the simulated link serves and the manifest says `linked: 'simulated'`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { VendorCompilerError } from '../../errors/index.js';
import { ensureDir } from '../../io/write.js';
import type { AieManifest } from './artifact.js';

/** Where the toolchain's programs are, when they all are. */
export interface Toolchain {
  readonly aiecc: string;
  readonly clang: string;
}

/** The toolchain found through `env` (PATH, PEANO_INSTALL_DIR), or undefined when any part is missing. */
export function findToolchain(env: NodeJS.ProcessEnv = process.env): Toolchain | undefined {
  const dirs = (env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  let aiecc: string | undefined;
  for (const d of dirs) {
    for (const name of ['aiecc', 'aiecc.py']) if (aiecc === undefined && existsSync(join(d, name))) aiecc = join(d, name);
  }
  const peano = env['PEANO_INSTALL_DIR'];
  const clang = peano ? join(peano, 'bin', 'clang++') : undefined;
  if (aiecc === undefined || clang === undefined || !existsSync(clang)) return undefined;
  return { aiecc, clang };
}

function run(cmd: string, args: readonly string[], cwd: string, what: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const log = `${what}: ${cmd} ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`;
  if (r.status !== 0) throw new VendorCompilerError(log);
  return r.stdout ?? '';
}

/** Builds the region with the real toolchain; VendorCompilerError carrying the tool's log when it refuses. */
export function linkWithAiecc(m: AieManifest, tc: Toolchain): { xclbin: string; insts: string } {
  const dir = mkdtempSync(join(tmpdir(), 'poot-aie-'));
  try {
    ensureDir(join(dir, 'kernels'));
    for (const [symbol, source] of Object.entries(m.kernels)) {
      const cc = join(dir, 'kernels', `${symbol}.cc`);
      writeFileSync(cc, source);
      run(tc.clang, ['-O2', '-std=c++20', '--target=aie2p-none-unknown-elf', '-c', cc, '-o', join(dir, `${symbol}.o`)], dir, `peano ${symbol}`);
    }
    writeFileSync(join(dir, 'design.py'), m.iron);
    writeFileSync(join(dir, 'aie.mlir'), run('python3', ['design.py'], dir, 'iron'));
    run(tc.aiecc, [
      '--no-xchesscc', '--no-xbridge', `--peano=${join(tc.clang, '..', '..')}`,
      '--aie-generate-xclbin', '--xclbin-name=final.xclbin',
      '--aie-generate-npu-insts', '--npu-insts-name=insts.bin', 'aie.mlir',
    ], dir, 'aiecc');
    return {
      xclbin: readFileSync(join(dir, 'final.xclbin')).toString('base64'),
      insts: readFileSync(join(dir, 'insts.bin')).toString('base64'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
