/**
 * A linear-time matcher for pre-tokenizer patterns: the Oniguruma pattern is parsed into a small
 * program (characters, splits, jumps, zero-width assertions) run by a Pike VM, every thread advanced
 * in step over the text, so no input makes it backtrack. Threads are kept in priority order and a match
 * cuts the threads below it, which gives the match a backtracking engine (Oniguruma, Hugging Face
 * tokenizers) finds: leftmost, then first by alternation order and greediness. A single-character
 * lookahead such as `(?!\S)` is an assertion on the next character; what needs more than that
 * (backreferences, general lookarounds, possessive and atomic groups) is refused with a PatternError.
 * Character sets are JavaScript `u` classes, tested through an ASCII table and a per-class cache.
 * @internal
 */
import { OUTSIDE, PatternError, braced, charClass, escOutside, folded } from './pattern.js';

/** Groups nested deeper, or programs longer, are refused (docs/LIMITS.md). */
const MAX_PATTERN_NESTING = 256;
const MAX_PATTERN_PROGRAM = 100_000;

type Node =
  | { readonly k: 'set'; readonly set: number }
  | { readonly k: 'cat'; readonly items: readonly Node[] }
  | { readonly k: 'alt'; readonly items: readonly Node[] }
  | { readonly k: 'rep'; readonly item: Node; readonly min: number; readonly max: number; readonly lazy: boolean }
  | { readonly k: 'assert'; readonly what: Assert; readonly set: number };

/** Zero-width tests at a position: line anchors, text anchors, a one-character look-ahead. */
type Assert = 'bol' | 'eol' | 'bot' | 'eot' | 'eotnl' | 'ahead' | 'notahead';
const ASSERTS: readonly Assert[] = ['bol', 'eol', 'bot', 'eot', 'eotnl', 'ahead', 'notahead'];

/** A set of code points given as the text of a JavaScript `u` class, tested fast. */
class CharSet {
  private readonly ascii = new Uint8Array(128);
  private readonly bmp = new Uint8Array(0x10000); // 0 not yet known, 1 out, 2 in
  private readonly re: RegExp;
  constructor(source: string) {
    try {
      this.re = new RegExp(`^(?:${source})$`, 'u');
    } catch (e) {
      throw new PatternError(`not a character set JavaScript can read (${e instanceof Error ? e.message : String(e)})`);
    }
    for (let c = 0; c < 128; c++) this.ascii[c] = this.re.test(String.fromCharCode(c)) ? 1 : 0;
  }
  has(c: number): boolean {
    if (c < 128) return this.ascii[c] === 1;
    if (c < 0x10000) {
      const k = this.bmp[c]!;
      if (k !== 0) return k === 2;
      const v = this.re.test(String.fromCharCode(c));
      this.bmp[c] = v ? 2 : 1;
      return v;
    }
    return this.re.test(String.fromCodePoint(c));
  }
}

class Parser {
  readonly sets: string[] = [];
  private i = 0;
  private ci = false;
  private depth = 0;
  constructor(private readonly p: string) {}

  private set(source: string): Node {
    this.sets.push(source);
    return { k: 'set', set: this.sets.length - 1 };
  }

  parse(): Node {
    const n = this.alt();
    if (this.i < this.p.length) throw new PatternError(`unbalanced ) at ${this.i}`);
    return n;
  }

  private alt(): Node {
    const items = [this.cat()];
    while (this.p[this.i] === '|') { this.i++; items.push(this.cat()); }
    return items.length === 1 ? items[0]! : { k: 'alt', items };
  }

