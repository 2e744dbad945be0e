/**
 * Runs the CLI in the test's own process, as bin.js runs it in its own: `main(argv, io)` with an io that
 * escapes every line as the terminal's does (escapingIo), into buffers. Starting a process per call cost
 * more than most calls themselves (the CLI loads every command: 1 s on a quiet machine, several under
 * load); this keeps what a separate process would have shown, checked here instead:
 * - the call settles within its time bound (else `hung`);
 * - it does not call process.exit (that would end the test run: `exitCalled`, and the call fails);
 * - it leaves nothing behind that would keep a process alive once the command is done (a server, a
 *   socket, a timer, a child process): process.getActiveResourcesInfo() returns to what it was (else
 *   `leftBehind` names them).
 * Calls run one at a time (each sets the working directory, the environment and process.exit), and the
 * caller must start nothing else meanwhile for the resource count to mean anything. A call whose subject
 * is a memory bound, a signal, a blocking open or a loop that never yields must stay a child process:
 * here it would stall or kill the test run rather than fail.
 */
import { Readable } from 'node:stream';
import { format } from 'node:util';
import { main } from '../../src/cli/main.js';
import { escapingIo } from '../../src/cli/output.js';
import { messageOf } from '../../src/errors/index.js';

export interface HereOptions {
  /** The working directory meanwhile (default: unchanged). */
  readonly cwd?: string;
  /** Environment variables set meanwhile; undefined removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Standard input (default: empty). */
  readonly stdin?: string | Uint8Array;
  /** Time bound for the call, and again for what it opened to close (default 120 s). */
  readonly boundMs?: number;
  /** Output kept per stream (default: all of it). */
  readonly keepBytes?: number;
  /**
   * Called with all of stdout and stderr so far each time either grows, while the call runs: for a
   * caller that acts on what a long-running command says (a server's URL, its "ready" line).
   */
  readonly onOutput?: (stdout: string, stderr: string) => void;
}

export interface HereResult {
  /** The exit code bin.js would set; null when the call hung. */
  readonly status: number | null;
  readonly hung: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** What the call left keeping the event loop alive (empty when nothing). */
  readonly leftBehind: readonly string[];
  /** `process.exit(code)` as the call made it, which would have ended the test run. */
  readonly exitCalled?: string;
}

function keeper(max: number): { add: (text: string) => void; text: () => string } {
  const parts: string[] = [];
  let kept = 0;
  return {
    add: (t) => { if (kept < max) { parts.push(t.slice(0, max - kept)); kept += Buffer.byteLength(t); } },
    text: () => parts.join(''),
  };
}

/** The resources keeping this process's event loop alive, counted by kind. */
function resources(): Map<string, number> {
  const n = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) n.set(r, (n.get(r) ?? 0) + 1);
  return n;
}

/** What `now` holds beyond `before`, one entry per extra resource. */
function beyond(now: Map<string, number>, before: Map<string, number>): string[] {
  const extra: string[] = [];
  for (const [kind, n] of now) for (let i = before.get(kind) ?? 0; i < n; i++) extra.push(kind);
  return extra;
}

/** Waits (up to `boundMs`) for what a finished call opened to close; resolves with what is still open. */
async function leftBehindAfter(before: Map<string, number>, boundMs: number): Promise<string[]> {
  const until = performance.now() + boundMs;
  for (;;) {
    // Counted once the wait's own timer has fired, so it is not among them.
    await new Promise((go) => setTimeout(go, 5));
    const extra = beyond(resources(), before);
    if (extra.length === 0 || performance.now() > until) return extra;
  }
}

