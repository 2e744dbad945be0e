/** Reading the files a user names, with typed errors that name the file and what is wrong with it. */
import { InvalidInput, messageOf } from '../errors/index.js';
import { readRegularFile } from '../io/files.js';
import { parseProgramText } from '../ir/codec.js';
import { checkJsonTextDepth, jsonErrorAt } from '../ir/jsonText.js';
import type { Limits } from '../ir/limits.js';
import type { Program } from '../ir/types.js';

/**
 * The text of a regular file of at most the `file-bytes` limit; `what` names it in errors. A missing
 * file, a directory, a FIFO or a device is a UsageError naming it; a larger file is ResourceLimit.
 */
export function readText(file: string, what = 'file'): string {
  return readRegularFile(file, { what }).toString('utf8');
}

/** A program file, decoded (structure only; validation is checkProgram's) under `limits` (default the defaults). */
export function readProgram(file: string, limits?: Limits): Program {
  return parseProgramText(readText(file, 'program'), limits);
}

/** An inputs file as JSON; a syntax error is InvalidInput naming the line and column. */
export function readInputs(file: string): unknown {
  const text = readText(file, 'inputs file');
  checkJsonTextDepth(text, file);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new InvalidInput('', `${file} is not JSON: ${jsonErrorAt(text, messageOf(e))}`);
  }
}
