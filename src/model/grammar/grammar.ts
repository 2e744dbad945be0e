/**
 * A grammar over bytes and its matcher. A grammar is a tree of nodes (literals, sequences,
 * alternatives, JSON strings, numbers, arrays and objects, lazy references); the matcher's state is a
 * small set of stacks, each a leaf frame on top (a literal part-way, a string's body, a number's digits)
 * over the nodes still to match. A byte advances every stack; a stack that cannot take it is dropped,
 * and a state with no stack left is a dead end. A stack with nothing left is the whole grammar matched.
 *
 * Everything is immutable, so a state can be advanced along many paths at once (the vocabulary's trie).
 */

/** A property of a fixed-shape object, written in this order. */
export interface GrammarProperty {
  readonly name: string;
  readonly required: boolean;
  readonly value: GrammarNode;
}

/** A numeric range: `lo`/`hi` with exclusive flags; integers keep whole-number bounds. */
export interface NumberRange {
  readonly integer: boolean;
  readonly lo: number;
  readonly hi: number;
  readonly loExclusive: boolean;
  readonly hiExclusive: boolean;
}

/** A node of a grammar. */
export type GrammarNode =
  | { readonly k: 'lit'; readonly bytes: Uint8Array }
  | { readonly k: 'seq'; readonly xs: readonly GrammarNode[] }
  | { readonly k: 'alt'; readonly xs: readonly GrammarNode[] }
  /** A JSON string of `min` to `max` characters, written as printable ASCII without escapes. */
  | { readonly k: 'str'; readonly min: number; readonly max: number }
  | ({ readonly k: 'num' } & NumberRange)
  | { readonly k: 'array'; readonly item: GrammarNode; readonly min: number; readonly max: number }
  | { readonly k: 'object'; readonly props: readonly GrammarProperty[] }
  /** Any JSON object: free string keys, each value `value`. */
  | { readonly k: 'map'; readonly value: GrammarNode }
  | { readonly k: 'ref'; readonly name: string; readonly get: () => GrammarNode };

/** Nodes made while matching (an array or object part-way). */
type Internal =
  | { readonly k: 'arrayAt'; readonly of: Extract<GrammarNode, { k: 'array' }>; readonly n: number }
  | { readonly k: 'objectAt'; readonly of: Extract<GrammarNode, { k: 'object' }>; readonly i: number; readonly first: boolean }
  | { readonly k: 'mapAt'; readonly of: Extract<GrammarNode, { k: 'map' }>; readonly n: number };
type Node = GrammarNode | Internal;

/** A compiled grammar: its root node. */
export interface Grammar {
  readonly root: GrammarNode;
  /** What it was made from, for messages (`response_format.json_schema`, `tool_choice`). */
  readonly source: string;
}

const enc = new TextEncoder();
export const lit = (s: string): GrammarNode => ({ k: 'lit', bytes: enc.encode(s) });
export const seq = (...xs: GrammarNode[]): GrammarNode => ({ k: 'seq', xs });
export const alt = (...xs: GrammarNode[]): GrammarNode => (xs.length === 1 ? xs[0]! : { k: 'alt', xs });

/** The bounded whitespace: nothing or one space (after `:` and `,`). */
const WS = alt(lit(''), lit(' '));
const COMMA = seq(lit(','), WS);
const COLON = seq(lit(':'), WS);
const QUOTE = 0x22;

/** Bytes a generated string's body is made of: printable ASCII except `"` and `\`. */
export function isPlain(b: number): boolean {
  return b >= 0x20 && b < 0x7f && b !== QUOTE && b !== 0x5c;
}

/** The most integer digits and fraction digits a generated number has (so numbers always end). */
export const MAX_INT_DIGITS = 15;
const MAX_FRAC_DIGITS = 6;
/** The deepest a stack grows (nested arrays, objects and references); deeper paths are not taken. */
const MAX_STACK = 96;
/** The most stacks a state keeps (alternatives alive at once). */
const MAX_STACKS = 64;

