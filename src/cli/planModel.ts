/**
 * `plan MODEL --target T`: a model (a GGUF file or a model directory) stands for one of its Qwen3
 * programs, built as loadModel builds it for that target (in the form the target plans best): the
 * decode program, or with `--tokens N` the prefill program of N tokens, at `--ctx` positions.
 */
import { existsSync, statSync } from 'node:fs';
import { UsageError } from '../errors/index.js';
import type { Program } from '../ir/types.js';
import { hasGgufMagic } from '../model/gguf/reader.js';
import { programFor } from '../model/qwen3/forms.js';
import { openModelSource } from '../model/qwen3/source.js';

/** The model flags of `plan`. */
export interface PlanModelFlags {
  readonly tokens?: number;
  readonly ctx?: number;
}

/** True when `path` names a model rather than a program file. */
export function isModelPath(path: string): boolean {
  if (!existsSync(path)) return false;
  const st = statSync(path);
  return st.isDirectory() || (st.isFile() && hasGgufMagic(path));
}

/** The program of the model at `path` that `plan` plans on `targets`; see the file's doc. */
export function modelProgram(path: string, targets: string, f: PlanModelFlags): Program {
  const source = openModelSource(path);
  const ctx = f.ctx ?? Math.min(1024, source.config.contextLength);
  const tokens = f.tokens ?? 1;
  if (tokens > ctx) throw new UsageError(`--tokens ${tokens} is more than the --ctx ${ctx} positions`);
  return programFor(source.config, source.weights, { tokens, ctx }, targets).program;
}

/** Refuses the model flags beside a program file. */
export function checkProgramFlags(f: PlanModelFlags): void {
  if (f.tokens !== undefined || f.ctx !== undefined) throw new UsageError('--tokens and --ctx are for a model (a GGUF file or a model directory), not a program file');
}
