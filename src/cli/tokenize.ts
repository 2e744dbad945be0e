/**
 * `npu-offload tokenize SOURCE [--decode | --chat] [--json]`: one JSON value per stdin line (a string;
 * with --decode an array of ids; with --chat an array of { role, content }), one result line each. A
 * bad line gets its typed error on that line (`{ "error": ... }` with --json, `line N: error [...]` on
 * stderr without) and the rest go on; the exit code is then 1. Blank lines are skipped.
 */
import { EngineError, InvalidInput, messageOf, ResourceLimit, UsageError } from '../errors/index.js';
import { checkMessages } from '../model/tokenizer/chat.js';
import { loadTokenizer } from '../model/tokenizer/load.js';
import { TextWorker } from '../model/tokenizer/textWorker.js';
import type { Tokenizer } from '../model/tokenizer/types.js';
import type { CliCommand } from './command.js';
import { EXIT, errorJson, type Io } from './output.js';

/** The flags of `tokenize`. */
export interface TokenizeFlags {
  readonly decode?: boolean;
  readonly chat?: boolean;
  readonly json?: boolean;
  readonly skipSpecial?: boolean;
  readonly parseSpecial?: boolean;
  readonly addSpecial?: boolean;
  readonly generationPrompt?: boolean;
  readonly thinking?: boolean;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The longest line read; a longer one is refused (ResourceLimit) and skipped, and reading goes on. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** A line's bytes, or the length of a line past MAX_LINE_BYTES (whose bytes were dropped). */
type Line = Uint8Array | { readonly tooLong: number };

/** Lines of a byte stream, split at LF, without decoding them (a bad line must not spoil the others). */
async function* lines(input: AsyncIterable<Uint8Array | string>, max: number): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let held = 0;
  const take = (tail: Buffer): Line => {
    const line: Line = held + tail.length > max ? { tooLong: held + tail.length } : Buffer.concat([...parts, tail]);
    parts = [];
    held = 0;
    return line;
  };
  for await (const chunk of input) {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let nl: number;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      yield take(buf.subarray(0, nl));
      buf = buf.subarray(nl + 1);
    }
    // A line past the bound keeps only its length, so a huge line cannot exhaust memory.
    if (held + buf.length > max) parts = [];
    else parts.push(buf);
    held += buf.length;
  }
  if (held > 0) yield take(Buffer.alloc(0));
}

/** The same error with its path under `line N`, so the user sees which line and which part. */
function atLine(e: unknown, n: number): unknown {
  return e instanceof InvalidInput ? new InvalidInput(`line ${n}${e.path}`, e.reason) : e;
}

async function one(tok: Tokenizer, text: TextWorker | undefined, value: unknown, o: TokenizeFlags): Promise<Record<string, unknown>> {
  if (o.decode === true) {
    if (!Array.isArray(value)) throw new InvalidInput('', 'with --decode a line must be a JSON array of token ids');
    return { text: tok.decode(value as number[], { skipSpecial: o.skipSpecial === true }) };
  }
  if (text !== undefined) {
    // The model's template runs in the text worker, bounded in time, memory and output (docs/LIMITS.md).
    checkMessages(value);
    const r = await text.encodeChat(value, {
      addGenerationPrompt: o.generationPrompt !== false,
      ...(o.thinking === false ? { enableThinking: false } : {}),
    });
    return { prompt: r.prompt, ids: r.ids };
  }
  if (typeof value !== 'string') throw new InvalidInput('', 'a line must be a JSON string (--decode takes arrays of ids, --chat arrays of messages)');
  return { ids: tok.encode(value, { addSpecial: o.addSpecial !== false, parseSpecial: o.parseSpecial !== false }) };
}

function human(tok: Tokenizer, r: Record<string, unknown>, io: Io): void {
  if (typeof r['text'] === 'string') { io.out(r['text']); return; }
  if (typeof r['prompt'] === 'string') io.out(r['prompt']);
  const ids = r['ids'] as number[];
  io.out(`${ids.length} token${ids.length === 1 ? '' : 's'}: ${ids.join(' ')}`);
  if (ids.length > 0) io.out(`  ${ids.map((id) => JSON.stringify(tok.decode([id]))).join(' ')}`);
}

/** Runs `tokenize` over `input` (stdin by default); resolves with the exit code. */
export async function tokenizeCommand(source: string, o: TokenizeFlags, io: Io,
  input: AsyncIterable<Uint8Array | string> = process.stdin, maxLineBytes = MAX_LINE_BYTES): Promise<number> {
  if (o.decode === true && o.chat === true) throw new UsageError('--decode and --chat cannot be used together');
  const tok = loadTokenizer(source);
  const text = o.chat === true ? new TextWorker(source) : undefined;
  try {
    return await each(tok, text, o, io, input, maxLineBytes);
  } finally {
    await text?.close();
  }
}

async function each(tok: Tokenizer, worker: TextWorker | undefined, o: TokenizeFlags, io: Io, input: AsyncIterable<Uint8Array | string>, maxLineBytes: number): Promise<number> {
  let failed = false;
  let n = 0;
  for await (const line of lines(input, maxLineBytes)) {
    n++;
    try {
      if ('tooLong' in line) throw new ResourceLimit('line-bytes', line.tooLong, maxLineBytes, `line ${n}`);
      let text: string;
      try {
        text = strictUtf8.decode(line);
      } catch {
        throw new InvalidInput(`line ${n}`, 'is not valid UTF-8');
      }
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        throw new InvalidInput(`line ${n}`, `is not JSON (${messageOf(e)})`);
      }
      let r: Record<string, unknown>;
      try {
        r = await one(tok, worker, value, o);
      } catch (e) {
        throw atLine(e, n);
      }
      if (o.json === true) io.out(JSON.stringify(r));
      else human(tok, r, io);
    } catch (e) {
      if (!(e instanceof EngineError)) throw e;
      failed = true;
      if (o.json === true) io.out(JSON.stringify(errorJson(e)));
      else io.err(`line ${n}: error [${e.code}]: ${e.message}`);
    }
  }
  return failed ? EXIT.refused : EXIT.ok;
}

/** `tokenize SOURCE`. */
export const tokenize: CliCommand = {
  register(cli, { io, action }) {
    cli.command('tokenize')
      .description('encode text, decode ids or render chats with a model\'s tokenizer: one JSON value per stdin line, one result line each')
      .argument('<source>', 'a tokenizer.json, a model directory or a GGUF')
      .option('--decode', 'lines are arrays of ids; prints { "text" }')
      .option('--chat', 'lines are arrays of { role, content }; prints { "prompt", "ids" } from the model\'s chat template')
      .option('--skip-special', 'with --decode: leave special tokens out of the text')
      .option('--no-parse-special', 'read special-token text such as <|im_start|> as plain text')
      .option('--no-add-special', 'do not add the tokens the tokenizer puts around a text (a BOS)')
      .option('--no-generation-prompt', 'with --chat: do not open the assistant\'s turn')
      .option('--no-thinking', 'with --chat: enable_thinking=false (Qwen3: an empty think block)')
      .option('--json', 'one JSON line per input line; a bad line prints { "error": ... } and the exit code is 1')
      .action(action((s: string, o: TokenizeFlags) => tokenizeCommand(s, o, io, io.stdin)));
  },
};
