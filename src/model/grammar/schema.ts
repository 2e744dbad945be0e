/**
 * JSON Schema to a grammar. Supported: `type` (one or a list of object, array, string, number, integer,
 * boolean, null), `enum`, `const`, `properties` with `required` (objects are written with their
 * properties in the schema's order; `additionalProperties` may only be false or absent, and no other
 * property is written), `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`, `minLength`/`maxLength`,
 * `items`/`minItems`/`maxItems`, `anyOf`, `$ref` to `#`, `#/$defs/NAME` or `#/definitions/NAME`, and the
 * annotations (title, description, default, examples, ...), which are ignored. An object schema with no
 * properties is any JSON object, and `{}` any JSON value (nested at most JSON_VALUE_DEPTH deep).
 *
 * Anything else is refused with InvalidOptions naming the keyword's path. Schemas are untrusted: their
 * size, depth and number of enum values are bounded (ResourceLimit naming the place).
 */
import { InvalidOptions, ResourceLimit } from '../../errors/index.js';
import { alt, lit, type Grammar, type GrammarNode, type GrammarProperty, type NumberRange, MAX_INT_DIGITS, seq } from './grammar.js';

/** The most schema nodes (objects and arrays of the schema's JSON) compiled. */
const MAX_SCHEMA_NODES = 10_000;
/** The deepest a schema's JSON nests. */
const MAX_SCHEMA_DEPTH = 32;
/** The most bytes of all enum and const literals together. */
const MAX_LITERAL_BYTES = 256 * 1024;
/** How deep `{}` and `json_object` values nest. */
const JSON_VALUE_DEPTH = 6;

