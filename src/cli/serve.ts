/**
 * `npu-offload serve [MODEL]`: the OpenAI-compatible server (src/serve/) over a GGUF file or a model
 * directory, or with --demo the built-in demo model (random weights, Qwen3's tokenizer). It prints the
 * URL and a curl line, and on SIGINT or SIGTERM stops taking requests, lets the running one finish,
 * and exits 0.
 */
import { InvalidArgumentError, Option } from 'commander';
import { messageOf, UsageError } from '../errors/index.js';
import { createEngine } from '../jobs/engine.js';
import { Registry, loadAddon } from '../serve/addons.js';
import { demoModel } from '../serve/demo.js';
import { readChatTemplate, resolveModel } from '../serve/open.js';
import { createServer } from '../serve/server.js';
import { untilDevicesSettle } from '../serve/status.js';
import { TARGET_NAMES } from '../targets/target.js';
import type { CliCommand } from './command.js';
import { createProgress } from './progress.js';
import { intArg } from './options.js';
import { threadsArg } from './limits.js';
import { maxProgramBytesOption } from './modelFlags.js';
import { EXIT, type Io } from './output.js';
import { DEFAULT_PREFIX_CACHE_BYTES } from '../model/qwen3/prefix.js';

/** The flags of `serve`. */
interface ServeFlags {
  readonly model?: string;
  readonly demo?: boolean;
  readonly port: number;
  readonly host: string;
  readonly target: string;
  readonly threads?: number;
  readonly exactMatmul?: boolean;
  readonly cacheType?: 'f32' | 'f16';
  readonly maxProgramBytes?: number;
  readonly prefillTarget?: string;
  readonly ctx?: number;
  readonly maxQueue: number;
  readonly parallel: number;
  readonly apiKey?: string;
  readonly addon?: string[];
  readonly npuOpt?: Record<string, string>;
  readonly cacheDir?: string;
  readonly chatTemplate?: string;
  readonly cors?: string[];
  readonly pooling?: 'mean' | 'last';
  /** The prefix cache's budget in MiB (default 1024); `--no-prefix-cache` sets prefixCache false. */
  readonly cacheRam?: number;
  readonly kvBudget?: number;
  readonly prefixCache?: boolean;
}

function portArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isSafeInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`--port must be a port from 0 to 65535, got ${JSON.stringify(v)}`);
  return n;
}

function npuOptArg(v: string, prev: Record<string, string> = {}): Record<string, string> {
  const at = v.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`--npu-opt takes KEY=VALUE, got ${JSON.stringify(v)}`);
  return { ...prev, [v.slice(0, at)]: v.slice(at + 1) };
}

