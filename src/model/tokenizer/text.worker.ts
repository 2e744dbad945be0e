/**
 * The text worker's child process: loads the tokenizer named by its argument's `source` once, then
 * renders chats and encodes texts one call at a time. Its heap is bounded by the TextWorker that started
 * it, which kills it when a call runs past its time; here only the rendered prompt's size is bounded.
 * @internal
 */
import { EngineError, messageOf, ResourceLimit, TokenizerError } from '../../errors/index.js';
import { loadTokenizer } from './load.js';
import { templatePlace, type TextCall, type TextReply, type TextWorkerData } from './textProtocol.js';
import type { Tokenizer } from './types.js';

const data = JSON.parse(process.argv[2] ?? '{}') as TextWorkerData;
const post = (m: TextReply): void => { process.send?.(m); };
// The parent went away: nothing is left to answer.
process.on('disconnect', () => process.exit(0));
const wire = (e: unknown) => (e instanceof EngineError ? e : new TokenizerError(data.source, messageOf(e))).toWire();

/** V8's longest string (2^29 - 24 code units on 64-bit): an output past it fails as "Invalid string length". */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

function maxTokenBytes(tok: Tokenizer): number {
  let most = 1;
  for (let id = 0; id < tok.vocabSize; id++) most = Math.max(most, tok.decodeBytes([id]).length);
  return most;
}

/** UTF-8 bytes of a rendered prompt, refused past `max` before the string is flattened to measure it. */
function checkRendered(prompt: string, max: number, what: string, place: string): void {
  // A code unit is at least one byte: a string longer than the bound is refused without walking it.
  if (prompt.length > max) throw new ResourceLimit(what, prompt.length, max, place);
  const bytes = Buffer.byteLength(prompt, 'utf8');
  if (bytes > max) throw new ResourceLimit(what, bytes, max, place);
}

function serve(tok: Tokenizer, c: TextCall): void {
  if (c.type === 'encode') {
    post({ type: 'done', id: c.id, ids: tok.encode(c.text, c.options) });
    return;
  }
  let prompt: string;
  try {
    prompt = tok.applyChatTemplate(c.messages, c.options);
  } catch (e) {
    // A template whose output outgrew V8's longest string wanted more than any bound allows.
    if (e instanceof TokenizerError && /Invalid string length/.test(e.reason)) throw new ResourceLimit('template-bytes', MAX_STRING_LENGTH, data.templateBytes, templatePlace(data.source));
    throw e;
  }
  checkRendered(prompt, data.templateBytes, 'template-bytes', templatePlace(data.source));
  if (c.maxPromptBytes !== undefined) checkRendered(prompt, c.maxPromptBytes, 'prompt-bytes', 'messages');
  post({ type: 'encoding', id: c.id });
  post({ type: 'done', id: c.id, prompt, ids: tok.encode(prompt, { addSpecial: false }) });
}

let tok: Tokenizer | undefined;
try {
  tok = loadTokenizer(data.source);
  post({ type: 'ready', maxTokenBytes: maxTokenBytes(tok) });
} catch (e) {
  post({ type: 'loadFailed', error: wire(e) });
}
if (tok !== undefined) {
  const t = tok;
  process.on('message', (c: TextCall) => {
    try {
      serve(t, c);
    } catch (e) {
      post({ type: 'failed', id: c.id, error: wire(e) });
    }
  });
}
