/**
 * A Hugging Face tokenizer.json (with tokenizer_config.json and config.json when given) as a
 * TokenizerSpec. Byte-level BPE is what is read: the normalizers, pre-tokenizers, post-processors and
 * decoders such tokenizers use. Any other component is refused by name rather than guessed at.
 * @internal
 */
import { ResourceLimit, TokenizerError } from '../../errors/index.js';
import { DEFAULT_LIMITS, LIMIT_NAMES } from '../../ir/limits.js';
import type { AddedToken } from './added.js';
import { ID_LIMIT, buildMerges } from './bpe.js';
import { BYTE_TO_CHAR, tokenBytes } from './byteLevel.js';
import { END_OF_TURN, type TokenizerSpec } from './core.js';
import { PatternError } from './pattern.js';
import { compilePattern } from './regex.js';
import { byteLevel, sequence, splitPattern, type Matcher, type PreTokenizer, type SplitBehavior } from './pretokenize.js';
import { StringTable, type TokenBytes } from './table.js';

/** The files of a Hugging Face model directory, parsed; only tokenizer.json is required. */
export interface HfTokenizerFiles {
  readonly tokenizer: unknown;
  readonly tokenizerConfig?: unknown;
  readonly config?: unknown;
  readonly generationConfig?: unknown;
}

type Obj = Readonly<Record<string, unknown>>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reader {
  constructor(readonly source: string) {}
  fail(at: string, reason: string): never {
    throw new TokenizerError(this.source, `${at === '' ? '' : `${at}: `}${reason}`);
  }
  obj(v: unknown, at: string): Obj {
    if (!isObj(v)) this.fail(at, 'must be an object');
    return v;
  }
  /** Refuses a component nested past the json-depth limit before the walk recurses into it (the files were checked as text; a value handed to tokenizerFromHf was not). */
  nested(at: string): void {
    let depth = 0;
    for (let i = at.indexOf('/'); i >= 0; i = at.indexOf('/', i + 1)) depth++;
    if (depth > DEFAULT_LIMITS.jsonDepth) throw new ResourceLimit(LIMIT_NAMES.jsonDepth, depth, DEFAULT_LIMITS.jsonDepth, `${this.source}${at}`);
  }
  type(v: Obj, at: string): string {
    if (typeof v['type'] !== 'string') this.fail(`${at}/type`, 'must be a string');
    return v['type'];
  }
  flag(v: Obj, key: string, at: string, dflt: boolean): boolean {
    const f = v[key];
    if (f === undefined || f === null) return dflt;
    if (typeof f !== 'boolean') this.fail(`${at}/${key}`, 'must be true or false');
    return f;
  }
}

const NORMALIZERS: Readonly<Record<string, (s: string) => string>> = {
  NFC: (s) => s.normalize('NFC'), NFD: (s) => s.normalize('NFD'), NFKC: (s) => s.normalize('NFKC'),
  NFKD: (s) => s.normalize('NFKD'), Lowercase: (s) => s.toLowerCase(),
};

function normalizer(r: Reader, v: unknown, at: string): ((s: string) => string) | null {
  if (v === null || v === undefined) return null;
  r.nested(at);
  const o = r.obj(v, at);
  const t = r.type(o, at);
  if (t === 'Sequence') {
    if (!Array.isArray(o['normalizers'])) r.fail(`${at}/normalizers`, 'must be an array');
    const steps = o['normalizers'].map((n: unknown, i) => normalizer(r, n, `${at}/normalizers/${i}`)).filter((f) => f !== null);
    return (s) => steps.reduce((acc, f) => f(acc), s);
  }
  const f = NORMALIZERS[t];
  if (f === undefined) r.fail(`${at}/type`, `the normalizer ${JSON.stringify(t)} is not supported (only ${Object.keys(NORMALIZERS).join(', ')} and Sequence)`);
  return f;
}

