/**
 * `npu-offload gate MODEL [--target cpu]`: the model on its target against the fp64 reference, phase
 * by phase (src/model/qwen3/gate.ts), as a table of PASS/FAIL (or one JSON object); exit 0 only when
 * every phase passes, 1 otherwise.
 */
import { Option } from 'commander';
import { runGate } from '../model/qwen3/gate.js';
import type { CliCommand } from './command.js';
import { intArg, jsonOption } from './options.js';
import { EXIT, type Io } from './output.js';
import { modelOf, numberArg, withModelFlags, type ModelFlags } from './modelFlags.js';

/** The flags of `gate`. */
interface GateFlags extends ModelFlags {
  readonly steps?: number;
  readonly positions?: number;
  readonly minCosine?: number;
  readonly minDecodeTokS?: number;
  readonly json?: boolean;
}

/** Runs `gate`; returns the exit code. */
async function gateCommand(path: string, f: GateFlags, io: Io): Promise<number> {
  const model = await modelOf(path, f);
  try {
    let promptIds = f.promptIds;
    if (f.prompt !== undefined) promptIds = model.promptIds({ prompt: f.prompt });
    const report = await runGate(model, {
      ...(promptIds !== undefined ? { promptIds } : {}),
      ...(f.steps !== undefined ? { steps: f.steps } : {}),
      ...(f.positions !== undefined ? { positions: f.positions } : {}),
      ...(f.minCosine !== undefined ? { minCosine: f.minCosine } : {}),
      ...(f.minDecodeTokS !== undefined ? { minDecodeTokS: f.minDecodeTokS } : {}),
    });
    if (f.json) {
      io.out(JSON.stringify(report));
    } else {
      io.out(`gate of ${model.source.path} on ${report.target} (${report.promptTokens} prompt tokens)`);
      const w = Math.max(...report.phases.map((p) => p.phase.length));
      io.out(`${'phase'.padEnd(w)}  result  detail`);
      for (const p of report.phases) io.out(`${p.phase.padEnd(w)}  ${p.pass ? 'PASS' : 'FAIL'}    ${p.detail}`);
      io.out(report.pass ? 'gate: PASS' : 'gate: FAIL');
    }
    return report.pass ? EXIT.ok : EXIT.refused;
  } finally {
    await model.close();
  }
}

/** `npu-offload gate`. */
export const gate: CliCommand = {
  register(cli, { io, action }) {
    withModelFlags(cli.command('gate').description('check a Qwen3 on a target against the fp64 reference, phase by phase').argument('<model>', 'a GGUF file or a model directory'), 'cpu')
      .addOption(new Option('--steps <n>', 'tokens of the greedy and teacher-forced phases (default 8)').argParser(intArg('--steps')))
      .addOption(new Option('--positions <n>', 'positions of the build phase (default 64)').argParser(intArg('--positions')))
      .addOption(new Option('--min-cosine <x>', 'least logits cosine with the reference (default 0.9999)').argParser(numberArg('--min-cosine', -1)))
      .addOption(new Option('--min-decode-tok-s <x>', 'the speed floor, decoded tokens per second (default 0: none)').argParser(numberArg('--min-decode-tok-s', 0)))
      .addOption(jsonOption())
      .action(action((path: string, f: GateFlags) => gateCommand(path, f, io)));
  },
};