type Cont = { readonly node: Node; readonly next: Cont | null; readonly depth: number } | null;

/** A leaf frame on top of a stack. */
type Frame =
  | { readonly k: 'lit'; readonly bytes: Uint8Array; readonly i: number }
  /** n = -1 before the opening quote, else the characters so far. */
  | { readonly k: 'str'; readonly node: Extract<GrammarNode, { k: 'str' }>; readonly n: number }
  | { readonly k: 'num'; readonly node: Extract<GrammarNode, { k: 'num' }>; readonly text: string };

/** One stack: a frame over the rest to match; `top` null is the whole grammar matched. */
interface Stack {
  readonly top: Frame | null;
  readonly rest: Cont;
}

/** A matcher state: the stacks alive. Empty: a dead end. */
export type GrammarState = readonly Stack[];

const ACCEPT: Stack = { top: null, rest: null };

function push(node: Node, next: Cont): Cont {
  return { node, next, depth: (next?.depth ?? 0) + 1 };
}

/** The stacks that begin matching `cont` (every leaf that can come first). */
function closure(cont: Cont, out: Stack[], guard = 0): void {
  if (cont === null) { out.push(ACCEPT); return; }
  if (cont.depth > MAX_STACK || guard > 64 || out.length >= MAX_STACKS) return;
  const n = cont.node;
  const next = cont.next;
  switch (n.k) {
    case 'lit':
      if (n.bytes.length === 0) closure(next, out, guard + 1);
      else out.push({ top: { k: 'lit', bytes: n.bytes, i: 0 }, rest: next });
      return;
    case 'seq': {
      let c = next;
      for (let i = n.xs.length - 1; i >= 0; i--) c = push(n.xs[i]!, c);
      closure(c, out, guard + 1);
      return;
    }
    case 'alt':
      for (const x of n.xs) closure(push(x, next), out, guard + 1);
      return;
    case 'str':
      out.push({ top: { k: 'str', node: n, n: -1 }, rest: next });
      return;
    case 'num':
      out.push({ top: { k: 'num', node: n, text: '' }, rest: next });
      return;
    case 'ref':
      closure(push(n.get(), next), out, guard + 1);
      return;
    case 'array':
      out.push({ top: { k: 'lit', bytes: OPEN_BRACKET, i: 0 }, rest: push({ k: 'arrayAt', of: n, n: 0 }, next) });
      return;
    case 'arrayAt': {
      const a = n.of;
      if (n.n >= a.min) closure(push(CLOSE_BRACKET_NODE, next), out, guard + 1);
      if (n.n < a.max) {
        let c = push({ k: 'arrayAt', of: a, n: n.n + 1 }, next);
        c = push(a.item, c);
        if (n.n > 0) c = push(COMMA, c);
        closure(c, out, guard + 1);
      }
      return;
    }
    case 'object':
      out.push({ top: { k: 'lit', bytes: OPEN_BRACE, i: 0 }, rest: push({ k: 'objectAt', of: n, i: 0, first: true }, next) });
      return;
    case 'objectAt': {
      const o = n.of;
      if (n.i === o.props.length) { closure(push(CLOSE_BRACE_NODE, next), out, guard + 1); return; }
      const p = o.props[n.i]!;
      let c = push({ k: 'objectAt', of: o, i: n.i + 1, first: false }, next);
      c = push(p.value, c);
      c = push(COLON, c);
      c = push(keyLiteral(p), c);
      if (!n.first) c = push(COMMA, c);
      closure(c, out, guard + 1);
      if (!p.required) closure(push({ k: 'objectAt', of: o, i: n.i + 1, first: n.first }, next), out, guard + 1);
      return;
    }
    case 'map':
      out.push({ top: { k: 'lit', bytes: OPEN_BRACE, i: 0 }, rest: push({ k: 'mapAt', of: n, n: 0 }, next) });
      return;
    case 'mapAt': {
      closure(push(CLOSE_BRACE_NODE, next), out, guard + 1);
      let c = push({ k: 'mapAt', of: n.of, n: n.n + 1 }, next);
      c = push(n.of.value, c);
      c = push(COLON, c);
      c = push(ANY_KEY, c);
      if (n.n > 0) c = push(COMMA, c);
      closure(c, out, guard + 1);
      return;
    }
  }
}