const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$schema', '$id', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions']);
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
type JsonType = typeof TYPES[number];
const BY_TYPE: Record<JsonType, readonly string[]> = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
  string: ['minLength', 'maxLength'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  boolean: [],
  null: [],
};
const KNOWN = new Set(['type', 'enum', 'const', 'anyOf', '$ref', ...Object.values(BY_TYPE).flat()]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const keyPath = (path: string, k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

/** Any JSON value nested at most `depth` deep (arrays and objects at depth 0 are not offered). */
function anyJsonValue(depth = JSON_VALUE_DEPTH): GrammarNode {
  const scalars: GrammarNode[] = [
    { k: 'str', min: 0, max: Infinity },
    { k: 'num', integer: false, lo: -Infinity, hi: Infinity, loExclusive: false, hiExclusive: false },
    lit('true'), lit('false'), lit('null'),
  ];
  if (depth <= 0) return alt(...scalars);
  const inner = anyJsonValue(depth - 1);
  return alt(...scalars, { k: 'array', item: inner, min: 0, max: Infinity }, { k: 'map', value: inner });
}

/** Any JSON object (response_format `json_object`). */
export function jsonObjectGrammar(): Grammar {
  return { root: { k: 'map', value: anyJsonValue(JSON_VALUE_DEPTH - 1) }, source: 'json_object' };
}

const utf8 = new TextEncoder();

/**
 * Literals as a trie of alternatives (shared prefixes matched once), so an enum of many values keeps
 * one stack per distinct next byte rather than one per value.
 */
function literalTrie(values: readonly Uint8Array[]): GrammarNode {
  const uniq = [...new Map(values.map((v) => [Buffer.from(v).toString('latin1'), v])).values()];
  if (uniq.length === 1) return { k: 'lit', bytes: uniq[0]! };
  let p = 0;
  while (uniq.every((v) => p < v.length && v[p] === uniq[0]![p])) p++;
  const groups = new Map<number, Uint8Array[]>();
  let empty = false;
  for (const v of uniq) {
    if (v.length === p) { empty = true; continue; }
    const g = groups.get(v[p]!) ?? [];
    g.push(v.subarray(p));
    groups.set(v[p]!, g);
  }
  const rest = [...groups.values()].map((g) => literalTrie(g));
  if (empty) rest.unshift(lit(''));
  return seq({ k: 'lit', bytes: uniq[0]!.subarray(0, p) }, alt(...rest));
}

class Compiler {
  nodes = 0;
  literalSize = 0;
  readonly defs = new Map<string, GrammarNode>();
  constructor(readonly root: Record<string, unknown>, readonly path: string) {}

  /** A `$ref`: compiled once, reached lazily (so a recursive definition is one node). */
  ref(ref: unknown, path: string): GrammarNode {
    if (typeof ref !== 'string') throw new InvalidOptions(path, 'a $ref is a string');
    let target: unknown;
    let at: string;
    if (ref === '#') { target = this.root; at = this.path; } else {
      const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
      if (m === null) throw new InvalidOptions(path, `only "#", "#/$defs/NAME" and "#/definitions/NAME" references are supported, not ${JSON.stringify(ref)}`);
      const name = m[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
      const table = this.root[m[1]!];
      if (!isObject(table) || !Object.hasOwn(table, name)) throw new InvalidOptions(path, `${ref} names no definition`);
      target = table[name];
      at = keyPath(keyPath(this.path, m[1]!), name);
    }
    const node: GrammarNode = {
      k: 'ref', name: ref,
      get: () => {
        const n = this.defs.get(ref);
        if (n === undefined) throw new InvalidOptions(path, `${ref} was not compiled`);
        return n;
      },
    };
    if (!this.defs.has(ref)) {
      // Placeholder first, so a definition that refers to itself finds it.
      this.defs.set(ref, lit(''));
      this.defs.set(ref, this.schema(target, at, 0));
    }
    return node;
  }

  schema(s: unknown, path: string, depth: number): GrammarNode {
    if (++this.nodes > MAX_SCHEMA_NODES) throw new ResourceLimit('schema-nodes', this.nodes, MAX_SCHEMA_NODES, path);
    if (depth > MAX_SCHEMA_DEPTH) throw new ResourceLimit('schema-depth', depth, MAX_SCHEMA_DEPTH, path);
    if (s === true) return anyJsonValue();
    if (!isObject(s)) throw new InvalidOptions(path, `a schema is an object (or true), not ${s === null ? 'null' : Array.isArray(s) ? 'an array' : typeof s}`);
    for (const k of Object.keys(s)) {
      if (!KNOWN.has(k) && !ANNOTATIONS.has(k)) throw new InvalidOptions(keyPath(path, k), `the keyword ${JSON.stringify(k)} is not supported in structured output`);
    }
    if (s.$ref !== undefined) {
      const others = Object.keys(s).filter((k) => k !== '$ref' && !ANNOTATIONS.has(k));
      if (others.length > 0) throw new InvalidOptions(keyPath(path, others[0]!), 'a schema with $ref takes no other keywords here');
      return this.ref(s.$ref, keyPath(path, '$ref'));
    }
    if (s.const !== undefined) return this.literal(s.const, keyPath(path, 'const'));
    if (s.enum !== undefined) {
      if (!Array.isArray(s.enum) || s.enum.length === 0) throw new InvalidOptions(keyPath(path, 'enum'), 'enum is a non-empty array');
      if (s.enum.length > 4096) throw new ResourceLimit('enum-values', s.enum.length, 4096, keyPath(path, 'enum'));
      return literalTrie(s.enum.map((v, i) => this.literalBytes(v, `${keyPath(path, 'enum')}[${i}]`)));
    }
    if (s.anyOf !== undefined) {
      const p = keyPath(path, 'anyOf');
      if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) throw new InvalidOptions(p, 'anyOf is a non-empty array of schemas');
      const own = Object.keys(s).filter((k) => k !== 'anyOf' && !ANNOTATIONS.has(k));
      if (own.length > 0) throw new InvalidOptions(keyPath(path, own[0]!), 'a schema with anyOf takes no other keywords here (put them in each branch)');
      return alt(...s.anyOf.map((x, i) => this.schema(x, `${p}[${i}]`, depth + 1)));
    }
    if (s.type === undefined) {
      const used = Object.keys(s).filter((k) => KNOWN.has(k));
      if (used.length > 0) throw new InvalidOptions(keyPath(path, used[0]!), `${used[0]} needs a "type"`);
      return anyJsonValue();
    }
    const tp = keyPath(path, 'type');
    const list = Array.isArray(s.type) ? s.type : [s.type];
    if (list.length === 0) throw new InvalidOptions(tp, 'type lists at least one type');
    const types: JsonType[] = list.map((t, i) => {
      if (!TYPES.includes(t as JsonType)) throw new InvalidOptions(Array.isArray(s.type) ? `${tp}[${i}]` : tp, `type is one of ${TYPES.join(', ')}, not ${JSON.stringify(t)}`);
      return t as JsonType;
    });
    for (const k of Object.keys(s)) {
      if (KNOWN.has(k) && k !== 'type' && !types.some((t) => BY_TYPE[t].includes(k))) throw new InvalidOptions(keyPath(path, k), `${k} does not apply to type ${types.join('|')}`);
    }
    return alt(...[...new Set(types)].map((t) => this.typed(t, s, path, depth)));
  }

  literal(v: unknown, path: string): GrammarNode {
    return { k: 'lit', bytes: this.literalBytes(v, path) };
  }

  literalBytes(v: unknown, path: string): Uint8Array {
    let text: string;
    try {
      text = JSON.stringify(v);
    } catch {
      throw new InvalidOptions(path, 'the value is not JSON');
    }
    this.literalSize += text.length;
    if (this.literalSize > MAX_LITERAL_BYTES) throw new ResourceLimit('literal-bytes', this.literalSize, MAX_LITERAL_BYTES, path);
    return utf8.encode(text);
  }

  count(s: Record<string, unknown>, k: string, path: string, fallback: number): number {
    const v = s[k];
    if (v === undefined) return fallback;
    if (!(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) throw new InvalidOptions(keyPath(path, k), `${k} is a whole number of at least 0`);
    return v;
  }

  typed(t: JsonType, s: Record<string, unknown>, path: string, depth: number): GrammarNode {
    switch (t) {
      case 'null': return lit('null');
      case 'boolean': return alt(lit('true'), lit('false'));
      case 'string': {
        const min = this.count(s, 'minLength', path, 0);
        const max = this.count(s, 'maxLength', path, Infinity);
        if (min > max) throw new InvalidOptions(keyPath(path, 'minLength'), `minLength ${min} is above maxLength ${max}`);
        return { k: 'str', min, max };
      }
      case 'number':
      case 'integer':
        return { k: 'num', ...this.range(t === 'integer', s, path) };
      case 'array': {
        const min = this.count(s, 'minItems', path, 0);
        const max = this.count(s, 'maxItems', path, Infinity);
        if (min > max) throw new InvalidOptions(keyPath(path, 'minItems'), `minItems ${min} is above maxItems ${max}`);
        if (min > 4096) throw new ResourceLimit('min-items', min, 4096, keyPath(path, 'minItems'));
        const item = s.items === undefined ? anyJsonValue(JSON_VALUE_DEPTH - 1) : this.schema(s.items, keyPath(path, 'items'), depth + 1);
        return { k: 'array', item, min, max };
      }
      case 'object': {
        const ap = s.additionalProperties;
        if (ap !== undefined && ap !== false) throw new InvalidOptions(keyPath(path, 'additionalProperties'), 'only additionalProperties: false is supported (properties are written in the schema\'s order)');
        if (s.properties === undefined) {
          if (s.required !== undefined && !(Array.isArray(s.required) && s.required.length === 0)) throw new InvalidOptions(keyPath(path, 'required'), 'required names properties the schema does not list');
          return ap === false ? lit('{}') : { k: 'map', value: anyJsonValue(JSON_VALUE_DEPTH - 1) };
        }
        const pp = keyPath(path, 'properties');
        if (!isObject(s.properties)) throw new InvalidOptions(pp, 'properties is an object of schemas');
        const req = s.required ?? [];
        if (!Array.isArray(req) || !req.every((r) => typeof r === 'string')) throw new InvalidOptions(keyPath(path, 'required'), 'required is an array of property names');
        for (const [i, r] of req.entries()) if (!Object.hasOwn(s.properties, r)) throw new InvalidOptions(`${keyPath(path, 'required')}[${i}]`, `${JSON.stringify(r)} is not one of the properties`);
        const props: GrammarProperty[] = Object.entries(s.properties).map(([name, v]) => ({
          name, required: req.includes(name), value: this.schema(v, keyPath(pp, name), depth + 1),
        }));
        return { k: 'object', props };
      }
    }
  }

  range(integer: boolean, s: Record<string, unknown>, path: string): NumberRange {
    const num = (k: string): number | undefined => {
      const v = s[k];
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidOptions(keyPath(path, k), `${k} is a finite number`);
      return v;
    };
    let lo = -Infinity; let hi = Infinity; let loX = false; let hiX = false;
    const min = num('minimum'); const max = num('maximum');
    const xmin = num('exclusiveMinimum'); const xmax = num('exclusiveMaximum');
    if (min !== undefined) lo = min;
    if (xmin !== undefined && xmin >= lo) { lo = xmin; loX = true; }
    if (max !== undefined) hi = max;
    if (xmax !== undefined && xmax <= hi) { hi = xmax; hiX = true; }
    if (integer) {
      lo = loX ? Math.floor(lo) + 1 : Math.ceil(lo);
      hi = hiX ? Math.ceil(hi) - 1 : Math.floor(hi);
      loX = false; hiX = false;
    }
    const limit = 10 ** MAX_INT_DIGITS - 1;
    if (lo > hi || (lo === hi && (loX || hiX)) || lo > limit || hi < -limit) throw new InvalidOptions(path, `no ${integer ? 'integer' : 'number'} is in this range (or none of at most ${MAX_INT_DIGITS} digits)`);
    return { integer, lo, hi, loExclusive: loX, hiExclusive: hiX };
  }
}

/**
 * Compiles a JSON Schema to a grammar of its JSON texts; `path` names the schema in messages (default
 * `response_format.json_schema.schema`). InvalidOptions names an unsupported keyword's path.
 */
export function compileJsonSchema(schema: unknown, path = 'response_format.json_schema.schema'): Grammar {
  const c = new Compiler(isObject(schema) ? schema : {}, path);
  return { root: c.schema(schema, path, 0), source: path };
}

/** A tool the model may be made to call: its name and its arguments' schema. */
export interface ToolSpec {
  readonly name: string;
  readonly parameters?: unknown;
  /** Where the tool is, for messages (default `tools[i]`). */
  readonly at?: string;
}

/**
 * A forced tool call in Qwen's form, `<tool_call>\n{"name": NAME, "arguments": ARGS}\n</tool_call>`,
 * where NAME is one of the tools and ARGS is valid under that tool's parameters schema.
 */
export function toolCallGrammar(tools: readonly ToolSpec[], path = 'tools'): Grammar {
  if (tools.length === 0) throw new InvalidOptions(path, 'a forced tool call needs at least one tool');
  const calls = tools.map((t, i) => {
    const at = t.at ?? `${path}[${i}]`;
    if (typeof t.name !== 'string' || t.name === '') throw new InvalidOptions(`${at}.function.name`, 'a tool has a name');
    const p = `${at}.function.parameters`;
    const args = t.parameters === undefined ? lit('{}') : compileJsonSchema(t.parameters, p).root;
    return seq(lit(`{"name": ${JSON.stringify(t.name)}, "arguments": `), args, lit('}'));
  });
  return { root: seq(lit('<tool_call>\n'), alt(...calls), lit('\n</tool_call>')), source: path };
}
