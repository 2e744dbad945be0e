/**
 * A vocabulary's strings and bytes packed in typed arrays: every token's text as UTF-16 code units in
 * one array with an offset per id, every token's decoded bytes likewise, and a text-to-id lookup as an
 * open-addressing table of ids hashed over those code units. A 151,936-token vocabulary holds about
 * 8 MB this way, outside the JS heap, where a string, a Map entry and a Uint8Array per token held
 * about 45 MB of it. (Not marked internal: the declarations of bpe.ts name TokenLookup, and the package's .d.ts
 * files must type-check.)
 */

/** Text to id, as BPE and the loaders look tokens up: a Map or a TokenIndex. */
export interface TokenLookup {
  get(text: string): number | undefined;
  has(text: string): boolean;
}

/** Per id, the token's text, or null for an id with none. */
export interface TokenTexts {
  readonly length: number;
  get(id: number): string | null;
}

/** Code units turned into a string per call of String.fromCharCode (an argument list has a bound). */
const CHUNK = 8192;

/** Strings by index as UTF-16 code units in one Uint16Array; an entry may be null. */
export class StringTable implements TokenTexts {
  private constructor(
    private readonly units: Uint16Array,
    /** Entry i is units[offsets[i], offsets[i + 1]). */
    private readonly offsets: Uint32Array,
    /** 1 where the entry is null; null when none is. */
    private readonly absent: Uint8Array | null,
  ) {}

  static from(strings: readonly (string | null | undefined)[]): StringTable {
    const n = strings.length;
    const offsets = new Uint32Array(n + 1);
    let total = 0;
    let absent: Uint8Array | null = null;
    for (let i = 0; i < n; i++) {
      const s = strings[i];
      if (s === null || s === undefined) (absent ??= new Uint8Array(n))[i] = 1;
      else total += s.length;
      offsets[i + 1] = total;
    }
    const units = new Uint16Array(total);
    for (let i = 0; i < n; i++) {
      const s = strings[i];
      if (s === null || s === undefined) continue;
      const at = offsets[i]!;
      for (let k = 0; k < s.length; k++) units[at + k] = s.charCodeAt(k);
    }
    return new StringTable(units, offsets, absent);
  }

  get length(): number { return this.offsets.length - 1; }

  get(id: number): string | null {
    if (!(id >= 0 && id < this.length) || this.absent?.[id] === 1) return null;
    const a = this.offsets[id]!;
    const b = this.offsets[id + 1]!;
    if (b - a <= CHUNK) return String.fromCharCode(...this.units.subarray(a, b));
    const parts: string[] = [];
    for (let at = a; at < b; at += CHUNK) parts.push(String.fromCharCode(...this.units.subarray(at, Math.min(b, at + CHUNK))));
    return parts.join('');
  }

  /** Whether entry `id` (not null) is `s`, compared unit by unit without making a string. */
  equals(id: number, s: string): boolean {
    const a = this.offsets[id]!;
    if (this.offsets[id + 1]! - a !== s.length) return false;
    const u = this.units;
    for (let k = 0; k < s.length; k++) if (u[a + k] !== s.charCodeAt(k)) return false;
    return true;
  }

  /** Whether entries `a` and `b` (neither null) hold the same text. */
  sameEntries(a: number, b: number): boolean {
    const oa = this.offsets[a]!;
    const ob = this.offsets[b]!;
    const n = this.offsets[a + 1]! - oa;
    if (this.offsets[b + 1]! - ob !== n) return false;
    const u = this.units;
    for (let k = 0; k < n; k++) if (u[oa + k] !== u[ob + k]) return false;
    return true;
  }

  /** The hash of entry `id`, equal to hashText of its string. */
  hash(id: number): number {
    let h = 0x811c9dc5;
    const u = this.units;
    for (let k = this.offsets[id]!, end = this.offsets[id + 1]!; k < end; k++) h = Math.imul(h ^ u[k]!, 0x01000193);
    return mix(h);
  }
}

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** FNV-1a over a string's code units, then mixed: the hash StringTable.hash gives its entries. */
function hashText(s: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 0x01000193);
  return mix(h);
}

/**
 * Text to id over a StringTable's entries, for the ids given in order: a text several of them share
 * keeps the first of those ids (as `if (!map.has(t)) map.set(t, id)` does).
 */
export class TokenIndex implements TokenLookup {
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(private readonly table: StringTable, ids: Iterable<number>, expected: number) {
    let cap = 16;
    while (cap < expected * 1.5) cap *= 2;
    this.mask = cap - 1;
    this.slots = new Int32Array(cap).fill(-1);
    for (const id of ids) {
      let h = table.hash(id) & this.mask;
      for (;;) {
        const at = this.slots[h]!;
        if (at === -1) { this.slots[h] = id; break; }
        if (table.sameEntries(at, id)) break;
        h = (h + 1) & this.mask;
      }
    }
  }

  get(text: string): number | undefined {
    let h = hashText(text) & this.mask;
    for (;;) {
      const at = this.slots[h]!;
      if (at === -1) return undefined;
      if (this.table.equals(at, text)) return at;
      h = (h + 1) & this.mask;
    }
  }

  has(text: string): boolean {
    return this.get(text) !== undefined;
  }
}

/** Per id, the bytes it decodes to, copied out without a view or array per token. */
export interface TokenBytes {
  /** How many bytes id decodes to. */
  size(id: number): number;
  /** Writes them to out at `at`. */
  copy(id: number, out: Uint8Array, at: number): void;
}

/** Byte strings by index in one Uint8Array, appended in id order. */
export class ByteTable implements TokenBytes {
  private data = new Uint8Array(1 << 16);
  private used = 0;
  private offsets = new Uint32Array(1024 + 1);
  private count = 0;

  push(b: Uint8Array): void {
    if (this.used + b.length > this.data.length) {
      let cap = this.data.length * 2;
      while (cap < this.used + b.length) cap *= 2;
      const d = new Uint8Array(cap); d.set(this.data.subarray(0, this.used)); this.data = d;
    }
    this.data.set(b, this.used);
    this.used += b.length;
    if (this.count + 2 > this.offsets.length) { const o = new Uint32Array(this.offsets.length * 2); o.set(this.offsets); this.offsets = o; }
    this.offsets[++this.count] = this.used;
  }

  get length(): number { return this.count; }

  /** Trims the arrays to what was pushed; call once all are in. */
  seal(): this {
    this.data = this.data.slice(0, this.used);
    this.offsets = this.offsets.slice(0, this.count + 1);
    return this;
  }

  size(id: number): number {
    return id >= 0 && id < this.count ? this.offsets[id + 1]! - this.offsets[id]! : 0;
  }

  copy(id: number, out: Uint8Array, at: number): void {
    const a = this.offsets[id]!;
    const b = this.offsets[id + 1]!;
    const d = this.data;
    // A token is a few bytes: a loop beats making a view to copy from.
    if (b - a <= 16) for (let k = a; k < b; k++) out[at++] = d[k]!;
    else out.set(d.subarray(a, b), at);
  }
}