class ExitCalled extends Error {
  constructor(code: number | undefined) { super(`process.exit(${String(code)}) was called`); }
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs `npu-offload ARGV` in this process; see the top of this file. */
export function runHere(argv: readonly string[], o: HereOptions = {}): Promise<HereResult> {
  return queued(() => hereNow(async (out, err) => {
    const stdin = o.stdin === undefined || o.stdin.length === 0 ? [] : [Buffer.from(o.stdin)];
    // As bin.js: an error escaping main is an internal error, exit 3.
    return main(argv, escapingIo(out, err, Readable.from(stdin))).catch((e: unknown) => { err(`internal error: ${messageOf(e)}\n`); return 3; });
  }, o));
}

let scripts = 0;

/**
 * Runs an ES module's source in this process, as `node --input-type=module -e SOURCE` runs it in its own
 * (imported from a data: URL, so it may import only builtins and absolute URLs), with the same checks as
 * runHere: its status is the process.exitCode it sets (0 when none); what it writes through console,
 * process.stdout, process.stderr and process.emitWarning is its output; an error escaping it is printed
 * as node prints an uncaught one (with its stack) and is status 1. For an API call whose subject is a
 * typed refusal: a memory bound, a signal, a hang or the process's exit needs a process of its own.
 */
export function importHere(source: string, o: Omit<HereOptions, 'stdin'> = {}): Promise<HereResult> {
  // A module is imported once per URL: a comment makes each call's source its own.
  const url = `data:text/javascript;base64,${Buffer.from(`${source}\n// run ${++scripts}\n`).toString('base64')}`;
  return queued(() => hereNow(async (_out, err) => {
    try {
      await import(url);
      return Number(process.exitCode ?? 0);
    } catch (e) {
      if (e instanceof ExitCalled) throw e;
      err(`Uncaught ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
      return 1;
    }
  }, o, redirectOutput));
}

/**
 * Sends what a script writes (console, process.stdout and process.stderr, process.emitWarning as node
 * prints a warning) to `out` and `err`, with process.exitCode cleared; returns what puts everything back.
 */
function redirectOutput(out: (t: string) => void, err: (t: string) => void): () => void {
  const saved = {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- saved to be put back on the same object, never called detached
    exitCode: process.exitCode, emitWarning: process.emitWarning,
    // eslint-disable-next-line @typescript-eslint/unbound-method -- saved to be put back on the same object, never called detached
    outWrite: process.stdout.write, errWrite: process.stderr.write,
    log: console.log, info: console.info, error: console.error, warn: console.warn,
  };
  const writer = (to: (t: string) => void) => ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    to(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    (rest.find((x) => typeof x === 'function') as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stdout.write;
  process.exitCode = undefined;
  process.stdout.write = writer(out);
  process.stderr.write = writer(err);
  console.log = console.info = (...a: unknown[]) => { out(`${format(...a)}\n`); };
  console.error = console.warn = (...a: unknown[]) => { err(`${format(...a)}\n`); };
  process.emitWarning = ((w: string | Error) => {
    err(`(node:${process.pid}) ${typeof w === 'string' ? `Warning: ${w}` : `${w.name}: ${w.message}`}\n`);
  });
  return () => {
    process.exitCode = saved.exitCode;
    process.emitWarning = saved.emitWarning;
    process.stdout.write = saved.outWrite;
    process.stderr.write = saved.errWrite;
    Object.assign(console, { log: saved.log, info: saved.info, error: saved.error, warn: saved.warn });
  };
}

/** Runs `call` after every earlier call here has settled (see the top of this file). */
function queued(call: () => Promise<HereResult>): Promise<HereResult> {
  const r = queue.then(call);
  queue = r.then(() => undefined, () => undefined);
  return r;
}

/** Runs `call` (given where its stdout and stderr go; resolving with its status) under the checks above. */
async function hereNow(
  call: (out: (t: string) => void, err: (t: string) => void) => Promise<number>, o: HereOptions,
  redirect?: (out: (t: string) => void, err: (t: string) => void) => () => void,
): Promise<HereResult> {
  const boundMs = o.boundMs ?? 120_000;
  const kept = { out: keeper(o.keepBytes ?? Infinity), err: keeper(o.keepBytes ?? Infinity) };
  const watched = (k: ReturnType<typeof keeper>) => (o.onOutput === undefined ? k : {
    add: (t: string) => { k.add(t); o.onOutput!(kept.out.text(), kept.err.text()); },
    text: k.text,
  });
  const out = watched(kept.out);
  const err = watched(kept.err);
  // eslint-disable-next-line @typescript-eslint/unbound-method -- saved to be put back on the same object, never called detached
  const saved = { cwd: process.cwd(), exit: process.exit, outTty: process.stdout.isTTY, errTty: process.stderr.isTTY };
  const savedEnv = Object.keys(o.env ?? {}).map((k) => [k, process.env[k]] as const);
  const before = resources();
  let exitCalled: string | undefined;
  let status: number | null = null;
  let hung = false;
  if (o.cwd !== undefined) process.chdir(o.cwd);
  // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- delete is how an environment variable is unset
  for (const [k, v] of Object.entries(o.env ?? {})) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  // As a child's piped streams are: no progress bar draws on the test run's terminal.
  process.stdout.isTTY = false;
  process.stderr.isTTY = false;
  process.exit = ((code?: number) => { exitCalled = `process.exit(${String(code)})`; throw new ExitCalled(code); });
  const restore = redirect?.(out.add, err.add);
  try {
    const settled = call(out.add, err.add).catch((e: unknown) => {
      if (e instanceof ExitCalled) return null;
      err.add(`internal error: ${messageOf(e)}\n`);
      return 3;
    });
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([settled, new Promise<'hung'>((go) => { timer = setTimeout(() => go('hung'), boundMs); })]);
    clearTimeout(timer);
    if (r === 'hung') hung = true; else status = r;
  } finally {
    restore?.();
    process.exit = saved.exit;
    process.stdout.isTTY = saved.outTty;
    process.stderr.isTTY = saved.errTty;
    process.chdir(saved.cwd);
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- delete is how an environment variable is unset
    for (const [k, v] of savedEnv) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  }
  const leftBehind = hung ? [] : await leftBehindAfter(before, boundMs);
  return { status, hung, stdout: out.text(), stderr: err.text(), leftBehind, ...(exitCalled !== undefined ? { exitCalled } : {}) };
}

/**
 * runHere, failing (throwing) when the call hung, called process.exit or left something open: what a
 * child process would have shown as a hang or a timeout. Resolves with status, stdout and stderr.
 */
export async function cliHere(argv: readonly string[], o: HereOptions = {}): Promise<{ status: number; out: string; err: string }> {
  const r = await runHere(argv, o);
  const shown = `npu-offload ${argv.join(' ')}\n--- stdout ---\n${r.stdout.slice(0, 2000)}\n--- stderr ---\n${r.stderr.slice(0, 2000)}`;
  if (r.hung) throw new Error(`hung: still running after ${o.boundMs ?? 120_000} ms\n${shown}`);
  if (r.exitCalled !== undefined) throw new Error(`called ${r.exitCalled}, which would end the test run\n${shown}`);
  if (r.leftBehind.length > 0) throw new Error(`left open after the command was done, which would keep its process from exiting: ${r.leftBehind.join(', ')}\n${shown}`);
  return { status: r.status!, out: r.stdout, err: r.stderr };
}
