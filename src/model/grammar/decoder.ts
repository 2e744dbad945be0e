/**
 * Constrained decoding: which token ids keep the output a prefix the grammar allows. The vocabulary's
 * bytes are laid out once per tokenizer as a trie in pre-order (flat arrays); a step walks the trie
 * from the grammar's state, going into a child only while the state survives its byte, so the walk
 * visits only live prefixes. Inside a string's body (most of the work of JSON), where the state is a
 * count, each token is judged by its run of plain bytes instead (one pass over a precomputed array).
 * End-of-sequence ids are allowed exactly when the grammar is complete, and alone when nothing can follow.
 */
import { InvalidOptions } from '../../errors/index.js';
import type { Tokenizer } from '../tokenizer/types.js';
import {
  advance, advanceBytes, afterString, canContinue, initialState, isComplete, isPlain, stringBodies, stringBody,
  type Grammar, type GrammarState,
} from './grammar.js';

/** A tokenizer's vocabulary as bytes: a pre-order trie and each token's run of plain string bytes. */
export class VocabularyTrie {
  /** Each id's bytes (empty for special tokens and ids with none: never allowed by a grammar). */
  readonly bytes: readonly Uint8Array[];
  /** The leading bytes of each id that may stand in a generated string's body. */
  readonly plainRun: Uint16Array;
  /** Trie node i: its byte, the end of its subtree (pre-order), the ids ending there. */
  readonly nodeByte: Uint8Array;
  readonly nodeEnd: Int32Array;
  readonly idsStart: Int32Array;
  readonly ids: Int32Array;
  /** quotesBefore[i]: how many nodes before node i (pre-order) have the byte `"`; a subtree's count is a difference. */
  readonly quotesBefore: Int32Array;
  /** Each id's length in bytes. */
  readonly lengths: Uint16Array;
  /** 1 for the ids all of plain bytes, and how many; the longest id in bytes. */
  readonly plainOnly: Uint8Array;
  plainCount = 0;
  maxLength = 0;

  constructor(readonly size: number, bytesOf: (id: number) => Uint8Array | undefined) {
    const bytes: Uint8Array[] = [];
    const plain = new Uint16Array(size);
    for (let id = 0; id < size; id++) {
      const b = bytesOf(id) ?? new Uint8Array(0);
      bytes.push(b);
      let r = 0;
      while (r < b.length && isPlain(b[r]!)) r++;
      plain[id] = Math.min(r, 0xffff);
    }
    // The ids in byte order are the trie's pre-order: each id makes the nodes of its bytes past the
    // prefix it shares with the one before, and the nodes past that prefix are closed.
    const order = [];
    for (let id = 0; id < size; id++) if (bytes[id]!.length > 0) order.push(id);
    // Latin-1 strings order as their bytes do.
    const keys = bytes.map((b) => (b.length === 0 ? '' : String.fromCharCode(...b)));
    order.sort((x, y) => (keys[x]! < keys[y]! ? -1 : keys[x]! > keys[y]! ? 1 : x - y));
    const nodeByte: number[] = [0];
    const nodeEnd: number[] = [0];
    const idsStart: number[] = [0];
    const ids: number[] = [];
    const path: number[] = [0];
    let prev: Uint8Array = new Uint8Array(0);
    for (const id of order) {
      const b = bytes[id]!;
      let l = 0;
      while (l < prev.length && l < b.length && prev[l] === b[l]) l++;
      while (path.length > l + 1) nodeEnd[path.pop()!] = nodeByte.length;
      for (let d = l; d < b.length; d++) {
        path.push(nodeByte.length);
        nodeByte.push(b[d]!);
        nodeEnd.push(0);
        idsStart.push(ids.length);
      }
      ids.push(id);
      prev = b;
    }
    while (path.length > 0) nodeEnd[path.pop()!] = nodeByte.length;
    idsStart.push(ids.length);
    const nodes = nodeByte.length;
    this.bytes = bytes;
    this.plainRun = plain;
    this.nodeByte = Uint8Array.from(nodeByte);
    this.nodeEnd = Int32Array.from(nodeEnd);
    this.idsStart = Int32Array.from(idsStart);
    this.ids = Int32Array.from(ids);
    this.lengths = Uint16Array.from(bytes, (b) => Math.min(b.length, 0xffff));
    this.plainOnly = new Uint8Array(size);
    for (let id = 0; id < size; id++) {
      const len = bytes[id]!.length;
      if (len > this.maxLength) this.maxLength = len;
      if (len > 0 && plain[id] === len) { this.plainOnly[id] = 1; this.plainCount++; }
    }
    this.quotesBefore = new Int32Array(nodes + 1);
    for (let i = 0; i < nodes; i++) this.quotesBefore[i + 1] = this.quotesBefore[i]! + (this.nodeByte[i] === 0x22 && i > 0 ? 1 : 0);
  }

