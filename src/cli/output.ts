/**
 * How the CLI speaks: typed errors as one line for people or `{ "error": { code, ...fields } }` for
 * machines, never a stack trace for a user's mistake.
 */
import { EngineError } from '../errors/index.js';
import { escapeLines } from '../io/escape.js';
import type { Tensor } from '../ir/tensor.js';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Text without a line end, written as it comes (generate's streamed text); absent: lines only. */
  write?(text: string): void;
}

/**
 * The terminal: every line is escaped on its way out, since names and strings quoted from files may
 * hold control characters. JSON stays the same document (JSON.stringify leaves only DEL and C1 raw,
 * and their escapes are JSON's own).
 */
export const processIo: Io = {
  out: (l) => process.stdout.write(escapeLines(l) + '\n'),
  err: (l) => process.stderr.write(escapeLines(l) + '\n'),
  write: (t) => process.stdout.write(escapeLines(t)),
};

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
