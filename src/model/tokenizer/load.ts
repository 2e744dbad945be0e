/**
 * loadTokenizer: a tokenizer.json, a model directory or a GGUF, told apart by what they are (a
 * directory, a file starting with the GGUF magic, else JSON). A file named tokenizer.json is read with
 * the tokenizer_config.json, config.json and generation_config.json beside it, as a directory is.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { messageOf, ResourceLimit, TokenizerError, UsageError } from '../../errors/index.js';
import { hasGgufMagic, openGguf } from '../gguf/reader.js';
import type { GgufFile } from '../gguf/types.js';
import { tokenizerFromSpec } from './core.js';
import { specFromGguf } from './fromGguf.js';
import { specFromHf, type HfTokenizerFiles } from './fromJson.js';
import type { Tokenizer } from './types.js';
import { checkJsonTextDepth } from '../../ir/jsonText.js';

/** The largest tokenizer.json read (real ones are 2 to 20 MB). */
export const MAX_TOKENIZER_JSON_BYTES = 256 * 1024 * 1024;

const strict = new TextDecoder('utf-8', { fatal: true });

function why(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'no such file or directory' : code ?? String(e);
}

function readJson(path: string, source: string, required: boolean): unknown {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new TokenizerError(source, `${path} is not a regular file`);
    size = st.size;
  } catch (e) {
    if (e instanceof TokenizerError) throw e;
    if (!required && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TokenizerError(source, `cannot read ${path}: ${why(e)}`);
  }
  if (size > MAX_TOKENIZER_JSON_BYTES) throw new ResourceLimit('file-bytes', size, MAX_TOKENIZER_JSON_BYTES, path);
  let text: string;
  try {
    text = strict.decode(readFileSync(path));
  } catch (e) {
    throw new TokenizerError(source, e instanceof TypeError ? `${path} is not UTF-8 text` : `cannot read ${path}: ${why(e)}`);
  }
  checkJsonTextDepth(text, path);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new TokenizerError(source, `${path} is not JSON (${messageOf(e)})`);
  }
}

function hfFiles(dir: string, tokenizerPath: string, source: string): HfTokenizerFiles {
  return {
    tokenizer: readJson(tokenizerPath, source, true),
    tokenizerConfig: readJson(join(dir, 'tokenizer_config.json'), source, false),
    config: readJson(join(dir, 'config.json'), source, false),
    generationConfig: readJson(join(dir, 'generation_config.json'), source, false),
  };
}


/** The tokenizer of an opened GGUF (its metadata only). */
export function tokenizerFromGguf(file: Pick<GgufFile, 'metadata'>, source = 'GGUF'): Tokenizer {
  return tokenizerFromSpec(specFromGguf(file.metadata, source));
}

/** The tokenizer of parsed Hugging Face files (tokenizer.json and, optionally, its configs). */
export function tokenizerFromHf(files: HfTokenizerFiles, source = 'tokenizer.json'): Tokenizer {
  return tokenizerFromSpec(specFromHf(files, source));
}

/** Loads the tokenizer of a tokenizer.json, a model directory or a GGUF file. */
export function loadTokenizer(source: string): Tokenizer {
  let st;
  try {
    st = statSync(source);
  } catch (e) {
    throw new UsageError(`cannot read ${source}: ${why(e)}`);
  }
  if (st.isDirectory()) {
    const path = join(source, 'tokenizer.json');
    try {
      statSync(path);
    } catch {
      throw new TokenizerError(source, 'the directory has no tokenizer.json');
    }
    return tokenizerFromHf(hfFiles(source, path, source), source);
  }
  if (!st.isFile()) throw new UsageError(`cannot read ${source}: not a regular file or directory`);
  if (hasGgufMagic(source)) {
    const file = openGguf(source);
    try {
      return tokenizerFromGguf(file, source);
    } finally {
      file.close();
    }
  }
  if (basename(source) === 'tokenizer.json') return tokenizerFromHf(hfFiles(dirname(source), source, source), source);
  return tokenizerFromHf({ tokenizer: readJson(source, source, true) }, source);
}