/** Runs `serve` until a signal (or `stop`, for tests) ends it; returns the exit code. */
async function serveCommand(path: string | undefined, f: ServeFlags, io: Io, stop?: Promise<void>): Promise<number> {
  const given = f.model ?? path;
  if (given === undefined && f.demo !== true) throw new UsageError('serve needs a MODEL (a GGUF file or a model directory), --model PATH, or --demo');
  // Read and checked before anything loads: a template that does not parse refuses the server.
  const chatTemplate = f.chatTemplate !== undefined ? readChatTemplate(f.chatTemplate) : undefined;
  const registry = new Registry();
  for (const a of f.addon ?? []) await loadAddon(a, registry);
  const demo = given === undefined ? demoModel(f.cacheDir) : undefined;
  // One engine for the server's life, so a reload after a missed deadline finds the restarted device
  // and /v1/status shows its restarts.
  // The host device's threads and matmul class are the engine's (a model given an engine keeps them).
  const limits = f.maxProgramBytes !== undefined ? { programBytes: Math.max(1, f.maxProgramBytes) } : undefined;
  const engine = createEngine({
    ...(f.cacheDir !== undefined ? { cacheDir: f.cacheDir } : {}),
    devices: { host: { ...(f.threads !== undefined ? { threads: f.threads } : {}), matmul: f.exactMatmul === true ? 'exact' : 'q8' } },
    ...(limits !== undefined ? { limits } : {}),
  });
  const load = {
    engine,
    target: f.target,
    ...(f.ctx !== undefined ? { ctx: f.ctx } : {}),
    parallel: f.parallel,
    ...(f.threads !== undefined ? { threads: f.threads } : {}),
    ...(f.cacheType !== undefined ? { cacheType: f.cacheType } : {}),
    ...(limits !== undefined ? { limits } : {}),
    ...(f.prefillTarget !== undefined ? { prefillTarget: f.prefillTarget } : {}),
    ...(f.cacheDir !== undefined ? { cacheDir: f.cacheDir } : {}),
    ...(demo !== undefined ? { tokenizer: demo.tokenizer, ctx: f.ctx ?? 1024 } : {}),
    npuOpts: f.npuOpt ?? {},
    prefixCache: f.prefixCache === false ? false as const : { bytes: f.cacheRam !== undefined ? f.cacheRam * 2 ** 20 : DEFAULT_PREFIX_CACHE_BYTES },
    kvBudget: f.kvBudget ?? true,
  };
  const resolved = await resolveModel(given ?? demo!.path, load, registry, io.err).catch(async (e: unknown) => { await engine.close(); throw e; });
  const id = demo !== undefined ? 'qwen3-demo' : resolved.id;
  const server = createServer({ modelId: id, open: async () => { await untilDevicesSettle(engine); return resolved.open(); }, engine, maxQueue: f.maxQueue, parallel: f.parallel, ...(chatTemplate !== undefined ? { chatTemplate } : {}), ...(f.cors !== undefined ? { cors: f.cors } : {}), ...(f.apiKey !== undefined ? { apiKey: f.apiKey } : {}), ...(f.pooling !== undefined ? { pooling: f.pooling } : {}), log: io.err });
  const url = await server.listen(f.port, f.host).catch(async (e: unknown) => {
    await server.close();
    await engine.close();
    // An address the machine cannot listen on (taken, not its own, not an address) is the user's to fix.
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && ['EADDRINUSE', 'EADDRNOTAVAIL', 'EACCES', 'ENOTFOUND', 'EAI_AGAIN', 'EINVAL'].includes(code)) {
      throw new UsageError(`cannot listen on ${f.host}:${f.port}: ${code} (${messageOf(e)})`);
    }
    throw e;
  });
  // A signal while the model loads stops the server as cleanly as one later. The handlers are in place
  // before the first line that says the server is up, so a supervisor that signals on that line is heard.
  let unhook = (): void => undefined;
  const signalled = new Promise<void>((resolve) => {
    const on = (s: string) => { io.err(`${s}: finishing the running request and stopping`); resolve(); };
    const int = () => on('SIGINT');
    const term = () => on('SIGTERM');
    process.once('SIGINT', int);
    process.once('SIGTERM', term);
    // Taken off when the command ends, so a later signal in the same process is not swallowed here.
    unhook = () => { process.off('SIGINT', int); process.off('SIGTERM', term); };
  });
  if (demo !== undefined) io.err('serving the demo model: Qwen3\'s architecture and tokenizer with RANDOM weights (its text is nonsense); serve a real model with --model PATH');
  io.err(`model ${id} (${resolved.route} route, target ${f.target}) loading; ${url}/v1/health answers 200 when it is ready`);
  io.out(url);
  io.err(`chat in a browser at ${url}/ and the engine's status at ${url}/status`);
  io.out(`curl ${url}/v1/chat/completions -H 'content-type: application/json'${f.apiKey !== undefined ? " -H 'authorization: Bearer KEY'" : ''} -d '{"model":"${id}","messages":[{"role":"user","content":"Hello"}],"max_tokens":32}'`);
  // The first load compiles the programs and binds the weights: a line on a terminal while it runs.
  const stopped = stop === undefined ? signalled : Promise.race([signalled, stop]);
  const loading = createProgress(`loading ${id} on ${f.target}: compiling, loading the weights {bar} | {duration_formatted}`, { clear: true });
  loading.update(0, 1);
  const early = await Promise.race([server.loaded.then(() => false), stopped.then(() => true)]).finally(() => loading.stop());
  if (!early) {
    // A model that cannot open at all is the user's to fix: refuse it, typed, rather than serve 503 for ever.
    if (server.holder.state !== 'ready') {
      const e = server.holder.error;
      unhook();
      await server.close();
      throw e;
    }
    io.err(`model ${id} ready`);
    await stopped;
  }
  unhook();
  await server.close();
  await engine.close();
  return EXIT.ok;
}

