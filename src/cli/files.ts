/** Reading the files a user names, with typed errors that name the file and what is wrong with it. */
import { readFileSync } from 'node:fs';
import { InvalidInput, UsageError } from '../errors.js';
import { parseProgramText } from '../ir/codec.js';
import { jsonErrorAt } from '../ir/jsonText.js';
import type { Limits } from '../ir/limits.js';
import type { Program } from '../ir/types.js';

/** The text of a file, or a UsageError naming it. */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code ?? String(e);
    throw new UsageError(`cannot read ${file}: ${why}`);
  }
}

/** A program file, decoded (structure only; validation is checkProgram's) under `limits` (default the defaults). */
export function readProgram(file: string, limits?: Limits): Program {
  return parseProgramText(readText(file), limits);
}

/** An inputs file as JSON; a syntax error is InvalidInput naming the line and column. */
export function readInputs(file: string): unknown {
  const text = readText(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new InvalidInput('', `${file} is not JSON: ${jsonErrorAt(text, e instanceof Error ? e.message : String(e))}`);
  }
}
