/** `npu-offload matrix --target T [--format md|json]`: what a target admits, from its admission table only. */
import { Option } from 'commander';
import { UsageError } from '../errors/index.js';
import { featureMatrix, matrixJson, matrixMarkdown } from '../planner/matrix.js';
import { resolveTarget } from '../targets/index.js';
import type { CliCommand } from './command.js';
import { targetOption } from './options.js';
import type { Io } from './output.js';
import { EXIT } from './output.js';

export interface MatrixOptions {
  readonly target: string;
  /** Markdown (the default) or JSON. */
  readonly format?: 'md' | 'json' | string;
}

/** Prints the feature matrix of one target; returns the exit code. */
export function matrixCommand(opts: MatrixOptions, io: Io): number {
  const format = opts.format ?? 'md';
  if (format !== 'md' && format !== 'json') throw new UsageError(`--format is md or json, not ${JSON.stringify(format)}`);
  const m = featureMatrix(resolveTarget(opts.target));
  io.out(format === 'md' ? matrixMarkdown(m) : matrixJson(m));
  return EXIT.ok;
}

/** `matrix --target T`; `--format json` is its `--json`. */
export const matrix: CliCommand = {
  register(cli, { io, action }) {
    cli.command('matrix')
      .description('the feature matrix of a target, generated from its admission table')
      .addOption(targetOption())
      .addOption(new Option('--format <format>', 'output format').choices(['md', 'json']).default('md'))
      .action(action((o: MatrixOptions) => matrixCommand(o, io)));
  },
};
