/**
 * `node dist/bench/grammar.js`: the cost of constrained decoding on Qwen3's real vocabulary (151k ids):
 * building the vocabulary's trie once, then the time per token of masking and following, over
 * generations whose tokens are drawn at random among the allowed ones (random logits), for a
 * schema with an enum, a bounded integer, bounded strings, nested objects and arrays, and for json_object.
 */
import { loadavg } from 'node:os';
import { loadTokenizer } from '../src/model/tokenizer/index.js';
import { QWEN3_TOKENIZER } from '../test/model/tokenizer/helpers.js';
import { compileJsonSchema, ConstrainedDecoder, jsonObjectGrammar, toolCallGrammar, vocabularyTrie, type Grammar } from '../src/model/grammar/index.js';
import { mulberry32 } from '../src/numerics/random.js';
import { argmax } from '../src/model/qwen3/sampler.js';

export const BENCH_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 24 },
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    score: { type: 'number', minimum: -1, maximum: 1 },
    tags: { type: 'array', items: { type: 'string', maxLength: 12 }, minItems: 1, maxItems: 4 },
    owner: { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 9999 }, ok: { type: 'boolean' } }, required: ['id', 'ok'], additionalProperties: false },
  },
  required: ['name', 'kind', 'age', 'tags', 'owner'],
  additionalProperties: false,
};

const tok = loadTokenizer(QWEN3_TOKENIZER);
let t = performance.now();
const trie = vocabularyTrie(tok);
console.log(`grammar bench (load average ${loadavg()[0]!.toFixed(1)}): Qwen3 vocabulary ${tok.vocabSize} ids, trie of ${trie.nodes} nodes built in ${(performance.now() - t).toFixed(0)} ms`);

function run(name: string, g: Grammar, runs: number, maxTokens: number): void {
  const times: number[] = [];
  let cpu = 0;
  let tokens = 0; let done = 0; let chars = 0;
  for (let seed = 0; seed < runs; seed++) {
    const rand = mulberry32(seed);
    const d = new ConstrainedDecoder(g, tok, tok.eosIds, tok.vocabSize);
    const logits = new Float64Array(tok.vocabSize);
    const ids: number[] = [];
    for (let i = 0; i < maxTokens; i++) {
      for (let k = 0; k < logits.length; k++) logits[k] = rand();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const m = d.mask(logits);
      const id = argmax(m);
      times.push(performance.now() - t0);
      if (tok.eosIds.includes(id)) { done++; break; }
      const t1 = performance.now();
      d.accept(id);
      times[times.length - 1]! += performance.now() - t1;
      const c = process.cpuUsage(c0);
      cpu += (c.user + c.system) / 1000;
      ids.push(id);
    }
    tokens += ids.length;
    chars += tok.decode(ids).length;
    if (seed === 0) console.log(`  ${name} sample: ${tok.decode(ids).slice(0, 200)}`);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((s, x) => s + x, 0) / times.length;
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  console.log(`${name}: ${runs} generations, ${done} complete, ${tokens} tokens (${(chars / Math.max(1, tokens)).toFixed(1)} chars/token); mask+follow per token: mean ${mean.toFixed(2)} ms, median ${q(0.5).toFixed(2)}, p90 ${q(0.9).toFixed(2)}, p99 ${q(0.99).toFixed(2)}, max ${q(1).toFixed(2)}; CPU time per token ${(cpu / times.length).toFixed(2)} ms`);
}

t = performance.now();
const schema = compileJsonSchema(BENCH_SCHEMA);
console.log(`compile schema: ${(performance.now() - t).toFixed(2)} ms`);
run('json_schema', schema, 10, 200);
run('json_object', jsonObjectGrammar(), 5, 200);
run('tool call', toolCallGrammar([{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 20 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false } }]), 5, 100);

// End to end: the demo model (Qwen3's vocabulary, a tiny random body) on host, greedy, the wall time
// per token of 25 tokens without the constraint and of the constrained answer (the trie already built).
{
  const { loadModel } = await import('../src/model/qwen3/model.js');
  const { createEngine } = await import('../src/jobs/engine.js');
  const { demoModel } = await import('../src/serve/demo.js');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(tmpdir(), 'npuo-bench-grammar-'));
  const engine = createEngine({ cacheDir: path.join(dir, 'cache') });
  try {
    const { path, tokenizer } = demoModel(dir);
    const model = await loadModel(path, { engine, ctx: 512, tokenizer, target: 'host' });
    const c = compileJsonSchema({ type: 'object', properties: { name: { type: 'string', maxLength: 40 }, kind: { enum: ['cat', 'dog'] }, age: { type: 'integer', minimum: 0, maximum: 120 } }, required: ['name', 'kind', 'age'], additionalProperties: false });
    await model.complete({ prompt: 'warm up', maxTokens: 30, constraint: c });
    const perToken = async (constraint?: Grammar) => {
      const t0 = performance.now();
      const r = await model.complete({ prompt: 'Give me JSON', maxTokens: 25, repetitionPenalty: 1, ...(constraint ? { constraint } : { ignoreEos: true }) });
      return { ms: (performance.now() - t0 - r.timings.prefillMs) / r.ids.length, n: r.ids.length };
    };
    for (let i = 0; i < 3; i++) {
      const a = await perToken();
      const b = await perToken(c);
      console.log(`demo model (host, greedy): ${a.ms.toFixed(2)} ms/token plain, ${b.ms.toFixed(2)} ms/token constrained (${b.n} tokens): +${(b.ms - a.ms).toFixed(2)} ms`);
    }
    await model.close();
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