/** `npu-offload serve`. */
export const serve: CliCommand = {
  register(cli, { io, action }) {
    cli.command('serve').description('serve a model over an OpenAI-compatible HTTP API (docs/SERVE.md)')
      .argument('[model]', 'a GGUF file or a model directory')
      .addOption(new Option('--model <path>', 'the model to serve (as the argument; npm start -- --model PATH)'))
      .addOption(new Option('--demo', 'serve the built-in demo model (random weights) when no model is named'))
      .addOption(new Option('--port <n>', 'the port (0: any free one)').argParser(portArg).default(8000))
      .addOption(new Option('--host <host>', 'the address to listen on').default('127.0.0.1'))
      .addOption(new Option('--target <target>', 'where the model runs').choices([...TARGET_NAMES]).default('host'))
      .addOption(new Option('--threads <n>', 'threads of the host target').argParser(threadsArg('--threads')))
      .addOption(new Option('--exact-matmul', 'host: matmuls by quantized weights with f32 activations (the exact class) rather than int8 activations (docs/HOST.md, "q8 activations")'))
      .addOption(maxProgramBytesOption())
      .addOption(new Option('--cache-type <type>', 'the KV cache\'s dtype: f32 (the exact class) or f16 (half the bytes, each stored element rounded once; docs/MODELS.md)').choices(['f32', 'f16']).default('f32'))
      .addOption(new Option('--prefill-target <targets>', 'where prompts are prefilled, a target or a list (xdna2,host); the KV cache is handed to --target'))
      .addOption(new Option('--ctx <n>', 'positions the KV cache holds').argParser(intArg('--ctx')))
      .addOption(new Option('--cache-ram <MiB>', 'the prefix cache\'s budget: the KV cache of prompts\' prefixes kept across requests, so a prompt that starts with one prefills only the rest (default 1024; 0 keeps none)').argParser(intArg('--cache-ram')))
      .addOption(new Option('--no-prefix-cache', 'keep no prefix cache: every prompt prefilled whole'))
      .addOption(new Option('--kv-budget <positions>', 'positions the running generations may fill at once, each reserving its prompt and max_tokens as it starts; past it a request gets 429 KvCacheFull (default --ctx for each of the --parallel slots)').argParser(intArg('--kv-budget')))
      .addOption(new Option('--max-queue <n>', 'requests that may wait behind the running ones; one more gets 429').argParser(intArg('--max-queue')).default(16))
      .addOption(new Option('--parallel <n>', 'generations decoded together, one step over the weights for all (host); each answer the bytes it gets alone').argParser(intArg('--parallel')).default(4))
      .addOption(new Option('--api-key <key>', 'require Authorization: Bearer KEY'))
      .addOption(new Option('--addon <pkg...>', 'load an add-on (package name or path) that adds routes'))
      .addOption(new Option('--npu-opt <key=value>', 'an option for an add-on route (repeatable)').argParser(npuOptArg))
      .addOption(new Option('--cors <origin...>', 'origins a browser page may call from (* any); none by default'))
      .addOption(new Option('--chat-template <file>', 'a Jinja chat template used over the model\'s own'))
      .addOption(new Option('--pooling <how>', '/v1/embeddings: the mean of the tokens\' final-norm hidden states, or the last token\'s').choices(['mean', 'last']).default('mean'))
      .addOption(new Option('--cache-dir <dir>', 'blob cache directory (and where the demo model is written)'))
      .action(action((path: string | undefined, f: ServeFlags) => serveCommand(path, f, io)));
  },
};
