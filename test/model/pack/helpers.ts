/** Shared by the pack tests: a temp workspace with a tokenizer, tiny GGUFs on disk, and the CLI run through commander. */
import { Command } from 'commander';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerGgufCommands, type GgufWrap } from '../../../src/cli/gguf.js';
import { reportError, type Io } from '../../../src/cli/output.js';
import type { QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import type { GgufValue } from '../../../src/model/gguf/types.js';
import { writeGguf } from '../../../src/model/gguf/writer.js';
import { quantize } from '../../../src/model/gguf/quantize.js';
import { tinyQwen3Metadata, tinyQwen3Tensors, type TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import { tinyGgufBytes } from '../tinyGguf.js';

/** Captured output lines. */
export type Captured = Io & { outs: string[]; errs: string[] };

/** An Io that keeps every line. */
export function capture(): Captured {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l) => outs.push(l), err: (l) => errs.push(l) };
}

/** A temp directory with tokenizer/tokenizer.json, removed by remove(). */
export class Workspace {
  readonly dir = mkdtempSync(join(tmpdir(), 'npuo-pack-'));
  readonly tokenizer = join(this.dir, 'tokenizer');
  constructor() {
    mkdirSync(this.tokenizer);
    writeFileSync(join(this.tokenizer, 'tokenizer.json'), '{"version":"1.0","model":{"type":"BPE"}}\n');
  }
  path(name: string): string { return join(this.dir, name); }
  /** Writes a tiny Qwen3 GGUF and returns its path. */
  tiny(name: string, opts: TinyQwen3Options = {}): string {
    const p = this.path(name);
    writeFileSync(p, tinyGgufBytes({ layers: 1, ...opts }));
    return p;
  }
  /** Writes a tiny Qwen3 GGUF with extra metadata keys and returns its path. */
  tinyWith(name: string, extra: Readonly<Record<string, GgufValue>>, type: QuantType = 'Q4_K'): string {
    const opts = { layers: 1, type };
    const metadata = tinyQwen3Metadata(opts);
    for (const [k, v] of Object.entries(extra)) metadata.set(k, v);
    const tensors = tinyQwen3Tensors(opts).map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: quantize(t.type, t.values) }));
    const p = this.path(name);
    writeFileSync(p, writeGguf({ metadata, tensors }));
    return p;
  }
  /** Names in the workspace directory. */
  list(): string[] { return readdirSync(this.dir).sort(); }
  remove(): void { rmSync(this.dir, { recursive: true, force: true }); }
}

/** Runs `npu-offload gguf <args>` through commander; resolves to the exit code. */
export async function runGguf(io: Io, args: string[]): Promise<number> {
  let code = -1;
  const wrap: GgufWrap = (json, fn) => async (...a) => {
    try { code = await fn(...a); } catch (e) { code = reportError(e, io, json(...a)); }
  };
  const cli = new Command('npu-offload').exitOverride();
  registerGgufCommands(cli.command('gguf'), io, wrap);
  await cli.parseAsync(['gguf', ...args], { from: 'user' });
  return code;
}
