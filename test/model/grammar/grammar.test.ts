import { expect } from 'chai';
import { InvalidOptions, ResourceLimit } from '../../../src/errors/index.js';
import {
  accepts, acceptsPrefix, compileJsonSchema, ConstrainedDecoder, jsonObjectGrammar, toolCallGrammar, type Grammar,
} from '../../../src/model/grammar/index.js';
import { numberComplete, numberFeasible, type NumberRange } from '../../../src/model/grammar/grammar.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { loadTokenizer } from '../../../src/model/tokenizer/load.js';
import type { Tokenizer } from '../../../src/model/tokenizer/types.js';
import { mulberry32 } from '../../../src/numerics/random.js';
import { argmax } from '../../../src/model/qwen3/sampler.js';
import { modelFixture, TINY } from '../qwen3/helpers.js';
import { problem } from './validate.js';

/** An enum, a bounded integer, a bounded string, nested objects and arrays, anyOf and $ref. */
const SCHEMA = {
  $defs: {
    point: {
      type: 'object', additionalProperties: false, required: ['x', 'y'],
      properties: { x: { type: 'integer', minimum: -5, maximum: 5 }, y: { type: 'integer', exclusiveMinimum: 0, maximum: 30 } },
    },
  },
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    name: { type: 'string', minLength: 1, maxLength: 8 },
    tags: { type: 'array', items: { type: 'string', maxLength: 4 }, minItems: 1, maxItems: 3 },
    where: { $ref: '#/$defs/point' },
    extra: { anyOf: [{ type: 'null' }, { type: 'number', minimum: 0, exclusiveMaximum: 1 }, { const: 'none' }] },
    note: { type: 'string', maxLength: 3 },
  },
  required: ['kind', 'age', 'name', 'tags', 'where', 'extra'],
};

/** A recursive schema: a tree of small integers, through $ref. */
const TREE = {
  $defs: {
    node: {
      type: 'object', additionalProperties: false, required: ['v'],
      properties: { v: { type: 'integer', minimum: 0, maximum: 9 }, kids: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 } },
    },
  },
  $ref: '#/$defs/node',
};

/** anyOf branches that share a prefix (both stacks alive through the name string). */
const BRANCHES = {
  anyOf: [
    { type: 'object', additionalProperties: false, required: ['name', 'a'], properties: { name: { type: 'string', maxLength: 5 }, a: { type: 'integer', minimum: 0, maximum: 3 } } },
    { type: 'object', additionalProperties: false, required: ['name', 'b'], properties: { name: { type: 'string', minLength: 2, maxLength: 9 }, b: { type: 'boolean' } } },
  ],
};

