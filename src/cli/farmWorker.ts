/**
 * `npu-offload farm-worker --queue redis://... [--concurrency N] [--cache-dir DIR] [--remote-cache URL]`:
 * the long-running farm worker. It takes compile jobs from the queue, compiles them through its own
 * engine and publishes the blobs to the remote tier (the queue's server unless --remote-cache names
 * another). SIGTERM or SIGINT drains it: the jobs in hand finish, then it exits 0; a second signal
 * stops it at once, leaving its jobs to another worker. With --json, one JSON object per line.
 */
import { CompileWorker, type WorkerEvent } from '../jobs/compileWorker.js';
import type { CliCommand } from './command.js';
import { Option } from 'commander';
import { intOption, jsonOption, redisUrlOption } from './options.js';
import type { Io } from './output.js';
import { EXIT, reportError } from './output.js';

interface FarmWorkerOptions {
  /** The queue's Redis URL (checked by the flag's parser). */
  readonly queue: string;
  readonly concurrency?: number;
  readonly cacheDir?: string;
  readonly remoteCache?: string;
  readonly name?: string;
  readonly lockMs?: number;
  readonly maxStalls?: number;
  readonly json?: boolean;
}

function say(io: Io, json: boolean | undefined, doc: Record<string, unknown>, line: string): void {
  io.out(json ? JSON.stringify(doc) : line);
}

/** A field of a wire error as text: a string as it is, anything else as JSON (never [object Object]). */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify gives undefined for a symbol or a function, whatever its type says
const textOf = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

function describe(e: WorkerEvent): string {
  switch (e.event) {
    case 'active': return `job ${e.job}: ${e.file}`;
    case 'done': return `job ${e.job}: ${e.file} ${e.hit ? 'cache hit' : 'compiled'}`;
    case 'failed': return `job ${e.job}: ${e.file} failed${e.final ? '' : ' (to be retried)'}: [${String(e.error['code'])}] ${textOf(e.error['message'] ?? e.error['detail'] ?? '')}`;
  }
}

/** Serves farm jobs until a signal; resolves with 0 once drained. */
async function farmWorkerCommand(opts: FarmWorkerOptions, io: Io): Promise<number> {
  const worker = await CompileWorker.start({
    queue: opts.queue,
    ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
    ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.remoteCache !== undefined ? { remoteCache: opts.remoteCache } : {}),
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.lockMs !== undefined ? { lockMs: opts.lockMs } : {}),
    ...(opts.maxStalls !== undefined ? { maxStalls: opts.maxStalls } : {}),
    onEvent: (e) => { if (opts.json || e.event !== 'active') say(io, opts.json, { ...e }, describe(e)); },
    onWarning: (m) => (opts.json ? io.out(JSON.stringify({ event: 'warning', message: m })) : io.err(`warning: ${m}`)),
  });
  say(io, opts.json, { event: 'ready', worker: worker.name, queue: opts.queue }, `farm-worker ${worker.name}: taking jobs from ${opts.queue}`);
  const signalled = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  say(io, opts.json, { event: 'draining', signal: signalled }, `farm-worker ${worker.name}: ${signalled}, finishing the jobs in hand`);
  const again = () => {
    say(io, opts.json, { event: 'stopped' }, `farm-worker ${worker.name}: stopped before its jobs finished; they go to another worker`);
    process.exit(EXIT.refused);
  };
  process.once('SIGTERM', again);
  process.once('SIGINT', again);
  try {
    await worker.close();
  } catch (e) {
    // The queue's server is gone: BullMQ keeps timers waiting for it that would hold this process
    // forever, so the worker says why and leaves.
    process.exit(reportError(e, io, opts.json === true));
  } finally {
    process.off('SIGTERM', again);
    process.off('SIGINT', again);
  }
  const c = worker.counts;
  say(io, opts.json, { event: 'closed', ...c }, `farm-worker ${worker.name}: done, ${c.jobs} jobs (${c.compiled} compiled, ${c.hits} cache hits), ${c.failed} failed`);
  return EXIT.ok;
}

/** `farm-worker --queue URL`. */
export const farmWorker: CliCommand = {
  register(cli, { io, action }) {
    cli.command('farm-worker')
      .description('take compile jobs from a farm queue until SIGTERM, publishing every blob to the remote cache tier')
      .addOption(redisUrlOption('--queue <url>', 'the farm queue\'s Redis, redis://host:port/db').makeOptionMandatory())
      .addOption(intOption('--concurrency <n>', 'jobs compiled at once (default 2)'))
      .addOption(new Option('--cache-dir <dir>', 'local blob cache directory'))
      .addOption(redisUrlOption('--remote-cache <url>', 'the shared cache tier (default: the queue\'s Redis)'))
      .option('--name <name>', 'this worker\'s name in results (default host:pid)')
      .addOption(intOption('--lock-ms <ms>', 'how soon a job held by a dead worker goes to another (default 30000)'))
      .addOption(intOption('--max-stalls <n>', 'times a job may lose its worker before it fails (default 2)'))
      .addOption(jsonOption('one JSON object per line for each event'))
      .action(action((o: FarmWorkerOptions) => farmWorkerCommand(o, io)));
  },
};
