/**
 * Tool calls a model writes on its own (`tool_choice` `auto`), read from its answer: one format per chat
 * template family (a table, so another family is one entry), each a block between an opening and a
 * closing tag whose body names a function and its arguments. A block that closes, parses and names one
 * of the request's tools becomes a call; any other block (JSON that does not parse, an unknown name, a
 * block cut off at the end of the answer) stays text. Whitespace next to a call is dropped. Fed the
 * text piece by piece as it streams, the reader gives out text as soon as it cannot begin a block, and a
 * call when its block closes, so the streamed pieces and calls equal the answer read whole.
 */

import { InvalidOptions } from '../errors/index.js';

/** A call read from a block: the function's name and its arguments as a JSON string. */
export interface ParsedCall {
  readonly name: string;
  readonly arguments: string;
}

/** How one template family writes a tool call. */
export interface ToolCallFormat {
  readonly open: string;
  readonly close: string;
  /** The call a block's body (the text between the tags) holds, or undefined when it holds none. */
  parse(body: string): ParsedCall | undefined;
}

/** Qwen's (Hermes-style): `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`. */
const QWEN: ToolCallFormat = {
  open: '<tool_call>',
  close: '</tool_call>',
  parse(body) {
    let v: unknown;
    try { v = JSON.parse(body); } catch { return undefined; }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const o = v as Record<string, unknown>;
    if (typeof o['name'] !== 'string') return undefined;
    const args = o['arguments'] ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
    return { name: o['name'], arguments: JSON.stringify(args) };
  },
};

/** The tool-call formats by template family. */
export const TOOL_CALL_FORMATS: Readonly<Record<string, ToolCallFormat>> = { qwen: QWEN };

/** The family whose format is read when a model names none (Qwen's, the form forced calls take too). */
export const DEFAULT_TOOL_CALL_FAMILY = 'qwen';

/** The format of a template family; InvalidOptions naming the family when there is none. */
export function toolCallFormat(family: string): ToolCallFormat {
  const f = TOOL_CALL_FORMATS[family];
  if (f === undefined || !Object.hasOwn(TOOL_CALL_FORMATS, family)) throw new InvalidOptions('toolCallFamily', `a template family with a tool-call format (${Object.keys(TOOL_CALL_FORMATS).join(', ')}), not ${JSON.stringify(family)}`);
  return f;
}

/** A piece of a streamed answer: text, or a whole call (its index among the answer's calls). */
export type ToolPiece = { readonly text: string } | { readonly call: ParsedCall; readonly index: number };

/** The length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialTag(s: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, s.length); k > 0; k--) if (s.endsWith(tag.slice(0, k))) return k;
  return 0;
}

/** One answer's tool calls, read as its text comes. */
export class ToolCallReader {
  // text: outside a block; afterCall: whitespace after a call is dropped; block: inside an opened block.
  #state: 'text' | 'afterCall' | 'block' = 'text';
  #held = '';
  // The whitespace before the open block: dropped if it is a call, text again if not.
  #gap = '';
  #calls = 0;

  /** `tools`: the names of the request's tools; a block naming another stays text. */
  constructor(private readonly format: ToolCallFormat, private readonly tools: ReadonlySet<string>) {}

  /** Adds a piece of text; returns what is now certain, in order. */
  push(text: string): ToolPiece[] {
    this.#held += text;
    const out: ToolPiece[] = [];
    const { open, close } = this.format;
    for (;;) {
      if (this.#state === 'afterCall') {
        this.#held = this.#held.trimStart();
        if (this.#held === '') break;
        this.#state = 'text';
      } else if (this.#state === 'text') {
        const at = this.#held.indexOf(open);
        if (at >= 0) {
          const before = this.#held.slice(0, at).trimEnd();
          if (before !== '') out.push({ text: before });
          this.#gap = this.#held.slice(before.length, at);
          this.#held = this.#held.slice(at + open.length);
          this.#state = 'block';
          continue;
        }
        // All but a possible start of the tag and the whitespace before it, which a call would drop.
        const sure = this.#held.slice(0, this.#held.length - partialTag(this.#held, open)).trimEnd();
        if (sure !== '') out.push({ text: sure });
        this.#held = this.#held.slice(sure.length);
        break;
      } else {
        const at = this.#held.indexOf(close);
        if (at < 0) break;
        const body = this.#held.slice(0, at);
        this.#held = this.#held.slice(at + close.length);
        const call = this.format.parse(body);
        if (call !== undefined && this.tools.has(call.name)) {
          out.push({ call, index: this.#calls++ });
          this.#state = 'afterCall';
        } else {
          out.push({ text: this.#gap + open + body + close });
          this.#state = 'text';
        }
      }
    }
    return merged(out);
  }

  /** What is still held, at the end of the answer: a block that never closed is text. */
  end(): ToolPiece[] {
    const held = this.#held;
    this.#held = '';
    const state = this.#state;
    this.#state = 'text';
    if (state === 'block') return [{ text: this.#gap + this.format.open + held }];
    return held !== '' ? [{ text: held }] : [];
  }
}

/** Adjacent text pieces joined. */
function merged(pieces: ToolPiece[]): ToolPiece[] {
  const out: ToolPiece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if ('text' in p && last !== undefined && 'text' in last) out[out.length - 1] = { text: last.text + p.text };
    else out.push(p);
  }
  return out;
}

/** A whole answer read: the text outside the calls (null when there is none) and the calls. */
export function readToolCalls(text: string, format: ToolCallFormat, tools: ReadonlySet<string>): { content: string | null; calls: ParsedCall[] } {
  const r = new ToolCallReader(format, tools);
  let content = '';
  const calls: ParsedCall[] = [];
  for (const p of [...r.push(text), ...r.end()]) {
    if ('text' in p) content += p.text;
    else calls.push(p.call);
  }
  return { content: content === '' ? null : content, calls };
}