const BEHAVIORS: readonly SplitBehavior[] = ['Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];

function split(r: Reader, o: Obj, at: string): PreTokenizer {
  const p = r.obj(o['pattern'], `${at}/pattern`);
  let re: Matcher;
  if (typeof p['String'] === 'string') re = new RegExp(p['String'].replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'), 'gu');
  else if (typeof p['Regex'] === 'string') {
    try { re = compilePattern(p['Regex']); } catch (e) {
      if (e instanceof PatternError) r.fail(`${at}/pattern/Regex`, e.message);
      throw e;
    }
  } else r.fail(`${at}/pattern`, 'must be { "Regex": ... } or { "String": ... }');
  const b = o['behavior'];
  if (!BEHAVIORS.includes(b as SplitBehavior)) r.fail(`${at}/behavior`, `must be one of ${BEHAVIORS.join(', ')}`);
  return splitPattern(re, b as SplitBehavior, r.flag(o, 'invert', at, false));
}

function preTokenizer(r: Reader, v: unknown, at: string, seen: { byteLevel: boolean }): PreTokenizer {
  r.nested(at);
  const o = r.obj(v, at);
  const t = r.type(o, at);
  switch (t) {
    case 'Sequence':
      if (!Array.isArray(o['pretokenizers'])) r.fail(`${at}/pretokenizers`, 'must be an array');
      return sequence(o['pretokenizers'].map((p: unknown, i) => preTokenizer(r, p, `${at}/pretokenizers/${i}`, seen)));
    case 'Split': return split(r, o, at);
    case 'ByteLevel':
      seen.byteLevel = true;
      return byteLevel(r.flag(o, 'add_prefix_space', at, true), r.flag(o, 'use_regex', at, true));
    default: return r.fail(`${at}/type`, `the pre-tokenizer ${JSON.stringify(t)} is not supported (only byte-level BPE: Split, ByteLevel, Sequence)`);
  }
}

/** The ids a post-processor adds around a single text. */
function postProcessor(r: Reader, v: unknown, at: string): { prefix: number[]; suffix: number[] } {
  if (v === null || v === undefined) return { prefix: [], suffix: [] };
  r.nested(at);
  const o = r.obj(v, at);
  const t = r.type(o, at);
  if (t === 'ByteLevel') return { prefix: [], suffix: [] };
  if (t === 'Sequence') {
    if (!Array.isArray(o['processors'])) r.fail(`${at}/processors`, 'must be an array');
    const all = o['processors'].map((p: unknown, i) => postProcessor(r, p, `${at}/processors/${i}`));
    return { prefix: all.flatMap((p) => p.prefix), suffix: all.flatMap((p) => p.suffix) };
  }
  if (t !== 'TemplateProcessing') r.fail(`${at}/type`, `the post-processor ${JSON.stringify(t)} is not supported (only ByteLevel, TemplateProcessing, Sequence)`);
  if (!Array.isArray(o['single'])) r.fail(`${at}/single`, 'must be an array');
  const specials = r.obj(o['special_tokens'] ?? {}, `${at}/special_tokens`);
  const out = { prefix: [] as number[], suffix: [] as number[] };
  let seenText = false;
  o['single'].forEach((item: unknown, i) => {
    const it = r.obj(item, `${at}/single/${i}`);
    if (isObj(it['Sequence'])) { seenText = true; return; }
    const st = r.obj(it['SpecialToken'], `${at}/single/${i}/SpecialToken`);
    const name = st['id'];
    const entry = typeof name === 'string' ? specials[name] : undefined;
    if (!isObj(entry) || !Array.isArray(entry['ids']) || !entry['ids'].every((x) => Number.isInteger(x) && (x as number) >= 0)) {
      r.fail(`${at}/special_tokens/${String(name)}`, 'must list the ids of the special token');
    }
    (seenText ? out.suffix : out.prefix).push(...(entry['ids'] as number[]));
  });
  return out;
}

function decoderIsByteLevel(r: Reader, v: unknown, at: string): void {
  const o = r.obj(v, at);
  const t = r.type(o, at);
  if (t === 'ByteLevel') return;
  r.fail(`${at}/type`, `the decoder ${JSON.stringify(t)} is not supported (only ByteLevel)`);
}

function vocabOf(r: Reader, model: Obj): Map<string, number> {
  const v = r.obj(model['vocab'], '/model/vocab');
  const vocab = new Map<string, number>();
  for (const [tok, id] of Object.entries(v)) {
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= ID_LIMIT) r.fail(`/model/vocab/${tok}`, `id ${JSON.stringify(id)} is not a whole number below ${ID_LIMIT}`);
    vocab.set(tok, id as number);
  }
  for (let b = 0; b < 256; b++) {
    if (!vocab.has(BYTE_TO_CHAR[b]!)) r.fail('/model/vocab', `byte 0x${b.toString(16).padStart(2, '0')} (${JSON.stringify(BYTE_TO_CHAR[b])}) has no token: not a byte-level vocabulary`);
  }
  return vocab;
}

function mergePairs(r: Reader, model: Obj): [string, string][] {
  const m = model['merges'];
  if (!Array.isArray(m)) r.fail('/model/merges', 'must be an array');
  return m.map((x: unknown, i): [string, string] => {
    if (typeof x === 'string') {
      const sp = x.indexOf(' ', 1);
      if (sp < 0) r.fail(`/model/merges/${i}`, `${JSON.stringify(x)} is not two tokens separated by a space`);
      return [x.slice(0, sp), x.slice(sp + 1)];
    }
    if (Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && typeof x[1] === 'string') return [x[0], x[1]];
    return r.fail(`/model/merges/${i}`, 'must be "a b" or ["a", "b"]');
  });
}

function addedTokens(r: Reader, v: unknown): AddedToken[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) r.fail('/added_tokens', 'must be an array');
  return v.map((x: unknown, i) => {
    const at = `/added_tokens/${i}`;
    const o = r.obj(x, at);
    if (!Number.isInteger(o['id']) || (o['id'] as number) < 0 || (o['id'] as number) >= ID_LIMIT) r.fail(`${at}/id`, `must be a whole number below ${ID_LIMIT}`);
    if (typeof o['content'] !== 'string' || o['content'] === '') r.fail(`${at}/content`, 'must be a non-empty string');
    const special = r.flag(o, 'special', at, false);
    return {
      id: o['id'] as number, content: o['content'], special, normalized: r.flag(o, 'normalized', at, !special),
      lstrip: r.flag(o, 'lstrip', at, false), rstrip: r.flag(o, 'rstrip', at, false), singleWord: r.flag(o, 'single_word', at, false),
    };
  });
}

