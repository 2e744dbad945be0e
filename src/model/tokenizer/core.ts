/**
 * One tokenizer over what both file kinds describe: added tokens, a normalizer, pre-tokenizers and a
 * byte-level BPE model. A tokenizer.json and a GGUF only differ in how fromJson.ts and fromGguf.ts
 * fill this in, so the two paths cannot drift apart.
 * @internal
 */
import { InvalidInput, TokenizerError } from '../../errors/index.js';
import { AddedMatcher, type AddedToken } from './added.js';
import { bpeIds, type BpeModel } from './bpe.js';
import { renderChat, type ChatSpec } from './chat.js';
import { spmIds, type SpmModel } from './spm.js';
import type { PreTokenizer } from './pretokenize.js';
import { checkIds, checkText } from './text.js';
import type { TokenBytes, TokenTexts } from './table.js';
import type { ChatMessage, ChatOptions, DecodeOptions, EncodeOptions, Tokenizer, TokenizerKind } from './types.js';

/** Everything a tokenizer is made of. */
export interface TokenizerSpec {
  readonly source: string;
  readonly kind: TokenizerKind;
  /** Byte-level BPE (merges by rank), or SentencePiece-style (joins by score, with byte fallback). */
  readonly model: BpeModel | SpmModel;
  /**
   * SentencePiece's add_space_prefix as llama.cpp applies it: a space before the text at the start and
   * after each special token found in it.
   */
  readonly spacePrefix?: boolean;
  readonly added: readonly AddedToken[];
  readonly normalize: ((s: string) => string) | null;
  readonly preTokenize: PreTokenizer;
  /** Per id: the token's text as stored, or null for an id with no token (a StringTable, table.ts). */
  readonly tokens: TokenTexts;
  /** The bytes an id decodes to (none for an id with no token). */
  readonly bytes: TokenBytes;
  readonly special: ReadonlySet<number>;
  /** Ids encode adds before and after a text when addSpecial is on. */
  readonly prefix: readonly number[];
  readonly suffix: readonly number[];
  readonly bosId: number | null;
  readonly eosIds: readonly number[];
  readonly padId: number | null;
  readonly chat: ChatSpec;
}

/** Words seen often (spaces, common words) skip BPE; long pieces are not kept. */
const CACHE_ENTRIES = 16384;
const CACHE_PIECE_CHARS = 64;

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

class SpecTokenizer implements Tokenizer {
  readonly source: string;
  readonly kind: TokenizerKind;
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosIds: readonly number[];
  readonly padId: number | null;
  readonly chatTemplate: string | null;
  private readonly raw: AddedMatcher;
  private readonly normalizedAdded: AddedMatcher;
  private readonly cache = new Map<string, number[]>();

  constructor(private readonly spec: TokenizerSpec) {
    this.source = spec.source;
    this.kind = spec.kind;
    this.vocabSize = spec.tokens.length;
    this.bosId = spec.bosId;
    this.eosIds = spec.eosIds;
    this.padId = spec.padId;
    this.chatTemplate = spec.chat.template;
    this.raw = new AddedMatcher(spec.added.filter((t) => !t.normalized));
    const norm = spec.normalize;
    this.normalizedAdded = new AddedMatcher(spec.added.filter((t) => t.normalized)
      .map((t) => (norm === null ? t : { ...t, content: norm(t.content) })));
  }

  private piece(p: string, out: number[]): void {
    const hit = this.cache.get(p);
    if (hit !== undefined) { for (const id of hit) out.push(id); return; }
    const m = this.spec.model;
    const ids = 'type' in m ? spmIds(m, p) : bpeIds(m, p);
    // A byte-level loader checked that every byte has a token; a SentencePiece file may lack some.
    if (ids.includes(-1)) {
      throw new TokenizerError(this.source, 'type' in m ? `tokenizer.ggml.tokens: a byte of ${JSON.stringify(p)} has no <0xNN> token to fall back to`
        : `a character of ${JSON.stringify(p)} has no token`);
    }
    if (p.length <= CACHE_PIECE_CHARS) {
      if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
      this.cache.set(p, ids);
    }
    for (const id of ids) out.push(id);
  }

  private plain(text: string, parseSpecial: boolean, out: number[]): void {
    const normalized = this.spec.normalize === null ? text : this.spec.normalize(text);
    for (const part of this.normalizedAdded.split(normalized, parseSpecial)) {
      if ('id' in part) { out.push(part.id); continue; }
      this.spec.preTokenize(part.text, (p) => this.piece(p, out));
    }
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    if (typeof text !== 'string') throw new InvalidInput('', `encode takes a string, not ${text === null ? 'null' : typeof text}`);
    checkText(text, '');
    const parseSpecial = options.parseSpecial ?? true;
    const out: number[] = [];
    if (options.addSpecial ?? true) out.push(...this.spec.prefix);
    let afterSpecial = true;
    for (const part of this.raw.split(text, parseSpecial)) {
      if ('id' in part) { out.push(part.id); afterSpecial = true; continue; }
      if (part.text === '') continue;
      this.plain(this.spec.spacePrefix === true && afterSpecial ? ` ${part.text}` : part.text, parseSpecial, out);
      afterSpecial = false;
    }
    if (options.addSpecial ?? true) out.push(...this.spec.suffix);
    return out;
  }

  decodeBytes(ids: readonly number[], options: DecodeOptions = {}): Uint8Array {
    if (!Array.isArray(ids)) throw new InvalidInput('', 'ids must be an array of token ids');
    checkIds(ids, this.vocabSize, '');
    const skip = options.skipSpecial ?? false;
    const bytes = this.spec.bytes;
    let n = 0;
    for (const id of ids) if (!(skip && this.spec.special.has(id))) n += bytes.size(id);
    const out = new Uint8Array(n);
    let at = 0;
    for (const id of ids) {
      if (skip && this.spec.special.has(id)) continue;
      bytes.copy(id, out, at);
      at += bytes.size(id);
    }
    return out;
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    return lossy.decode(this.decodeBytes(ids, options));
  }

  tokenText(id: number): string | undefined {
    return this.spec.tokens.get(id) ?? undefined;
  }

  isSpecial(id: number): boolean {
    return this.spec.special.has(id);
  }

  applyChatTemplate(messages: readonly ChatMessage[], options: ChatOptions = {}): string {
    return renderChat(this.spec.chat, this.source, messages, options);
  }

  encodeChat(messages: readonly ChatMessage[], options: ChatOptions = {}): { prompt: string; ids: number[] } {
    const prompt = this.applyChatTemplate(messages, options);
    return { prompt, ids: this.encode(prompt, { addSpecial: false }) };
  }
}

/** The tokenizer a spec describes. */
export function tokenizerFromSpec(spec: TokenizerSpec): Tokenizer {
  return new SpecTokenizer(spec);
}

/** Tokens that end a turn in the chat formats of common models; a file that has one as a special token stops there too. */
export const END_OF_TURN = ['<|im_end|>', '<|endoftext|>', '<|eot_id|>', '<|end_of_text|>', '<|end|>', '<end_of_turn>', '<|return|>'] as const;
