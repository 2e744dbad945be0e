/**
 * How the CLI speaks: typed errors as one line for people or `{ "error": { code, ...fields } }` for
 * machines, never a stack trace for a user's mistake.
 */
import { EngineError } from '../errors/index.js';
import { escapeLines } from '../io/escape.js';
import type { Tensor } from '../ir/tensor.js';

export interface Io {
  // Functions, not methods: commands pass io.out and io.err on by themselves.
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Text without a line end, written as it comes (generate's streamed text); absent: lines only. */
  readonly write?: (text: string) => void;
  /** What a command reading standard input (tokenize) reads; absent: process.stdin. */
  readonly stdin?: AsyncIterable<Uint8Array | string>;
}

/**
 * A terminal: every line is escaped on its way out, since names and strings quoted from files may
 * hold control characters. JSON stays the same document (JSON.stringify leaves only DEL and C1 raw,
 * and their escapes are JSON's own). `stdout` and `stderr` receive the escaped text; the tests that run
 * the CLI in their own process pass buffers here, so they see exactly what a terminal would.
 */
export function escapingIo(stdout: (text: string) => void, stderr: (text: string) => void, stdin?: AsyncIterable<Uint8Array | string>): Io {
  return {
    out: (l) => stdout(escapeLines(l) + '\n'),
    err: (l) => stderr(escapeLines(l) + '\n'),
    write: (t) => stdout(escapeLines(t)),
    ...(stdin !== undefined ? { stdin } : {}),
  };
}

/** The process's own terminal. */
export const processIo: Io = escapingIo((t) => process.stdout.write(t), (t) => process.stderr.write(t));

/** Exit codes: 0 done, 1 a typed refusal or failure, 2 a usage error, 3 an internal defect. */
export const EXIT = { ok: 0, refused: 1, usage: 2, internal: 3 } as const;

/** The machine-readable form of an error, as the program format's error table defines it. */
export function errorJson(e: EngineError): { error: Record<string, unknown> } {
  return { error: { code: e.code, ...e.fields() } };
}

/** Reports an error and returns the exit code; an unexpected error is a defect, reported as one. */
export function reportError(e: unknown, io: Io, json: boolean): number {
  if (e instanceof EngineError) {
    if (json) io.out(JSON.stringify(errorJson(e)));
    else io.err(`error [${e.code}]: ${escapeLines(e.message)}`);
    return e.code === 'UsageError' ? EXIT.usage : EXIT.refused;
  }
  const msg = e instanceof Error ? e.message : String(e);
  if (json) io.out(JSON.stringify({ error: { code: 'Internal', message: msg } }));
  else io.err(`internal error: ${escapeLines(msg)}${process.env.NPU_OFFLOAD_DEBUG && e instanceof Error ? `\n${e.stack}` : ''}`);
  return EXIT.internal;
}

function fmt(v: number): string {
  if (Object.is(v, -0)) return '-0';
  return String(v);
}

/** A short human rendering of a tensor: dtype, shape and up to `max` elements. */
export function formatTensor(t: Tensor, max = 8): string {
  const n = t.data.length;
  const shown = Array.from(t.data.subarray(0, Math.min(n, max)), fmt).join(', ');
  return `${t.dtype}[${t.shape.join(', ')}] [${shown}${n > max ? `, … (${n} elements)` : ''}]`;
}