describe('grammar: JSON Schema compiler', () => {
  it('accepts the texts the schema allows and refuses the ones it does not', () => {
    const g = compileJsonSchema(SCHEMA);
    const ok = '{"kind":"dog", "age":7,"name":"rex","tags":["a"],"where":{"x":-5,"y":1},"extra":0.25}';
    expect(accepts(g, ok)).to.equal(true);
    expect(accepts(g, ok.replace('"age":7', '"age":121'))).to.equal(false);
    expect(accepts(g, ok.replace('"dog"', '"cow"'))).to.equal(false);
    expect(accepts(g, ok.replace('"rex"', '"rexrexrex"'))).to.equal(false);
    expect(accepts(g, ok.replace('"y":1', '"y":0'))).to.equal(false);
    expect(accepts(g, ok.replace('0.25', '1'))).to.equal(false);
    expect(accepts(g, ok.replace('0.25', 'null'))).to.equal(true);
    expect(accepts(g, ok.replace('["a"]', '[]'))).to.equal(false);
    // Whitespace is bounded: one space after a colon or comma, nowhere else.
    expect(accepts(g, ok.replace('"age":', '"age":  '))).to.equal(false);
    expect(accepts(g, ` ${ok}`)).to.equal(false);
    // A prefix that can still reach a bound is alive; one that cannot is not.
    expect(acceptsPrefix(g, '{"kind":"dog","age":12')).to.equal(true);
    expect(acceptsPrefix(g, '{"kind":"dog","age":13')).to.equal(true);
    expect(acceptsPrefix(g, '{"kind":"dog","age":130')).to.equal(false);
    expect(acceptsPrefix(g, '{"kind":"dog","age":01')).to.equal(false);
  });

  it('a number in range never reaches a dead end: every live prefix is whole or has a next character', () => {
    const ranges: NumberRange[] = [
      [true, 0, 3], [true, -3, 0], [true, -1, 1], [true, 5, 5], [true, 0, 120], [true, -120, -7], [true, 10, 19], [true, -Infinity, Infinity],
    ].map(([integer, lo, hi]) => ({ integer: integer as boolean, lo: lo as number, hi: hi as number, loExclusive: false, hiExclusive: false }));
    ranges.push({ integer: false, lo: 0, hi: 1, loExclusive: false, hiExclusive: true }, { integer: false, lo: -1, hi: 0, loExclusive: true, hiExclusive: false },
      { integer: false, lo: 0, hi: 0, loExclusive: false, hiExclusive: false }, { integer: false, lo: -2.5, hi: 3.25, loExclusive: false, hiExclusive: false });
    for (const r of ranges) {
      let live = [''];
      let seen = 0;
      for (let depth = 0; depth < 6 && live.length > 0; depth++) {
        const next: string[] = [];
        for (const p of live) {
          // eslint-disable-next-line @typescript-eslint/no-misused-spread -- one character at a time, all ASCII
          const kids = [...'-0123456789.'].map((c) => p + c).filter((q) => numberFeasible(r, q));
          expect(kids.length > 0 || numberComplete(r, p), `${JSON.stringify(r)} dead at ${JSON.stringify(p)}`).to.equal(true);
          if (numberComplete(r, p)) seen++;
          next.push(...kids);
        }
        live = next.slice(0, 2000);
      }
      expect(seen, JSON.stringify(r)).to.be.above(0);
    }
    // Negative control: "-" is not offered when no negative number is in range.
    expect(numberFeasible(ranges[0]!, '-')).to.equal(false);
    expect(numberFeasible(ranges[1]!, '-')).to.equal(true);
  });

  it('compiles recursion through $ref, and json_object as any object', () => {
    const t = compileJsonSchema(TREE);
    expect(accepts(t, '{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4}]}]}')).to.equal(true);
    expect(accepts(t, '{"v":1,"kids":[{"v":2},{"v":3},{"v":4}]}')).to.equal(false);
    const o = jsonObjectGrammar();
    expect(accepts(o, '{"a": [1, -2.5, "x", {"b": null}], "c":true}')).to.equal(true);
    expect(accepts(o, '[1]')).to.equal(false);
    expect(accepts(o, '"x"')).to.equal(false);
  });

  it('an enum of many values keeps every value (shared prefixes matched once)', () => {
    const values = [...Array.from({ length: 300 }, (_, i) => `v${i.toString(36)}${'x'.repeat(i % 3)}`), 7, null, 'ünï', { a: [1] }];
    const g = compileJsonSchema({ enum: values });
    for (const v of values) expect(accepts(g, JSON.stringify(v)), JSON.stringify(v)).to.equal(true);
    expect(accepts(g, '"v1xx"')).to.equal(false);
    expect(accepts(g, '"v"')).to.equal(false);
  });

  it('refuses an unsupported keyword with a typed error naming its path', () => {
    const bad = { type: 'object', properties: { x: { type: 'string', pattern: '^a' } }, additionalProperties: false };
    expect(() => compileJsonSchema(bad)).to.throw(InvalidOptions).with.property('field', 'response_format.json_schema.schema.properties.x.pattern');
    expect(() => compileJsonSchema({ type: 'object', properties: {}, additionalProperties: true })).to.throw(InvalidOptions).with.property('field').that.matches(/additionalProperties$/);
    expect(() => compileJsonSchema({ oneOf: [] })).to.throw(InvalidOptions).with.property('field').that.matches(/oneOf$/);
    expect(() => compileJsonSchema({ $ref: 'http://x/y' })).to.throw(InvalidOptions).with.property('field').that.matches(/\$ref$/);
    expect(() => compileJsonSchema({ type: 'integer', minimum: 5, maximum: 4 })).to.throw(InvalidOptions);
    expect(() => compileJsonSchema({ type: 'thing' })).to.throw(InvalidOptions).with.property('field').that.matches(/type$/);
    const tool = [{ name: 'f', parameters: { type: 'object', properties: { a: { format: 'date' } } } }];
    expect(() => toolCallGrammar(tool)).to.throw(InvalidOptions).with.property('field', 'tools[0].function.parameters.properties.a.format');
  });

  it('refuses a schema past its bounds of depth and size', () => {
    let deep: unknown = { type: 'integer' };
    for (let i = 0; i < 40; i++) deep = { type: 'array', items: deep };
    expect(() => compileJsonSchema(deep)).to.throw(ResourceLimit).with.property('what', 'schema-depth');
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'null' }])) };
    expect(() => compileJsonSchema(wide)).to.throw(ResourceLimit).with.property('what', 'schema-nodes');
  });
});

