/**
 * `npu-offload score MODEL --ids a,b,c`: teacher-forced scoring (src/model/qwen3/score.ts). With --json
 * exactly `{ "logits": [[...], ...], "logprobs": [...], "perplexity": x }`: one row of next-token logits
 * per input position, the log-probability of each id after the first given the ids before it, and
 * exp(-mean(logprobs)). `--text FILE` scores a text's tokens in windows of --ctx as llama-perplexity
 * does (`{ "logprobs", "perplexity", "tokens", "windows", "window" }` with --json). Without --json a
 * short summary.
 */
import { InvalidArgumentError, Option } from 'commander';
import { InvalidOptions } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';
import { scoreIds, scoreText } from '../model/qwen3/score.js';
import { TARGET_NAMES } from '../targets/target.js';
import type { CliCommand } from './command.js';
import { threadsArg } from './limits.js';
import { maxProgramBytesOption, modelOf, type ModelFlags } from './modelFlags.js';
import { intArg, jsonOption } from './options.js';
import { EXIT, type Io } from './output.js';

/** The flags of `score`. */
interface ScoreFlags extends Omit<ModelFlags, 'prompt' | 'promptIds' | 'chat' | 'thinking'> {
  readonly ids?: string;
  readonly text?: string;
  readonly json?: boolean;
}

/** `1,2,3` as whole numbers; anything else is a usage error naming --ids (the model checks the range). */
function scoreIdsArg(v: string): string {
  const parts = v.split(',').map((s) => s.trim());
  const bad = parts.find((s) => !/^-?\d{1,15}$/.test(s));
  if (bad !== undefined) throw new InvalidArgumentError(`--ids takes whole token ids separated by commas (1,2,3): ${JSON.stringify(bad)} is not one`);
  return v;
}

/** Runs `score`; returns the exit code. */
async function scoreCommand(path: string, f: ScoreFlags, io: Io): Promise<number> {
  if ((f.ids === undefined) === (f.text === undefined)) throw new InvalidOptions('--ids', 'give exactly one of --ids and --text');
  const ids = f.ids?.split(',').map((s) => Number(s.trim()));
  // Read before the model loads, so a missing file costs no load.
  const text = f.text === undefined ? undefined : readRegularFile(f.text, { what: '--text' }).toString('utf8');
  const model = await modelOf(path, f);
  try {
    if (ids !== undefined) {
      const r = await scoreIds(model, ids, '--ids');
      if (f.json) io.out(JSON.stringify({ logits: r.logits.map((row) => Array.from(row)), logprobs: r.logprobs, perplexity: r.perplexity }));
      else {
        const mean = r.logprobs.reduce((s, x) => s + x, 0) / r.logprobs.length;
        io.out(`${ids.length} ids, ${r.logprobs.length} scored: perplexity ${r.perplexity.toFixed(4)}, mean log-probability ${mean.toFixed(4)} (${model.runner.name})`);
      }
    } else {
      const r = await scoreText(model, text!, model.ctx, '--text');
      if (f.json) io.out(JSON.stringify({ logprobs: r.logprobs, perplexity: r.perplexity, tokens: r.tokens, windows: r.windows, window: r.window }));
      else io.out(`${r.tokens} tokens in ${r.windows} windows of ${r.window}, ${r.logprobs.length} scored (the second half of each): perplexity ${r.perplexity.toFixed(4)} (${model.runner.name})`);
    }
    return EXIT.ok;
  } finally {
    await model.close();
  }
}

/** `npu-offload score`. */
export const score: CliCommand = {
  register(cli, { io, action }) {
    cli.command('score').description('teacher-forced scoring: each position\'s next-token logits, each next id\'s log-probability and the perplexity').argument('<model>', 'a GGUF file or a model directory')
      .addOption(new Option('--ids <ids>', 'the ids to score, 1,2,3 (at least 2, at most --ctx)').argParser(scoreIdsArg))
      .addOption(new Option('--text <file>', 'score a text\'s tokens in windows of --ctx, the second half of each, as llama-perplexity does'))
      .addOption(new Option('--target <target>', 'where the programs run (cpu: the float64 reference, slow; host: the fast CPU target)').choices([...TARGET_NAMES]).default('host'))
      .addOption(new Option('--ctx <n>', 'positions the KV cache holds (default 1024, at most the model\'s context); with --text, the window').argParser(intArg('--ctx')))
      .addOption(new Option('--threads <n>', 'threads of a target that takes a count (host)').argParser(threadsArg('--threads')))
      .addOption(new Option('--exact-matmul', 'host: matmuls by quantized weights with f32 activations (the exact class)'))
      .addOption(new Option('--cache-type <type>', 'the KV cache\'s dtype: f32 or f16').choices(['f32', 'f16']).default('f32'))
      .addOption(maxProgramBytesOption())
      .addOption(new Option('--cache-dir <dir>', 'blob cache directory'))
      .addOption(jsonOption())
      .action(action((path: string, f: ScoreFlags) => scoreCommand(path, f, io)));
  },
};
