/**
 * `npu-offload generate MODEL`: text from a Qwen3 (a GGUF or a model directory) run through the engine.
 * Without --json the text streams to stdout as it is made and a summary goes to stderr; with --json one
 * object: `{ ids, text, prompt_tokens, finish_reason, timings: { prefill_tok_s, decode_tok_s } }`, and
 * with --logits each generated step's logits as f32 wire tensors (`logits: [...]`). On a terminal a
 * line on stderr shows the model loading (the programs compiled, the weights loaded and the prompt's
 * prefill, all before the first token) until the first token comes (src/cli/progress.ts).
 */
import { Option } from 'commander';
import { encodeTensor } from '../ir/tensorCodec.js';
import type { CliCommand } from './command.js';
import { intArg, jsonOption } from './options.js';
import { EXIT, type Io } from './output.js';
import { modelOf, numberArg, promptOf, withModelFlags, type ModelFlags } from './modelFlags.js';
import { createProgress } from './progress.js';

/** The flags of `generate`. */
interface GenerateFlags extends ModelFlags {
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topK?: number;
  readonly topP?: number;
  readonly seed?: number;
  readonly repetitionPenalty?: number;
  readonly stop?: string[];
  readonly json?: boolean;
  readonly logits?: boolean;
}

/** Runs `generate`; returns the exit code. */
async function generateCommand(path: string, f: GenerateFlags, io: Io): Promise<number> {
  const request = {
    ...promptOf(f),
    ...(f.maxTokens !== undefined ? { maxTokens: f.maxTokens } : {}),
    ...(f.temperature !== undefined ? { temperature: f.temperature } : {}),
    ...(f.topK !== undefined ? { topK: f.topK } : {}),
    ...(f.topP !== undefined ? { topP: f.topP } : {}),
    ...(f.seed !== undefined ? { seed: f.seed } : {}),
    ...(f.repetitionPenalty !== undefined ? { repetitionPenalty: f.repetitionPenalty } : {}),
    ...(f.stop !== undefined ? { stop: f.stop } : {}),
    logits: f.logits === true,
  };
  // The reference computes in float64 on one core: minutes a token for a real model, so say so.
  if (f.target === 'cpu') io.err('--target cpu is the float64 reference: exact but slow (minutes per token for a real model); --target host (the default) is the fast CPU target');
  // No count of work is known before the first step ends: the bar stands still and the time runs.
  const loading = createProgress(`loading the model on ${f.target}: compiling, loading the weights, prefill {bar} | {duration_formatted}`, { clear: true, ...(f.json === undefined ? {} : { json: f.json }) });
  loading.update(0, 1);
  let model;
  try {
    model = await modelOf(path, f);
  } catch (e) {
    loading.stop();
    throw e;
  }
  try {
    const it = model.generate(request);
    let streamed = '';
    for (;;) {
      const n = await it.next();
      loading.stop();
      if (n.done === true) {
        const r = n.value;
        const rest = r.text.slice(streamed.length);
        const t = r.timings;
        if (f.json) {
          io.out(JSON.stringify({
            ids: r.ids, text: r.text, prompt_tokens: r.promptTokens, finish_reason: r.finishReason,
            timings: { prefill_tok_s: t.prefillTokS, decode_tok_s: t.decodeTokS },
            ran_on: r.ranOn,
            ...(r.logits ? { logits: r.logits.map((l) => encodeTensor({ ...l, dtype: 'f32' }, 'b64')) } : {}),
          }));
        } else {
          if (io.write) io.write(`${rest}\n`);
          else io.out(r.text);
          // A phase on a prefill target or a simulator is said where it ran (a simulated result is labelled so).
          const where = r.ranOn.filter((p) => p.phase === 'prefill' || p.simulated)
            .map((p) => `; ${p.phase} on ${p.target}: ${p.devices.join(', ')}${p.simulated ? ' (simulated)' : ''}, ${p.numerics}`).join('');
          io.err(`[${r.promptTokens} prompt tokens, ${r.ids.length} generated (${r.finishReason}); prefill ${t.prefillTokS.toFixed(1)} tok/s, decode ${t.decodeTokS.toFixed(1)} tok/s on ${model.runner.name}${where}]`);
        }
        return EXIT.ok;
      }
      if (!f.json && io.write && n.value.text !== '') {
        io.write(n.value.text);
        streamed += n.value.text;
      }
    }
  } finally {
    loading.stop();
    await model.close();
  }
}

/** `npu-offload generate`. */
export const generate: CliCommand = {
  register(cli, { io, action }) {
    withModelFlags(cli.command('generate').description('generate text with a Qwen3 (a GGUF or a model directory) through the engine').argument('<model>', 'a GGUF file or a model directory'), 'host')
      .addOption(new Option('--max-tokens <n>', 'most tokens to generate (default 128)').argParser(intArg('--max-tokens')))
      .addOption(new Option('--temperature <t>', '0 (default) is greedy; above 0 samples').argParser(numberArg('--temperature', 0)))
      .addOption(new Option('--top-k <k>', 'sample among the k most likely (0: all)').argParser(intArg('--top-k')))
      .addOption(new Option('--top-p <p>', 'sample among the most likely up to probability p').argParser(numberArg('--top-p', 0)))
      .addOption(new Option('--seed <n>', 'seed of the sampling (default 0)').argParser(intArg('--seed')))
      .addOption(new Option('--repetition-penalty <x>', 'penalty on the last 64 ids (default 1.1; 1 is plain greedy)').argParser(numberArg('--repetition-penalty', 0)))
      .addOption(new Option('--stop <text...>', 'stop strings (the text ends before the first one met)'))
      .addOption(new Option('--logits', 'with --json: each generated step\'s logits as f32 wire tensors'))
      .addOption(jsonOption())
      .action(action((path: string, f: GenerateFlags) => generateCommand(path, f, io)));
  },
};