describe('grammar: constrained decoding over a vocabulary', function () {
  this.timeout(60_000);
  const fx = modelFixture();
  let tok: Tokenizer;
  before(() => { tok = loadTokenizer(fx.gguf('t.gguf', TINY)); });

  /** Draws each token at random among the allowed ones (random logits, `bias` added to ids whose text has one of `favour`'s bytes). */
  function drive(g: Grammar, seed: number, max = 400, favour = ''): { text: string; ended: boolean } {
    const d = new ConstrainedDecoder(g, tok, tok.eosIds, tok.vocabSize);
    const rand = mulberry32(seed);
    const ids: number[] = [];
    for (let i = 0; i < max; i++) {
      // eslint-disable-next-line @typescript-eslint/no-misused-spread -- the decoded text's code points are what is tested
      const logits = Array.from({ length: tok.vocabSize }, (_, id) => rand() + ([...(tok.decode([id]))].some((c) => favour.includes(c)) ? 3 : 0));
      const id = argmax(d.mask(logits));
      if (tok.eosIds.includes(id)) return { text: tok.decode(ids), ended: true };
      d.accept(id);
      ids.push(id);
    }
    return { text: tok.decode(ids), ended: false };
  }

  it('every drawn output is valid under its schema and ends with end-of-sequence', () => {
    const g = compileJsonSchema(SCHEMA);
    const t = compileJsonSchema(TREE);
    for (let seed = 0; seed < 20; seed++) {
      const a = drive(g, seed);
      expect(a.ended, a.text).to.equal(true);
      expect(problem(SCHEMA, a.text), a.text).to.equal(undefined);
      const b = drive(t, seed, 400, '}]');
      expect(b.ended, b.text).to.equal(true);
      expect(problem(TREE, b.text), b.text).to.equal(undefined);
      const c = drive(compileJsonSchema(BRANCHES), seed, 400, '"');
      expect(c.ended, c.text).to.equal(true);
      expect(problem(BRANCHES, c.text), c.text).to.equal(undefined);
    }
  });

  it('json_object outputs parse as objects', () => {
    for (let seed = 0; seed < 10; seed++) {
      const a = drive(jsonObjectGrammar(), seed, 600, '"}]');
      expect(a.ended, a.text).to.equal(true);
      const v: unknown = JSON.parse(a.text);
      expect(v).to.be.an('object').and.not.be.an('array');
    }
  });

  it('once the text is complete only end-of-sequence is allowed; before, never', () => {
    const g = compileJsonSchema({ type: 'object', properties: { a: { const: 1 } }, required: ['a'], additionalProperties: false });
    const d = new ConstrainedDecoder(g, tok, tok.eosIds, tok.vocabSize);
    const open = d.mask(new Array<number>(tok.vocabSize).fill(0));
    for (const e of tok.eosIds) expect(open[e]).to.equal(-Infinity);
    for (const id of tok.encode('{"a":1}')) d.accept(id);
    const end = d.mask(new Array<number>(tok.vocabSize).fill(0));
    const finite = [...end.keys()].filter((i) => end[i]! > -Infinity);
    expect(finite).to.deep.equal([...tok.eosIds].sort((x, y) => x - y));
  });

  it('negative control: a grammar that drops a bound lets an invalid value through', () => {
    const loose = structuredClone(SCHEMA);
    (loose.properties.age as { maximum?: number }).maximum = undefined;
    delete (loose.properties.age as { maximum?: number }).maximum;
    const g = compileJsonSchema(loose);
    const outs = Array.from({ length: 10 }, (_, seed) => drive(g, seed).text);
    expect(outs.some((t) => problem(SCHEMA, t)?.includes('maximum') === true), outs.join('\n')).to.equal(true);
    expect(outs.every((t) => problem(loose, t) === undefined)).to.equal(true);
  });
});

