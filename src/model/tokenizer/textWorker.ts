/**
 * TextWorker: a tokenizer in a child process, so that rendering a chat template and encoding a long
 * prompt never hold the caller's event loop (a server's health answers meanwhile). The child loads the
 * tokenizer from its path once and serves one call at a time; its heap is bounded (`memoryMb`), each
 * call's rendering and encoding are bounded in time (`renderMs`, `encodeMs`) and the rendered prompt in
 * bytes (`templateBytes`). Past a bound the call fails with ResourceLimit (`template-ms`,
 * `template-memory`, `template-bytes`, `tokenize-ms`, `tokenize-memory`), the child is ended when it
 * is stuck or dead, and the next call starts a fresh one. An idle child does not keep a process alive.
 *
 * A process, not a worker thread: a worker's `resourceLimits` are overridden by the process's own
 * `--max-old-space-size` (nodejs/node#43991), and a worker that then reaches the heap limit, or hits
 * V8's fatal "invalid size" on a huge array, aborts the whole process. A child dies alone.
 * A text that cannot fit a context is refused before it is encoded (`prompt-bytes`): no token stands
 * for more than the vocabulary's longest token's bytes, times NORMALIZER_SHRINK for what a normalizer
 * may shrink text by.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fromWire, InvalidInput, InvalidOptions, messageOf, ResourceLimit, TokenizerError, type WireError } from '../../errors/index.js';
import { checkMessages } from './chat.js';
import { templatePlace, type TextCall, type TextReply, type TextWorkerData } from './textProtocol.js';
import type { ChatMessage, ChatOptions, EncodeOptions } from './types.js';

/** The bounds of a TextWorker's calls. */
export interface TextLimits {
  /** Rendering one chat, in ms (default 10 000). */
  readonly renderMs?: number;
  /** Encoding one text or rendered chat, in ms (default 10 000). */
  readonly encodeMs?: number;
  /** The largest rendered chat prompt, in UTF-8 bytes (default 16 MiB). */
  readonly templateBytes?: number;
  /** The child's heap (V8's old generation), in MiB (default 256). */
  readonly memoryMb?: number;
}

/** The defaults of TextLimits. */
const TEXT_LIMITS: Required<TextLimits> = { renderMs: 10_000, encodeMs: 10_000, templateBytes: 16 * 1024 * 1024, memoryMb: 256 };

/** Starting the child and loading the tokenizer in it, in ms: a real one loads in a second or two. */
const TEXT_LOAD_MS = 60_000;

/**
 * Normalizers (NFC, NFKC, lowercase) shrink UTF-8 text by at most this factor (NFKC turns a 4-byte
 * mathematical letter into 1 byte), so `bytes / (longest token's bytes * 4)` tokens is a floor.
 */
const NORMALIZER_SHRINK = 4;

/** The most UTF-8 bytes a text of at most `ctx` tokens can have. */
export function maxPromptBytes(ctx: number, maxTokenBytes: number): number {
  return ctx * maxTokenBytes * NORMALIZER_SHRINK;
}

type Phase = 'load' | 'render' | 'encode';
type Exit = { readonly exit: number | null; readonly signal: NodeJS.Signals | null };
type Event = { readonly reply: TextReply } | Exit;

/** The last bytes of the child's stderr kept, to tell why it died (V8 prints its fatal errors there). */
const STDERR_TAIL = 4096;

interface Thread {
  readonly child: ChildProcess;
  phase: Phase;
  maxTokenBytes?: number;
  loadError?: WireError;
  stderr: string;
  closed: boolean;
  handler?: (ev: Event) => void;
}

/** Keeps the process alive (a call in flight) or not (idle). */
function hold(c: ChildProcess, on: boolean): void {
  const channel = c.channel as { ref?: () => void; unref?: () => void } | null | undefined;
  if (on) { c.ref(); channel?.ref?.(); } else { c.unref(); channel?.unref?.(); }
}

function checkLimits(l: TextLimits): Required<TextLimits> {
  for (const [k, v] of Object.entries(l)) {
    if (v !== undefined && !(typeof v === 'number' && v > 0 && (Number.isSafeInteger(v) || v === Infinity))) {
      throw new InvalidOptions(`textLimits.${k}`, `a whole number of at least 1, not ${String(v)}`);
    }
  }
  return { ...TEXT_LIMITS, ...Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) };
}