  private cat(): Node {
    const items: Node[] = [];
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') {
      const atom = this.atom();
      if (atom !== null) items.push(this.quantified(atom));
    }
    return items.length === 1 ? items[0]! : { k: 'cat', items };
  }

  private quantified(atom: Node): Node {
    let node = atom;
    let quantifiedOnce = false;
    for (;;) {
      const c = this.p[this.i];
      let min: number;
      let max: number;
      const at = this.i;
      if (c === '*') { min = 0; max = Infinity; this.i++; } else if (c === '+') { min = 1; max = Infinity; this.i++; } else if (c === '?') { min = 0; max = 1; this.i++; } else if (c === '{') {
        const q = /^\{(\d*)(,?)(\d*)\}/.exec(this.p.slice(this.i));
        if (q === null || (q[1] === '' && q[3] === '')) return node;
        min = q[1] === '' ? 0 : Number(q[1]);
        max = q[2] === '' ? min : q[3] === '' ? Infinity : Number(q[3]);
        if (min > max) throw new PatternError(`a quantifier {${min},${max}} whose least is past its most at ${at}`);
        this.i += q[0].length;
      } else return node;
      if (quantifiedOnce) throw new PatternError(`a quantifier of a quantifier at ${at}`);
      let lazy = false;
      if (this.p[this.i] === '?') { lazy = true; this.i++; } else if (this.p[this.i] === '+') throw new PatternError(`possessive quantifier at ${this.i}`);
      node = { k: 'rep', item: node, min, max, lazy };
      quantifiedOnce = true;
    }
  }

  private lookahead(negate: boolean, at: number): Node {
    // Only a single character (a literal, an escape or a class) followed by ')' can be decided in step.
    const save = this.i;
    const atom = this.atom();
    if (atom === null || atom.k !== 'set' || this.p[this.i] !== ')') {
      this.i = save;
      throw new PatternError(`a look-ahead of more than one character at ${at} (only one character, such as (?!\\S), is matched in linear time)`);
    }
    this.i++;
    return { k: 'assert', what: negate ? 'notahead' : 'ahead', set: atom.set };
  }

  private atom(): Node | null {
    const p = this.p;
    const start = this.i;
    const c = String.fromCodePoint(p.codePointAt(start)!);
    if (c === '\\') {
      const b = braced(p, start);
      if (b !== null) { this.i = b.end; return this.set(b.text); }
      const e = p[start + 1];
      if (e === undefined) throw new PatternError('the pattern ends inside an escape');
      this.i = start + 2;
      if (e === 'A') return { k: 'assert', what: 'bot', set: -1 };
      if (e === 'z') return { k: 'assert', what: 'eot', set: -1 };
      if (e === 'Z') return { k: 'assert', what: 'eotnl', set: -1 };
      if (OUTSIDE[e] !== undefined) return this.set(OUTSIDE[e]);
      if (/[1-9]/.test(e)) throw new PatternError(`a backreference \\${e} at ${start} (not matched in linear time)`);
      if (/[A-Za-z0-9]/.test(e)) throw new PatternError(`unsupported escape \\${e} at ${start}`);
      return this.set(this.ci ? folded(e, false) : escOutside(e));
    }
    if (c === '[') {
      const k = charClass(p, start, this.ci);
      this.i = k.end;
      return this.set(k.text);
    }
    if (c === '(') {
      const head = /^\((\?(?:i:|-i:|:|=|!|<=|<!|<[A-Za-z_]\w*>|#[^)]*\)|[^)]*))?/.exec(p.slice(start))![0];
      this.i = start + head.length;
      if (head.startsWith('(?#')) return null;
      if (head === '(?=' || head === '(?!') return this.lookahead(head === '(?!', start);
      if (head === '(?<=' || head === '(?<!') throw new PatternError(`a look-behind at ${start} (not matched in linear time)`);
      const wasCi = this.ci;
      if (head === '(?i:') this.ci = true;
      else if (head === '(?-i:') this.ci = false;
      else if (head !== '(' && head !== '(?:' && !/^\(\?<[A-Za-z_]\w*>$/.test(head)) throw new PatternError(`unsupported group ${head} at ${start}`);
      if (++this.depth > MAX_PATTERN_NESTING) throw new PatternError(`groups nested deeper than ${MAX_PATTERN_NESTING}`);
      const inner = this.alt();
      this.depth--;
      if (p[this.i] !== ')') throw new PatternError('unbalanced (');
      this.i++;
      this.ci = wasCi;
      return inner;
    }
    this.i = start + c.length;
    if (c === '.') return this.set(String.raw`[^\n]`);
    if (c === '^') return { k: 'assert', what: 'bol', set: -1 };
    if (c === '$') return { k: 'assert', what: 'eol', set: -1 };
    if (c === '*' || c === '+' || c === '?') throw new PatternError(`a quantifier with nothing to repeat at ${start}`);
    if (c === '{' || c === '}' || c === ']') return this.set(`\\${c}`);
    return this.set(this.ci ? folded(c, false) : escOutside(c));
  }
}

// Instructions, as parallel arrays: CHAR set; SPLIT x (preferred) y; JMP x; ASSERT kind set; MATCH.
const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const ASSERT = 3;
const MATCH = 4;

class Emitter {
  readonly op: number[] = [];
  readonly a: number[] = [];
  readonly b: number[] = [];
  emit(op: number, a = 0, b = 0): number {
    if (this.op.length >= MAX_PATTERN_PROGRAM) throw new PatternError(`the pattern compiles to more than ${MAX_PATTERN_PROGRAM} instructions`);
    this.op.push(op); this.a.push(a); this.b.push(b);
    return this.op.length - 1;
  }
  // Recursion follows the groups' nesting, which the parser bounds.
  node(n: Node): void {
    switch (n.k) {
      case 'set': this.emit(CHAR, n.set); return;
      case 'assert': this.emit(ASSERT, ASSERTS.indexOf(n.what), n.set); return;
      case 'cat': for (const it of n.items) this.node(it); return;
      case 'alt': {
        const jumps: number[] = [];
        for (let k = 0; k < n.items.length; k++) {
          if (k < n.items.length - 1) {
            const split = this.emit(SPLIT);
            this.a[split] = split + 1;
            this.node(n.items[k]!);
            jumps.push(this.emit(JMP));
            this.b[split] = this.op.length;
          } else this.node(n.items[k]!);
        }
        for (const j of jumps) this.a[j] = this.op.length;
        return;
      }
      case 'rep': {
        for (let k = 0; k < n.min; k++) this.node(n.item);
        if (n.max === Infinity) {
          const split = this.emit(SPLIT);
          this.node(n.item);
          this.emit(JMP, split);
          this.prefer(split, split + 1, this.op.length, n.lazy);
        } else {
          const splits: number[] = [];
          for (let k = n.min; k < n.max; k++) {
            splits.push(this.emit(SPLIT));
            this.node(n.item);
          }
          for (const s of splits) this.prefer(s, s + 1, this.op.length, n.lazy);
        }
      }
    }
  }
  private prefer(split: number, body: number, out: number, lazy: boolean): void {
    this.a[split] = lazy ? out : body;
    this.b[split] = lazy ? body : out;
  }
}

/** Instructions run, over every search: the tests read it to show the work is linear. */
export const regexWork = { steps: 0 };

/** A compiled pattern: `exec` finds the next match at or after `from`. */
export class Pattern {
  private readonly op: Int32Array;
  private readonly a: Int32Array;
  private readonly b: Int32Array;
  private readonly sets: CharSet[];
  private readonly mark: Int32Array;
  private gen = 0;
  // Thread lists (pc and start position), current and next, and the closure's stack.
  private cpc: Int32Array;
  private cst: Int32Array;
  private npc: Int32Array;
  private nst: Int32Array;
  private readonly stack: Int32Array;
  /** Per CHAR instruction, whether each ASCII character passes it (pc * 128 + c). */
  private readonly asciiOk: Uint8Array;
  /** Per pc, its closure's CHAR and MATCH instructions in priority order, when no assertion is in it (else null). */
  private readonly closures: (Int32Array | null | undefined)[];

  constructor(readonly source: string) {
    const parser = new Parser(source);
    const tree = parser.parse();
    const e = new Emitter();
    e.node(tree);
    e.emit(MATCH);
    this.op = Int32Array.from(e.op);
    this.a = Int32Array.from(e.a);
    this.b = Int32Array.from(e.b);
    this.sets = parser.sets.map((s) => new CharSet(s));
    const n = this.op.length;
    this.mark = new Int32Array(n);
    this.cpc = new Int32Array(n); this.cst = new Int32Array(n);
    this.npc = new Int32Array(n); this.nst = new Int32Array(n);
    // Each instruction is expanded once and pushes at most two: the stack never holds more than 2n + 1.
    this.stack = new Int32Array(2 * n + 2);
    this.asciiOk = new Uint8Array(n * 128);
    for (let pc = 0; pc < n; pc++) {
      if (this.op[pc] !== CHAR) continue;
      const set = this.sets[this.a[pc]!]!;
      for (let c = 0; c < 128; c++) this.asciiOk[pc * 128 + c] = set.has(c) ? 1 : 0;
    }
    this.closures = new Array<Int32Array | null | undefined>(n);
  }

  /** The closure of pc as a list, computed once; null when an assertion makes it depend on the position. */
  private closureOf(pc0: number): Int32Array | null {
    const known = this.closures[pc0];
    if (known !== undefined) return known;
    const { op, a, b } = this;
    const seen = new Set<number>();
    const leaves: number[] = [];
    const stack = [pc0];
    let list: Int32Array | null = null;
    for (;;) {
      const pc = stack.pop();
      if (pc === undefined) { list = Int32Array.from(leaves); break; }
      if (seen.has(pc)) continue;
      seen.add(pc);
      const o = op[pc]!;
      if (o === SPLIT) stack.push(b[pc]!, a[pc]!);
      else if (o === JMP) stack.push(a[pc]!);
      else if (o === ASSERT || leaves.length >= 64) break;
      else leaves.push(pc);
    }
    this.closures[pc0] = list;
    return list;
  }

  /** A new generation of marks; the marks are cleared before the counter leaves the Int32 range, as a long-lived pattern would reach it. */
  private nextGen(): void {
    if (++this.gen >= 0x3fffffff) { this.mark.fill(0); this.gen = 1; }
  }

  private holds(kind: number, set: number, s: string, pos: number): boolean {
    const n = s.length;
    switch (ASSERTS[kind]) {
      case 'bol': return pos === 0 || s.charCodeAt(pos - 1) === 0x0a;
      case 'eol': return pos === n || s.charCodeAt(pos) === 0x0a;
      case 'bot': return pos === 0;
      case 'eot': return pos === n;
      case 'eotnl': return pos === n || (pos === n - 1 && s.charCodeAt(pos) === 0x0a);
      case 'ahead': return pos < n && this.sets[set]!.has(s.codePointAt(pos)!);
      default: return pos >= n || !this.sets[set]!.has(s.codePointAt(pos)!);
    }
  }

  /** Adds the closure of `pc0` at position `pos` to the next list, in priority order; returns the list's new length. */
  private add(pc0: number, start: number, s: string, pos: number, len: number): number {
    const { op, a, b, mark, stack } = this;
    const gen = this.gen;
    const list = this.closureOf(pc0);
    if (list !== null) {
      // A thread whose character does not come next would die at once: it is not added.
      const c = pos < s.length ? s.charCodeAt(pos) : -1;
      const ok = this.asciiOk;
      for (let k = 0; k < list.length; k++) {
        const pc = list[k]!;
        if (mark[pc] === gen) continue;
        if (op[pc] === CHAR && (c < 0 || (c < 128 && ok[pc * 128 + c] === 0))) continue;
        mark[pc] = gen;
        this.npc[len] = pc; this.nst[len] = start; len++;
      }
      regexWork.steps += list.length;
      return len;
    }
    let sp = 0;
    stack[sp++] = pc0;
    let steps = 0;
    while (sp > 0) {
      const pc = stack[--sp]!;
      if (mark[pc] === gen) continue;
      mark[pc] = gen;
      steps++;
      const o = op[pc]!;
      if (o === SPLIT) { stack[sp++] = b[pc]!; stack[sp++] = a[pc]!; } else if (o === JMP) stack[sp++] = a[pc]!;
      else if (o === ASSERT) { if (this.holds(a[pc]!, b[pc]!, s, pos)) stack[sp++] = pc + 1; } else { this.npc[len] = pc; this.nst[len] = start; len++; }
    }
    regexWork.steps += steps;
    return len;
  }

  /** The next match at or after `from` as [start, end] in `out`; false when there is none. */
  exec(s: string, from: number, out: Int32Array): boolean {
    const { op, a, sets } = this;
    const n = s.length;
    let matched = false;
    this.nextGen();
    let count = this.add(0, from, s, from, 0);
    for (let pos = from; ; ) {
      [this.cpc, this.npc] = [this.npc, this.cpc];
      [this.cst, this.nst] = [this.nst, this.cst];
      const cpc = this.cpc;
      const cst = this.cst;
      const c = pos < n ? s.codePointAt(pos)! : -1;
      const next = pos + (c > 0xffff ? 2 : 1);
      this.nextGen();
      let len = 0;
      regexWork.steps += count;
      for (let t = 0; t < count; t++) {
        const pc = cpc[t]!;
        if (op[pc] === MATCH) {
          matched = true;
          out[0] = cst[t]!;
          out[1] = pos;
          break; // the threads below this one lose to it
        }
        if (c >= 0 && (c < 128 ? this.asciiOk[pc * 128 + c] === 1 : sets[a[pc]!]!.has(c))) len = this.add(pc + 1, cst[t]!, s, next, len);
      }
      if (pos >= n) return matched;
      // No match yet: a match may also start at the next position, below every thread running.
      if (!matched) len = this.add(0, next, s, next, len);
      // With a match and no thread above it left, it stands; without one, the search goes on (a start
      // whose first character did not come was not added, so an empty list does not end it).
      if (len === 0 && matched) return true;
      count = len;
      pos = next;
    }
  }

  /** Every match, as String.prototype.matchAll gives them (so `text.matchAll(pattern)` works). */
  *[Symbol.matchAll](s: string): IterableIterator<RegExpMatchArray> {
    const span = new Int32Array(2);
    for (let at = 0; at <= s.length && this.exec(s, at, span);) {
      const start = span[0]!;
      const end = span[1]!;
      const m = [s.slice(start, end)] as unknown as RegExpMatchArray;
      m.index = start;
      yield m;
      at = end > start ? end : end + (end < s.length && s.codePointAt(end)! > 0xffff ? 2 : 1);
    }
  }
}

/** Compiles an Oniguruma pattern for the linear-time matcher; a PatternError when it cannot be kept exactly. */
export function compilePattern(p: string): Pattern {
  return new Pattern(p);
}