/** A token named in tokenizer_config.json: a string, `{ content }`, or absent. */
function tokenName(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isObj(v) && typeof v['content'] === 'string') return v['content'];
  return undefined;
}

function ids(v: unknown): number[] {
  if (Number.isInteger(v)) return [v as number];
  return Array.isArray(v) ? v.filter((x): x is number => Number.isInteger(x)) : [];
}

function chatTemplate(r: Reader, cfg: Obj): string | null {
  const t = cfg['chat_template'];
  if (t === undefined || t === null) return null;
  if (typeof t === 'string') return t;
  // transformers' named templates: [{ name, template }], "default" first.
  if (Array.isArray(t)) {
    const named = t.filter(isObj);
    const pick = named.find((x) => x['name'] === 'default') ?? named[0];
    if (pick !== undefined && typeof pick['template'] === 'string') return pick['template'];
  }
  return r.fail('tokenizer_config.json/chat_template', 'must be a string or a list of { name, template }');
}

/** Each token's bytes, computed when first asked for, so loading stays cheap. */
function lazyBytes(texts: StringTable): TokenBytes {
  const decoded: (Uint8Array | undefined)[] = [];
  const of = (id: number): Uint8Array => (decoded[id] ??= tokenBytes(texts.get(id) ?? ''));
  return { size: (id) => of(id).length, copy: (id, out, at) => out.set(of(id), at) };
}