describe('grammar: generation with a constraint on a random-weight tiny Qwen3', function () {
  this.timeout(300_000);
  const fx = modelFixture();
  let model: Awaited<ReturnType<typeof loadModel>>;
  // On host: the constraint is the subject, and the cpu interpreter's 220-token walks were most of this file's time.
  before(async () => { model = await loadModel(fx.gguf('m.gguf', TINY), { engine: fx.engine(), ctx: 256, target: 'host' }); });

  it('temperature 1, any seed: every answer is valid under the schema', async () => {
    const constraint = compileJsonSchema(SCHEMA);
    for (let seed = 0; seed < 6; seed++) {
      const r = await model.complete({ prompt: 'json please', maxTokens: 220, temperature: 1, seed, constraint });
      expect(r.finishReason, r.text).to.equal('eos');
      expect(problem(SCHEMA, r.text), r.text).to.equal(undefined);
    }
  });

  it('a constraint on a model whose tokenizer cannot be used is refused, naming constraint', async () => {
    const bare = await loadModel(fx.gguf('bare.gguf', { ...TINY, vocab: 64 }), { engine: fx.engine(), ctx: 32 });
    let err: unknown;
    try { await bare.complete({ promptIds: [1, 2], maxTokens: 3, constraint: jsonObjectGrammar() }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(InvalidOptions).with.property('field', 'constraint');
    expect((await bare.complete({ promptIds: [1, 2], maxTokens: 3 })).ids).to.have.length(3);
  });

  it('negative control: the same requests unconstrained are not valid', async () => {
    for (let seed = 0; seed < 3; seed++) {
      const r = await model.complete({ prompt: 'json please', maxTokens: 60, temperature: 1, seed });
      expect(problem(SCHEMA, r.text), r.text).to.not.equal(undefined);
    }
  });

  it('a forced tool call is Qwen\'s <tool_call> with arguments valid under the tool\'s schema', async () => {
    const parameters = {
      type: 'object', additionalProperties: false, required: ['city', 'days', 'unit'],
      properties: { city: { type: 'string', minLength: 1, maxLength: 10 }, days: { type: 'integer', minimum: 1, maximum: 7 }, unit: { enum: ['c', 'f'] } },
    };
    const constraint = toolCallGrammar([{ name: 'get_weather', parameters }, { name: 'noop' }]);
    for (let seed = 0; seed < 4; seed++) {
      const r = await model.complete({ prompt: 'call a tool', maxTokens: 160, temperature: 1, seed, constraint });
      expect(r.finishReason, r.text).to.equal('eos');
      const m = /^<tool_call>\n(.*)\n<\/tool_call>$/s.exec(r.text);
      expect(m, r.text).to.not.equal(null);
      const call = JSON.parse(m![1]!) as { name: string; arguments: unknown };
      if (call.name === 'get_weather') expect(problem(parameters, JSON.stringify(call.arguments))).to.equal(undefined);
      else expect(call).to.deep.equal({ name: 'noop', arguments: {} });
    }
  });
});
