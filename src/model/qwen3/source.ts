/**
 * What a model path holds: a GGUF file (told by its magic), or a model directory with `model.q4nx`
 * and `config.json` (`gguf pack`'s output, or a published Q4NX model). Either gives the config, the
 * weights as byte ranges and the tokenizer (the GGUF's own, or the directory's tokenizer.json); a
 * model without a usable tokenizer still runs token ids, and says why when text is asked of it.
 */
import { createHash } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EngineError, InvalidInput, messageOf, TokenizerError, UsageError } from '../../errors/index.js';
import { readFileRange } from '../../io/fileRange.js';
import { readRegularFile } from '../../io/files.js';
import { hasGgufMagic, openGguf } from '../gguf/reader.js';
import type { GgufFile } from '../gguf/types.js';
import { readQ4nxHeader } from '../q4nx/container.js';
import { loadTokenizer, tokenizerFromGguf } from '../tokenizer/load.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { configFromGguf, configFromJson, type Qwen3Config } from './config.js';
import { ggufWeights, q4nxWeights, type ModelWeights } from './weights.js';
import { bindNormsPlusOne } from './normShift.js';
import { parseJsonFile } from '../../ir/jsonText.js';

/** A model's files, read as far as its headers. */
export interface ModelSource {
  /** The real path of the GGUF or the directory. */
  readonly path: string;
  readonly kind: 'gguf' | 'q4nx';
  readonly config: Qwen3Config;
  readonly weights: ModelWeights;
  /** The tokenizer, or why there is none. */
  readonly tokenizer: Tokenizer | TokenizerError;
}


function tokenizerOr(load: () => Tokenizer, source: string): Tokenizer | TokenizerError {
  try {
    return load();
  } catch (e) {
    if (e instanceof TokenizerError) return e;
    return new TokenizerError(source, messageOf(e));
  }
}

/**
 * GGUF tokenizers already built in this process, by file identity: the real path, device, inode, size
 * and mtime, and the SHA-256 of the header (every byte before the data section, which holds all the
 * metadata a tokenizer is built from). The hash is what makes a hit sound: a file rewritten in place
 * within one mtime tick, at the same size, still misses. A Tokenizer is immutable (its memo of pieces
 * gives the same ids either way), so loads of one file share it, and with it the chat template and
 * grammar tables keyed by it. The last few files are kept; the header read and hash cost a few ms
 * where building a 150k-token tokenizer costs ~100 ms.
 */
const TOKENIZERS = new Map<string, Tokenizer>();
const TOKENIZER_FILES = 4;

/** The cache key of a GGUF's tokenizer (see TOKENIZERS). */
function tokenizerKey(real: string, f: GgufFile): string {
  const st = statSync(real, { bigint: true });
  const hash = createHash('sha256').update(readFileRange(real, 0, f.dataOffset, null)).digest('hex');
  return `${real}\0${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}\0${hash}`;
}

/** A GGUF's tokenizer, built once per file identity (TOKENIZERS). */
function cachedGgufTokenizer(real: string, f: GgufFile): Tokenizer {
  const key = tokenizerKey(real, f);
  const hit = TOKENIZERS.get(key);
  if (hit !== undefined) {
    TOKENIZERS.delete(key);
    TOKENIZERS.set(key, hit);
    return hit;
  }
  const t = tokenizerFromGguf(f, real);
  TOKENIZERS.set(key, t);
  if (TOKENIZERS.size > TOKENIZER_FILES) TOKENIZERS.delete(TOKENIZERS.keys().next().value!);
  return t;
}

/** Opens a model path; a missing path is a UsageError, a file that is neither kind an InvalidInput. */
export function openModelSource(path: string): ModelSource {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new UsageError(`no such model: ${path} (a GGUF file or a model directory)`);
  const real = realpathSync(abs);
  const st = statSync(real);
  if (st.isDirectory()) return openDirectory(real);
  if (!st.isFile()) throw new InvalidInput(path, 'a model is a GGUF file or a model directory, not a special file');
  if (!hasGgufMagic(real)) throw new InvalidInput(path, 'not a GGUF file (no GGUF magic) and not a model directory');
  const f = openGguf(real);
  try {
    const config = configFromGguf(f);
    const weights = ggufWeights(f, real, config);
    return { path: real, kind: 'gguf', config, weights, tokenizer: tokenizerOr(() => cachedGgufTokenizer(real, f), real) };
  } finally {
    f.close();
  }
}

function openDirectory(dir: string): ModelSource {
  const q4nx = join(dir, 'model.q4nx');
  const configPath = join(dir, 'config.json');
  if (!existsSync(q4nx)) throw new InvalidInput(dir, 'a model directory holds model.q4nx (gguf pack writes one); this one has none');
  if (!existsSync(configPath)) throw new InvalidInput(dir, 'a model directory holds config.json; this one has none');
  let json: unknown;
  try {
    json = parseJsonFile(readRegularFile(configPath).toString('utf8'), configPath);
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new InvalidInput(configPath, `config.json is not JSON: ${messageOf(e)}`);
  }
  const config = configFromJson(json, configPath);
  const bound = q4nxWeights(readQ4nxHeader(q4nx), q4nx, config);
  // A Gemma 3 directory in Hugging Face's layout (norms stored as w): the programs get 1 + w.
  const weights = config.normWeightsPlusOne === true ? bindNormsPlusOne(bound) : bound;
  const tokenizer = existsSync(join(dir, 'tokenizer.json'))
    ? tokenizerOr(() => loadTokenizer(dir), dir)
    : new TokenizerError(dir, 'the model directory has no tokenizer.json (gguf pack copies one with --tokenizer); give token ids');
  return { path: dir, kind: 'q4nx', config, weights, tokenizer };
}