const OPEN_BRACKET = enc.encode('[');
const OPEN_BRACE = enc.encode('{');
const CLOSE_BRACKET_NODE = lit(']');
const CLOSE_BRACE_NODE = lit('}');
const ANY_KEY: GrammarNode = { k: 'str', min: 0, max: Infinity };
const keys = new WeakMap<GrammarProperty, GrammarNode>();
function keyLiteral(p: GrammarProperty): GrammarNode {
  let k = keys.get(p);
  if (k === undefined) keys.set(p, (k = lit(JSON.stringify(p.name))));
  return k;
}

/** The state before any byte. */
export function initialState(g: Grammar): GrammarState {
  const out: Stack[] = [];
  closure(push(g.root, null), out);
  return out;
}

/** True when a number's text so far can still become one in range (or is one). */
export function numberFeasible(r: NumberRange, text: string): boolean {
  const m = /^(-?)(\d*)(\.?)(\d*)$/.exec(text);
  if (m === null) return false;
  const [, sign, ip, dot, fp] = m as unknown as [string, string, string, string, string];
  if (ip.length > MAX_INT_DIGITS || fp.length > MAX_FRAC_DIGITS) return false;
  if (ip.length > 1 && ip[0] === '0') return false;
  if (dot !== '' && (r.integer || ip === '')) return false;
  // "-0" is JSON, but not written: an integer never starts so, a number only as "-0." on its way to a fraction.
  if (sign === '-' && ip === '0' && r.integer) return false;
  const span = r.integer ? 0 : 1 - 10 ** -MAX_FRAC_DIGITS;
  const mags: [number, number][] = [];
  if (ip === '') mags.push([sign === '-' && r.integer ? 1 : 0, 10 ** MAX_INT_DIGITS - 1 + span]);
  else if (dot === '') {
    const v = Number(ip);
    mags.push([v, v + span]);
    if (v !== 0) for (let k = 1; ip.length + k <= MAX_INT_DIGITS; k++) mags.push([v * 10 ** k, v * 10 ** k + 10 ** k - 1 + span]);
  } else {
    const w = Number(`${ip}.${fp === '' ? '0' : fp}`);
    mags.push([w, fp.length === MAX_FRAC_DIGITS ? w : w + 10 ** -fp.length - 10 ** -MAX_FRAC_DIGITS]);
  }
  const signs = sign === '-' ? [-1] : text === '' ? [1, -1] : [1];
  for (const s of signs) {
    for (const [a, b] of mags) {
      const lo = s > 0 ? a : -b;
      const hi = s > 0 ? b : -a;
      if (overlaps(r, lo, hi)) return true;
    }
  }
  return false;
}

function overlaps(r: NumberRange, a: number, b: number): boolean {
  const lo = Math.max(a, r.lo);
  const hi = Math.min(b, r.hi);
  if (lo < hi) return true;
  if (lo > hi) return false;
  return !((lo === r.lo && r.loExclusive) || (hi === r.hi && r.hiExclusive));
}

/** True when a number's text is a whole JSON number in range. */
export function numberComplete(r: NumberRange, text: string): boolean {
  if (!/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text) || text === '-0') return false;
  const v = Number(text);
  if (v < r.lo || v > r.hi) return false;
  if ((v === r.lo && r.loExclusive) || (v === r.hi && r.hiExclusive)) return false;
  return true;
}