  get nodes(): number {
    return this.nodeByte.length;
  }
}

const tries = new WeakMap<Tokenizer, VocabularyTrie>();

/** Whether `tok`'s vocabulary trie is built already (a served model builds it while it loads). */
export function hasVocabularyTrie(tok: Tokenizer): boolean {
  return tries.has(tok);
}

/** The trie of a tokenizer's vocabulary, built once per tokenizer. */
export function vocabularyTrie(tok: Tokenizer): VocabularyTrie {
  let t = tries.get(tok);
  if (t === undefined) {
    t = new VocabularyTrie(tok.vocabSize, (id) => (tok.isSpecial(id) || tok.tokenText(id) === undefined ? undefined : tok.decodeBytes([id])));
    tries.set(tok, t);
  }
  return t;
}

/**
 * Per string being written (keyed by what follows it, the same object while the string is written):
 * for each trie node of a closing quote, the ids it allows past the quote, which do not depend on the
 * string's count (only reaching the quote does).
 */
export type QuoteCache = WeakMap<object, Map<number, Int32Array>>;

/** Fills `allowed` (1 per id) with the ids whose bytes keep `state` alive; returns how many. */
export function allowedIds(trie: VocabularyTrie, state: GrammarState, allowed: Uint8Array, cache?: QuoteCache): number {
  allowed.fill(0);
  let count = 0;
  let sink: number[] | undefined;
  // Pre-order walk: from node i with state s, each child j (i + 1, then nodeEnd[j], ...) under the state after its byte.
  const { nodeByte, nodeEnd, idsStart, ids } = trie;
  const emit = (i: number): void => {
    if (sink !== undefined) { for (let k = idsStart[i]!; k < idsStart[i + 1]!; k++) sink.push(ids[k]!); return; }
    for (let k = idsStart[i]!; k < idsStart[i + 1]!; k++) { allowed[ids[k]!] = 1; count++; }
  };
  // Inside a string's body the state is a count: the subtree is walked on the count alone, and the
  // grammar's state is made again only past the closing quote.
  const walkBody = (i: number, n: number, min: number, max: number, after: () => GrammarState): void => {
    emit(i);
    const end = nodeEnd[i]!;
    for (let j = i + 1; j < end; j = nodeEnd[j]!) {
      const b = nodeByte[j]!;
      if (isPlain(b)) { if (n < max) walkBody(j, n + 1, min, max, after); } else if (b === 0x22 && n >= min) {
        const s = after();
        if (s.length > 0) walk(j, s);
      }
    }
  };
  const step = (j: number, s: GrammarState): void => {
    const next = advance(s, nodeByte[j]!);
    if (next.length === 0) return;
    const body = stringBody(next);
    if (body === undefined) { walk(j, next); return; }
    let memo: GrammarState | undefined;
    walkBody(j, body.n, body.min, body.max, () => (memo ??= afterString(body.rest)));
  };
  const walk = (i: number, s: GrammarState): void => {
    emit(i);
    const end = nodeEnd[i]!;
    for (let j = i + 1; j < end; j = nodeEnd[j]!) step(j, s);
  };
  const bodies = stringBodies(state);
  if (bodies !== undefined) {
    // In a string's body (every stack): the ids all of plain bytes by their length alone; those with
    // a quote after their plain run through the trie, only along the paths that lead to a quote.
    const room = Math.max(...bodies.map((x) => x.max - x.n));
    const { lengths, plainRun, quotesBefore } = trie;
    if (room >= trie.maxLength) { allowed.set(trie.plainOnly); count = trie.plainCount; } else {
      for (let id = 0; id < trie.size; id++) {
        const len = lengths[id]!;
        if (len > 0 && plainRun[id] === len && len <= room) { allowed[id] = 1; count++; }
      }
    }
    for (const body of bodies) {
      const key = body.rest ?? trie;
      let byQuote = cache?.get(key);
      if (byQuote === undefined) { byQuote = new Map(); cache?.set(key, byQuote); }
      let memo: GrammarState | undefined;
      const toQuotes = (i: number, n: number): void => {
        const end = nodeEnd[i]!;
        for (let j = i + 1; j < end; j = nodeEnd[j]!) {
          const b = nodeByte[j]!;
          if (isPlain(b)) { if (n < body.max && quotesBefore[nodeEnd[j]!]! > quotesBefore[j + 1]!) toQuotes(j, n + 1); } else if (b === 0x22 && n >= body.min) {
            let got = byQuote.get(j);
            if (got === undefined) {
              memo ??= afterString(body.rest);
              sink = [];
              if (memo.length > 0) walk(j, memo);
              got = Int32Array.from(sink);
              sink = undefined;
              byQuote.set(j, got);
            }
            for (const id of got) allowed[id] = 1;
            count += got.length;
          }
        }
      };
      toQuotes(0, body.n);
    }
    return count;
  }
  const end = nodeEnd[0]!;
  for (let j = 1; j < end; j = nodeEnd[j]!) step(j, state);
  return count;
}

