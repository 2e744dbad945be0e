/** `npu-offload matrix --target T [--format md|json]`: what a target admits, from its admission table only. */
import { UsageError } from '../errors/index.js';
import { featureMatrix, matrixJson, matrixMarkdown } from '../planner/matrix.js';
import { resolveTarget } from '../targets/index.js';
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
