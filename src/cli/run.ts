/**
 * `npu-offload run PROGRAM.json --target T --inputs INPUTS.json [--steps N] [--verify] [--json]`:
 * one job through the engine. `--json` prints `{ "results": {...}, "state": {...} }` with `b64`
 * tensors (and `steps` when there is more than one, `verification` with --verify). Steps stream: the
 * text form prints each as it ends; `steps` holds the last 1000 (with `stepCount` and `firstStep` when
 * there were more), so neither form holds every step of a long run in memory.
 */
import { Option } from 'commander';
import type { DeviceMode } from '../actors/deviceActor.js';
import type { JobResult } from '../jobs/job.js';
import { UsageError } from '../errors/index.js';
import { encodeTensor } from '../ir/tensorCodec.js';
import type { TensorMap } from '../oracle/types.js';
import { readInputs, readProgram } from './files.js';
import { resolveLimits } from '../ir/limits.js';
import { limitsOfFlags, type LimitFlags } from './limits.js';
import type { CliCommand } from './command.js';
import { cacheDirOption, intOption, jsonOption, redisUrlOption, targetOption, withLimitFlags } from './options.js';
import type { Io } from './output.js';
import { EXIT, formatTensor } from './output.js';
import { programToJson } from '../ir/codec.js';

interface RunOptions extends LimitFlags {
  readonly target: string;
  readonly inputs?: string;
  readonly steps?: number;
  readonly verify?: boolean;
  readonly json?: boolean;
  readonly cacheDir?: string;
  /** A shared cache tier behind the local one, `redis://host:port/db`. */
  readonly remoteCache?: string;
  readonly deadlineMs?: number;
  /** Which device serves an NPU target: the hardware, its simulator, or the hardware when present. */
  readonly device?: DeviceMode;
}

function wireMap(m: TensorMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, t] of Object.entries(m)) out[k] = encodeTensor(t, 'b64');
  return out;
}

/** The `--json` document of a finished job. */
function resultJson(r: JobResult): Record<string, unknown> {
  return {
    results: wireMap(r.results),
    state: wireMap(r.state),
    ...(r.stepCount > 1 ? { steps: r.steps.map(wireMap) } : {}),
    ...(r.stepCount > r.steps.length ? { stepCount: r.stepCount, firstStep: r.stepCount - r.steps.length } : {}),
    ...(r.verification ? {
      verification: {
        numericsClass: r.verification.numericsClass,
        pass: r.verification.pass,
        steps: r.verification.steps,
        ...(r.verification.firstFailure ? { firstFailure: r.verification.firstFailure } : {}),
      },
    } : {}),
  };
}

/** Runs one program; a refusal is thrown as its typed error. */
async function runCommand(file: string, opts: RunOptions, io: Io): Promise<number> {
  if (opts.steps !== undefined && !(Number.isInteger(opts.steps) && opts.steps >= 1)) {
    throw new UsageError(`--steps must be a whole number of at least 1, got ${String(opts.steps)}`);
  }
  if (opts.deadlineMs !== undefined && !(opts.deadlineMs > 0)) {
    throw new UsageError(`--deadline-ms must be at least 1, got ${String(opts.deadlineMs)}`);
  }
  const limits = limitsOfFlags(opts);
  const program = programToJson(readProgram(file, resolveLimits(limits)));
  const inputs = opts.inputs !== undefined ? readInputs(opts.inputs) : {};
  // The engine (and its ~120 modules) is loaded once the program and inputs have been read: a refused
  // file costs no more than reading it.
  const { createEngine } = await import('../jobs/engine.js');
  const engine = createEngine({
    limits,
    ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.remoteCache !== undefined ? { remoteCache: opts.remoteCache, onWarning: (m: string) => io.err(`warning: ${m}`) } : {}),
    ...(opts.device !== undefined ? { devices: { xdna2: { mode: opts.device }, npu4: { mode: opts.device } } } : {}),
  });
  try {
    const job = engine.submit({
      program, target: opts.target, inputs,
      ...(opts.steps !== undefined ? { steps: opts.steps } : {}),
      ...(opts.verify ? { verify: true } : {}),
      ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
    });
    if (!opts.json) {
      job.on('step', (s) => {
        for (const [k, t] of Object.entries(s.results)) io.out(`step ${s.index}: ${k} = ${formatTensor(t)}`);
      });
    }
    const r = await job.result;
    if (opts.json) io.out(JSON.stringify(resultJson(r)));
    else {
      io.out(`ran on ${r.target}${r.simulated ? ' (simulated)' : ''}, ${r.stepCount} step${r.stepCount === 1 ? '' : 's'}, ${r.cacheHit ? 'cache hit' : 'compiled'}`);
      for (const [k, t] of Object.entries(r.state)) io.out(`state ${k} = ${formatTensor(t)}`);
      if (r.verification) {
        const f = r.verification.firstFailure;
        const why = f ? ` at step ${f.step}, ${f.result}: ${f.comparison.reason ?? 'differs from the oracle'}` : '';
        io.out(`verified against the oracle (${r.verification.numericsClass}): ${r.verification.pass ? 'pass' : `FAIL${why}`}`);
      }
    }
    return r.verification && !r.verification.pass ? EXIT.refused : EXIT.ok;
  } finally {
    await engine.close();
  }
}

/** `run PROGRAM --target T`. */
export const run: CliCommand = {
  register(cli, { io, action }) {
    withLimitFlags(cli.command('run'))
      .description('run a program on a target')
      .argument('<program>', 'program JSON file')
      .addOption(targetOption())
      .option('--inputs <file>', 'inputs file: arg names to tensors (activations: one tensor, or an array of one per step)')
      .addOption(intOption('--steps <n>', 'number of steps'))
      .option('--verify', 'compare every result with the CPU oracle under the numerics class')
      .addOption(intOption('--deadline-ms <ms>', 'deadline of each replay'))
      .addOption(new Option('--device <mode>', 'for an NPU target: the hardware, its simulator, or the hardware when present').choices(['auto', 'native', 'simulated']))
      .addOption(cacheDirOption())
      .addOption(redisUrlOption('--remote-cache <url>', 'a shared cache tier behind the local one, redis://host:port/db'))
      .addOption(jsonOption('machine-readable output: { "results": {...}, "state": {...} } with b64 tensors'))
      .action(action((f: string, o: RunOptions) => runCommand(f, o, io)));
  },
};