/**
 * One generation's constraint: masks each step's logits to the ids the grammar allows (the rest -inf;
 * end-of-sequence only when the grammar is complete, and then alone if nothing can follow), and
 * follows the chosen ids.
 */
export class ConstrainedDecoder {
  readonly trie: VocabularyTrie;
  #state: GrammarState;
  readonly #allowed: Uint8Array;
  readonly #quotes: QuoteCache = new WeakMap();
  /** Time spent masking and following, in ms (for the bench). */
  maskMs = 0;
  steps = 0;

  constructor(readonly grammar: Grammar, tokenizer: Tokenizer | null, readonly eosIds: readonly number[], readonly vocab: number) {
    if (tokenizer === null) throw new InvalidOptions('constraint', 'constrained decoding needs the model\'s tokenizer (this model has none)');
    this.trie = vocabularyTrie(tokenizer);
    this.#state = initialState(grammar);
    this.#allowed = new Uint8Array(this.trie.size);
  }

  get state(): GrammarState {
    return this.#state;
  }

  /** True when the output so far is a whole match. */
  get complete(): boolean {
    return isComplete(this.#state);
  }

  /** The logits with every id the grammar does not allow at -inf (a copy). */
  mask(logits: ArrayLike<number>): Float64Array {
    const t0 = performance.now();
    const out = new Float64Array(logits.length).fill(-Infinity);
    const done = isComplete(this.#state);
    const more = canContinue(this.#state);
    let n = 0;
    if (more) {
      n = allowedIds(this.trie, this.#state, this.#allowed, this.#quotes);
      const a = this.#allowed;
      const m = Math.min(a.length, logits.length);
      for (let id = 0; id < m; id++) if (a[id] === 1) out[id] = logits[id]!;
    }
    if (!done && n === 0) throw new InvalidOptions('constraint', `no token continues the ${this.grammar.source} grammar here (a reference nested past its bound?)`);
    if (done) for (const id of this.eosIds) if (id < out.length) out[id] = logits[id]!;
    this.maskMs += performance.now() - t0;
    this.steps++;
    return out;
  }

  /** Follows the chosen id (an end-of-sequence id ends the match and changes nothing). */
  accept(id: number): void {
    if (this.eosIds.includes(id)) return;
    const t0 = performance.now();
    const b = this.trie.bytes[id];
    const next = b === undefined || b.length === 0 ? [] : advanceBytes(this.#state, b);
    if (next.length === 0) throw new InvalidOptions('constraint', `token ${id} does not continue the ${this.grammar.source} grammar`);
    this.#state = next;
    this.maskMs += performance.now() - t0;
  }
}