/** A tokenizer in its own thread (see the file's doc). */
export class TextWorker {
  readonly limits: Required<TextLimits>;
  #thread: Thread | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #next = 1;

  /** `source`: what loadTokenizer reads (a tokenizer.json, a model directory or a GGUF). */
  constructor(readonly source: string, limits: TextLimits = {}) {
    this.limits = checkLimits(limits);
  }

  /** Text to ids; with `ctx`, a text that cannot fit `ctx` tokens is refused (`prompt-bytes`) before it is sent. */
  async encode(text: string, options: EncodeOptions = {}, ctx?: number): Promise<number[]> {
    if (typeof text !== 'string') throw new InvalidInput('', `encode takes a string, not ${text === null ? 'null' : typeof text}`);
    const done = await this.#run((id, most) => {
      if (ctx !== undefined) {
        const max = maxPromptBytes(ctx, most);
        // A code unit is at least one byte: a string that long is refused without walking it.
        const bytes = text.length > max ? text.length : Buffer.byteLength(text, 'utf8');
        if (bytes > max) throw new ResourceLimit('prompt-bytes', bytes, max, 'prompt');
      }
      return { type: 'encode', id, text, options };
    });
    return done.ids;
  }

  /** The chat's prompt from the template and its ids; with `ctx`, a prompt that cannot fit is refused before it is encoded. */
  async encodeChat(messages: readonly ChatMessage[], options: ChatOptions = {}, ctx?: number): Promise<{ prompt: string; ids: number[] }> {
    checkMessages(messages);
    const done = await this.#run((id, most) => ({
      type: 'chat', id, messages, options, ...(ctx !== undefined ? { maxPromptBytes: maxPromptBytes(ctx, most) } : {}),
    }));
    return { prompt: done.prompt ?? '', ids: done.ids };
  }

  /** Ends the child (a later call starts another). */
  async close(): Promise<void> {
    const t = this.#thread;
    this.#thread = undefined;
    if (t === undefined || t.child.exitCode !== null || t.child.signalCode !== null) return;
    t.closed = true;
    const gone = new Promise<void>((r) => t.child.once('exit', () => r()));
    // Held until it is gone: an unreferenced child would let the process end inside close().
    hold(t.child, true);
    t.child.kill('SIGKILL');
    await gone;
  }

  /** One call at a time: a call waits for the one before it, so each call's time bound is its own. */
  #run(build: (id: number, maxTokenBytes: number) => TextCall): Promise<{ ids: number[]; prompt?: string }> {
    const p = this.#chain.then(() => this.#call(build));
    this.#chain = p.then(() => undefined, () => undefined);
    return p;
  }

  async #call(build: (id: number, maxTokenBytes: number) => TextCall): Promise<{ ids: number[]; prompt?: string }> {
    const t = this.#start();
    hold(t.child, true);
    try {
      const most = t.maxTokenBytes ?? await this.#await(t, undefined, TEXT_LOAD_MS);
      const call = build(this.#next++, most);
      t.phase = call.type === 'chat' ? 'render' : 'encode';
      return await this.#await(t, call, t.phase === 'render' ? this.limits.renderMs : this.limits.encodeMs);
    } finally {
      hold(t.child, false);
    }
  }

  #start(): Thread {
    if (this.#thread !== undefined) return this.#thread;
    const data: TextWorkerData = { source: this.source, templateBytes: this.limits.templateBytes };
    const child = fork(new URL('./text.worker.js', import.meta.url), [JSON.stringify(data)], {
      // Not the caller's flags: `-e`/`--input-type` would not start, and its heap bound is not this one.
      execArgv: this.limits.memoryMb === Infinity ? [] : [`--max-old-space-size=${this.limits.memoryMb}`],
      serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const t: Thread = { child, phase: 'load', closed: false, stderr: '' };
    hold(child, false);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => { t.stderr = (t.stderr + d).slice(-STDERR_TAIL); });
    (child.stderr as Socket | null)?.unref();
    child.on('message', (reply: TextReply) => {
      if (reply.type === 'ready') t.maxTokenBytes = reply.maxTokenBytes;
      if (reply.type === 'loadFailed') { t.loadError = reply.error; this.#end(t); }
      t.handler?.({ reply });
    });
    child.on('error', () => { /* a failed spawn or send: its exit follows */ });
    child.on('exit', (exit, signal) => {
      if (this.#thread === t) this.#thread = undefined;
      t.handler?.({ exit, signal });
    });
    this.#thread = t;
    return t;
  }

  #end(t: Thread): void {
    if (this.#thread === t) this.#thread = undefined;
    t.child.kill('SIGKILL');
  }

  /** Waits for the thread to be ready (no call) or for a call's answer, under `ms` per phase. */
  #await(t: Thread, call: undefined, ms: number): Promise<number>;
  #await(t: Thread, call: TextCall, ms: number): Promise<{ ids: number[]; prompt?: string }>;
  #await(t: Thread, call: TextCall | undefined, ms: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let t0 = performance.now();
      const settle = (f: () => void) => { clearTimeout(timer); t.handler = undefined; f(); };
      const arm = (bound: number) => {
        clearTimeout(timer);
        t0 = performance.now();
        if (bound === Infinity) return;
        timer = setTimeout(() => settle(() => {
          this.#end(t);
          reject(t.phase === 'load'
            ? new TokenizerError(this.source, `loading the tokenizer in its worker took more than ${bound} ms`)
            : new ResourceLimit(t.phase === 'render' ? 'template-ms' : 'tokenize-ms', Math.round(performance.now() - t0), bound, this.#place(t.phase)));
        }), bound);
      };
      t.handler = (ev) => {
        if ('exit' in ev) { settle(() => reject(this.#death(t, ev))); return; }
        const m = ev.reply;
        if (m.type === 'loadFailed') settle(() => reject(this.#rebuild(m.error)));
        else if (m.type === 'ready' && call === undefined) settle(() => resolve(m.maxTokenBytes));
        else if (call !== undefined && 'id' in m && m.id === call.id) {
          if (m.type === 'encoding') { t.phase = 'encode'; arm(this.limits.encodeMs); }
          else if (m.type === 'done') settle(() => resolve(m.prompt === undefined ? { ids: m.ids } : { ids: m.ids, prompt: m.prompt }));
          else if (m.type === 'failed') settle(() => reject(this.#rebuild(m.error)));
        }
      };
      if (call === undefined && t.loadError !== undefined) { settle(() => reject(this.#rebuild(t.loadError!))); return; }
      arm(ms);
      if (call !== undefined) {
        try {
          t.child.send(call, (e) => { if (e !== null && e !== undefined) settle(() => reject(new TokenizerError(this.source, `the text worker cannot be reached: ${messageOf(e)}`))); });
        } catch (e) {
          settle(() => reject(new InvalidInput('', `the request cannot be sent to the text worker: ${messageOf(e)}`)));
        }
      }
    });
  }

  #place(phase: Phase): string {
    return phase === 'render' ? templatePlace(this.source) : this.source;
  }

  #rebuild(w: WireError): Error {
    return fromWire(w) ?? new TokenizerError(this.source, w.message);
  }

  /** Why the child stopped in the middle of a call. */
  #death(t: Thread, ev: Exit): Error {
    if (t.closed) return new TokenizerError(this.source, 'the text worker was closed');
    // V8 writes its fatal errors (the heap limit, an array or string past its largest size) to stderr.
    if (/out of memory|invalid size|invalid array length|invalid table size/i.test(t.stderr)) {
      const max = this.limits.memoryMb * 1024 * 1024;
      if (t.phase === 'load') return new TokenizerError(this.source, `loading the tokenizer took more than the text worker's ${this.limits.memoryMb} MiB of memory`);
      // The heap reached its bound; how much more was wanted is not known.
      return new ResourceLimit(t.phase === 'render' ? 'template-memory' : 'tokenize-memory', max, max, this.#place(t.phase));
    }
    return new TokenizerError(this.source, `the text worker stopped (${ev.signal ?? `exit code ${ev.exit}`})`);
  }
}