/** Reads the files of a Hugging Face tokenizer; `source` names them in errors. */
export function specFromHf(files: HfTokenizerFiles, source: string): TokenizerSpec {
  const r: Reader = new Reader(source);
  const root: Obj = isObj(files.tokenizer) ? files.tokenizer : r.fail('', 'not a tokenizer.json: the top level is not an object');
  if (!isObj(root['model'])) r.fail('/model', 'missing: not a tokenizer.json');
  const model = root['model'];
  const mt = model['type'] ?? (model['merges'] !== undefined ? 'BPE' : undefined);
  if (mt !== 'BPE') r.fail('/model/type', `the model ${JSON.stringify(mt ?? null)} is not supported (only BPE)`);
  if (model['byte_fallback'] === true) r.fail('/model/byte_fallback', 'byte fallback (SentencePiece-style BPE) is not supported');
  if (model['dropout'] !== undefined && model['dropout'] !== null && model['dropout'] !== 0) r.fail('/model/dropout', 'BPE dropout is not supported');
  for (const k of ['continuing_subword_prefix', 'end_of_word_suffix']) {
    if (model[k] !== undefined && model[k] !== null && model[k] !== '') r.fail(`/model/${k}`, 'is not supported');
  }
  const vocab = vocabOf(r, model);
  const merges = buildMerges(mergePairs(r, model), vocab);
  if ('bad' in merges) r.fail(`/model/merges/${merges.bad}`, merges.why);
  const added = addedTokens(r, root['added_tokens']);
  const seen = { byteLevel: false };
  const preTokenize = root['pre_tokenizer'] === null || root['pre_tokenizer'] === undefined
    ? r.fail('/pre_tokenizer', 'missing: a byte-level BPE needs a ByteLevel pre-tokenizer')
    : preTokenizer(r, root['pre_tokenizer'], '/pre_tokenizer', seen);
  if (!seen.byteLevel) r.fail('/pre_tokenizer', 'has no ByteLevel step: only byte-level BPE is supported');
  decoderIsByteLevel(r, root['decoder'], '/decoder');
  const { prefix, suffix } = postProcessor(r, root['post_processor'], '/post_processor');

  const cfg = isObj(files.tokenizerConfig) ? files.tokenizerConfig : {};
  const config = isObj(files.config) ? files.config : {};
  const gen = isObj(files.generationConfig) ? files.generationConfig : {};
  const declared = Number.isInteger(config['vocab_size']) ? (config['vocab_size'] as number) : 0;
  let size = declared;
  for (const id of vocab.values()) size = Math.max(size, id + 1);
  for (const t of added) size = Math.max(size, t.id + 1);
  const tokens: (string | null)[] = new Array<string | null>(size).fill(null);
  for (const [tok, id] of vocab) tokens[id] = tok;
  for (const t of added) tokens[t.id] = t.content;
  // The lowest id whose token is `name`: its vocabulary entry (unless an added token took the id) or an added token.
  const addedByContent = new Map<string, number>();
  for (const t of added) { const had = addedByContent.get(t.content); if (had === undefined || t.id < had) addedByContent.set(t.content, t.id); }
  const byContent = {
    get(name: string): number | undefined {
      const v = vocab.get(name);
      const a = addedByContent.get(name);
      const fromVocab = v !== undefined && tokens[v] === name ? v : undefined;
      return fromVocab === undefined ? a : a === undefined ? fromVocab : Math.min(fromVocab, a);
    },
  };
  for (const id of [...prefix, ...suffix]) if (id >= size) r.fail('/post_processor', `adds id ${id}, which is past the vocabulary`);

  const special = new Set(added.filter((t) => t.special).map((t) => t.id));
  const idOf = (name: string | undefined): number | null => (name === undefined ? null : byContent.get(name) ?? null);
  const names = { bos_token: tokenName(cfg['bos_token']), eos_token: tokenName(cfg['eos_token']), pad_token: tokenName(cfg['pad_token']), unk_token: tokenName(cfg['unk_token']) };
  const eos = new Set<number>([...ids(config['eos_token_id']), ...ids(gen['eos_token_id'])].filter((id) => id < size));
  const eosId = idOf(names.eos_token);
  if (eosId !== null) eos.add(eosId);
  for (const t of END_OF_TURN) { const id = byContent.get(t); if (id !== undefined && special.has(id)) eos.add(id); }
  const texts = StringTable.from(tokens);
  return {
    source, kind: 'tokenizer.json', model: { vocab, merges, ignoreMerges: model['ignore_merges'] === true }, added,
    normalize: normalizer(r, root['normalizer'], '/normalizer'), preTokenize, tokens: texts,
    bytes: lazyBytes(texts), special, prefix, suffix,
    bosId: idOf(names.bos_token), eosIds: [...eos].sort((a, b) => a - b), padId: idOf(names.pad_token),
    chat: {
      template: chatTemplate(r, cfg),
      tokens: Object.fromEntries(Object.entries(names).filter(([, v]) => v !== undefined)),
    },
  };
}