function advanceStack(s: Stack, b: number, out: Stack[]): void {
  const t = s.top;
  if (t === null) return;
  switch (t.k) {
    case 'lit':
      if (t.bytes[t.i] !== b) return;
      if (t.i + 1 === t.bytes.length) closure(s.rest, out);
      else out.push({ top: { k: 'lit', bytes: t.bytes, i: t.i + 1 }, rest: s.rest });
      return;
    case 'str':
      if (t.n < 0) {
        if (b === QUOTE) out.push({ top: { k: 'str', node: t.node, n: 0 }, rest: s.rest });
        return;
      }
      if (b === QUOTE) { if (t.n >= t.node.min) closure(s.rest, out); return; }
      if (isPlain(b) && t.n < t.node.max) out.push({ top: { k: 'str', node: t.node, n: t.n + 1 }, rest: s.rest });
      return;
    case 'num': {
      const ch = String.fromCharCode(b);
      if ((b >= 0x30 && b <= 0x39) || ch === '-' || ch === '.') {
        const text = t.text + ch;
        if (numberFeasible(t.node, text)) out.push({ top: { k: 'num', node: t.node, text }, rest: s.rest });
      }
      if (numberComplete(t.node, t.text)) {
        const after: Stack[] = [];
        closure(s.rest, after);
        for (const x of after) advanceStack(x, b, out);
      }
      return;
    }
  }
}

/** The state after one byte (empty: the byte breaks the grammar). */
export function advance(state: GrammarState, b: number): GrammarState {
  const out: Stack[] = [];
  for (const s of state) {
    advanceStack(s, b, out);
    if (out.length >= MAX_STACKS) break;
  }
  return out;
}

/** The state after bytes, or an empty state. */
export function advanceBytes(state: GrammarState, bytes: Uint8Array, from = 0): GrammarState {
  let s = state;
  for (let i = from; i < bytes.length && s.length > 0; i++) s = advance(s, bytes[i]!);
  return s;
}

/** True when the bytes so far are a whole match (the generation may end here). */
export function isComplete(state: GrammarState): boolean {
  for (const s of state) {
    if (s.top === null) return true;
    if (s.top.k === 'num' && numberComplete(s.top.node, s.top.text)) {
      const after: Stack[] = [];
      closure(s.rest, after);
      if (after.some((x) => x.top === null)) return true;
    }
  }
  return false;
}

/** True when some byte can still follow. */
export function canContinue(state: GrammarState): boolean {
  return state.some((s) => s.top !== null);
}

/** True when `text` is a prefix the grammar allows (for tests and checks). */
export function acceptsPrefix(g: Grammar, text: string): boolean {
  return advanceBytes(initialState(g), enc.encode(text)).length > 0;
}

/** True when `text` is a whole match of the grammar. */
export function accepts(g: Grammar, text: string): boolean {
  const s = advanceBytes(initialState(g), enc.encode(text));
  return s.length > 0 && isComplete(s);
}

/** A leaf frame's string body and what follows, when the state is one stack inside a string. */
export function stringBody(state: GrammarState): { n: number; min: number; max: number; rest: Cont } | undefined {
  if (state.length !== 1) return undefined;
  const t = state[0]!.top;
  if (t === null || t.k !== 'str' || t.n < 0) return undefined;
  return { n: t.n, min: t.node.min, max: t.node.max, rest: state[0]!.rest };
}

/** Each stack's string body, when every stack of the state is inside a string (else undefined). */
export function stringBodies(state: GrammarState): { n: number; min: number; max: number; rest: Cont }[] | undefined {
  const out: { n: number; min: number; max: number; rest: Cont }[] = [];
  for (const s of state) {
    const t = s.top;
    if (t === null || t.k !== 'str' || t.n < 0) return undefined;
    out.push({ n: t.n, min: t.node.min, max: t.node.max, rest: s.rest });
  }
  return out.length > 0 ? out : undefined;
}

/** The state after a string's closing quote (the rest of a stack in a string body). */
export function afterString(rest: Cont): GrammarState {
  const out: Stack[] = [];
  closure(rest, out);
  return out;
}
