/**
 * The planted slips scripts/mutants.mjs runs: each one realistic one-line bug in compiled output.
 *   id      a name
 *   kind    the kind of gap it stands for (issue 27 item 11, item 9)
 *   file    under dist/
 *   find    a string found exactly once in that file; replace: what it becomes
 *   tests   the existing test files nearest the code (under dist/, as test/...test.js): what caught it, or
 *           not, before the slip tests (`--before`); grep: an optional mocha --grep
 *   added   the slip tests written for it (the slips.test.ts files), run first by default
 *   why     what a user would see
 * When the code moves on and a search string is no longer found, the mutant is reported stale: update it.
 */
const Q = 'test/model/qwen3';
const T = 'test/model/tokenizer';

export const MUTANTS = [
  // --- model programs: attention, rope, masks (item 9 and the GQA shapes) ---
  {
    id: 'gqa-head-order', kind: 'model', file: 'src/model/qwen3/program.js',
    find: 'return p.reshape(p.transpose(o, [1, 0, 2, 3]), [t, c.heads * c.headDim]);',
    replace: 'return p.reshape(p.transpose(o, [1, 2, 0, 3]), [t, c.heads * c.headDim]);',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'query head h = j * kvHeads + kv instead of kv * groups + j',
  },
  {
    id: 'gqa-query-group', kind: 'model', file: 'src/model/qwen3/program.js',
    find: 'p.reshape(q, [t, c.kvHeads, g, c.headDim])',
    replace: 'p.reshape(q, [t, g, c.kvHeads, c.headDim])',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'query heads grouped interleaved',
  },
  {
    id: 'causal-mask-off-by-one', kind: 'kv-slot', file: 'src/model/qwen3/layers.js',
    find: "const visible = p.ge(p.broadcast(positions, [t, ctx], [0]), p.iota([t, ctx], 1, 'i32'));",
    replace: "const visible = p.ge(p.add(p.broadcast(positions, [t, ctx], [0]), 1), p.iota([t, ctx], 1, 'i32'));",
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'each token sees the next cache slot',
  },
  {
    id: 'mask-input-off-by-one', kind: 'kv-slot', file: 'src/model/qwen3/layers.js',
    find: 'm[t * ctx + j] = j <= positions[t] ? 0 : MASKED_INPUT;',
    replace: 'm[t * ctx + j] = j < positions[t] ? 0 : MASKED_INPUT;',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`, `${Q}/npu4.test.js`], added: [`${Q}/slips.test.js`], why: 'the plain form (mask as input) hides the token itself',
  },
  {
    id: 'sliding-window-edge', kind: 'boundary', file: 'src/model/qwen3/layers.js',
    find: 'p.ge(j, p.sub(pos, window - 1))',
    replace: 'p.ge(j, p.sub(pos, window))',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`, 'test/model/arch/llamacpp.test.js'], added: [`${Q}/slips.test.js`], why: 'a window of w sees w + 1 tokens',
  },
  {
    id: 'rope-frequency', kind: 'kv-slot', file: 'src/model/qwen3/layers.js',
    find: "let invFreq = p.exp(p.mul(p.iota([half], 0, 'f32'), (-2 * Math.log(theta)) / headDim));",
    replace: "let invFreq = p.exp(p.mul(p.iota([half], 0, 'f32'), (-Math.log(theta)) / headDim));",
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'rope frequencies theta^(-i/D) instead of theta^(-2i/D)',
  },
  {
    id: 'rope-sign', kind: 'oracle-same', file: 'src/model/qwen3/layers.js',
    find: 'const sin = p.broadcast(tables.sin, [t, h, half], [0, 2]);\n    const x1 = p.slice(x, [0, 0, 0], [t, h, half]);',
    replace: 'const sin = p.neg(p.broadcast(tables.sin, [t, h, half], [0, 2]));\n    const x1 = p.slice(x, [0, 0, 0], [t, h, half]);',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'neox rope turns the wrong way (the oracle runs the same wrong program)',
  },
  {
    id: 'rope-table-input', kind: 'kv-slot', file: 'src/model/qwen3/layers.js',
    find: 'const angle = positions[t] * freqScale * Math.exp((i * -2 * Math.log(theta)) / headDim);',
    replace: 'const angle = (positions[t] + 1) * freqScale * Math.exp((i * -2 * Math.log(theta)) / headDim);',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`, `${Q}/npu4.test.js`], added: [`${Q}/slips.test.js`], why: 'the plain form\'s rope tables one position ahead',
  },
  {
    id: 'rmsnorm-mean', kind: 'oracle-same', file: 'src/model/qwen3/layers.js',
    find: 'const ms = b.div(b.reduceSum(b.mul(xv, xv)), c);',
    replace: 'const ms = b.div(b.reduceSum(b.mul(xv, xv)), c - 1);',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'RMSNorm divides by C - 1 (same program on the oracle)',
  },
  {
    id: 'attention-scale', kind: 'oracle-same', file: 'src/model/qwen3/program.js',
    find: 'const probs = f.softmax(p, scores, bias, 1 / Math.sqrt(c.headDim));',
    replace: 'const probs = f.softmax(p, scores, bias, 1 / Math.sqrt(c.hidden));',
    tests: [`${Q}/programs.test.js`, `${Q}/llamacpp.test.js`], added: [`${Q}/slips.test.js`], why: 'attention scaled by 1/sqrt(hidden)',
  },
  {
    id: 'decode-kv-slot', kind: 'kv-slot', file: 'src/model/qwen3/generate.js',
    find: 'logits = await cache.step(g.program(1), [id], [pos]);',
    replace: 'logits = await cache.step(g.program(1), [id], [pos + 1]);',
    tests: [`${Q}/decoding.test.js`], added: [`${Q}/slips.test.js`], why: 'each decode step writes the cache slot after its own (and ropes one ahead)',
  },
  {
    id: 'prefill-chunk-positions', kind: 'boundary', file: 'src/model/qwen3/generate.js',
    find: 'ids.map((_, k) => at + k)',
    replace: 'ids.map((_, k) => k)',
    tests: [`${Q}/decoding.test.js`], added: [`${Q}/slips.test.js`], why: 'a prompt longer than one prefill chunk writes every chunk at slot 0',
  },
  {
    id: 'ctx-exactly-full', kind: 'boundary', file: 'src/model/qwen3/generate.js',
    find: 'if (pos >= g.ctx) {',
    replace: 'if (pos > g.ctx) {',
    tests: [`${Q}/decoding.test.js`], added: [`${Q}/slips.test.js`], why: 'a generation runs a step past a full context',
  },
  {
    id: 'eos-finish-reason', kind: 'serve', file: 'src/model/qwen3/generate.js',
    find: "finish = 'eos';",
    replace: "finish = 'length';",
    tests: [`${Q}/decoding.test.js`], added: [`${Q}/slips.test.js`], why: 'an end-of-sequence reported as length',
  },
  {
    id: 'abort-keeps-cache', kind: 'serve', file: 'src/model/qwen3/generate.js',
    find: 'void running.then(() => cache.close(), () => cache.close())',
    replace: 'void running.then(() => undefined, () => cache.close())',
    tests: [`${Q}/abort.test.js`], added: [`${Q}/slips.test.js`], why: 'a generation aborted during a step never gives its cache back',
  },
  {
    id: 'yarn-corr-dims-round', kind: 'model', file: 'src/model/qwen3/layers.js',
    find: 'Math.floor(at(y.betaFast))',
    replace: 'Math.ceil(at(y.betaFast))',
    tests: ['test/model/arch/yarn.test.js'], why: "YaRN's ramp starts one frequency late",
  },
  {
    id: 'yarn-mscale-sign', kind: 'model', file: 'src/model/qwen3/layers.js',
    find: 'm *= 1 + 0.1 * Math.log(1 / fs);',
    replace: 'm *= 1 + 0.1 * Math.log(fs);',
    tests: ['test/model/arch/yarn.test.js'], why: "YaRN's attention factor below 1",
  },
  {
    id: 'logprob-unnormalized', kind: 'serve', file: 'src/model/qwen3/generate.js',
    find: 'logprob: logits[i] - norm',
    replace: 'logprob: logits[i] - most',
    tests: [`${Q}/sampling.test.js`, 'test/serve/openai.test.js'], why: 'log probabilities not normalized (the top one 0)',
  },
  {
    id: 'prompt-exactly-ctx', kind: 'boundary', file: 'src/model/qwen3/generate.js',
    find: 'if (ids.length > g.ctx)',
    replace: 'if (ids.length >= g.ctx)',
    tests: [`${Q}/decoding.test.js`], added: [`${Q}/slips.test.js`], why: 'a prompt that fills the context exactly refused',
  },
  {
    id: 'argmax-last-of-equals', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'if (v > top || top !== top)',
    replace: 'if (v >= top || top !== top)',
    tests: [`${Q}/decoding.test.js`], why: 'greedy picks the highest id among equal logits',
  },
  // --- serve: finish reasons and the release of an aborted generation ---
  {
    id: 'finish-stop-string', kind: 'serve', file: 'src/serve/wire.js',
    find: "return f === 'eos' || f === 'stop' ? 'stop' : 'length';",
    replace: "return f === 'eos' ? 'stop' : 'length';",
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a stop string reported as length',
  },
  {
    id: 'finish-context-code', kind: 'serve', file: 'src/serve/wire.js',
    find: "const CONTEXT_LIMITS = new Set(['context', 'prompt-bytes']);",
    replace: "const CONTEXT_LIMITS = new Set(['prompt-bytes']);",
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a prompt past the context is not context_length_exceeded',
  },
  {
    id: 'stream-finish-reason', kind: 'serve', file: 'src/serve/server.js',
    find: "chunk({ delta: {}, finish_reason: called > 0 ? 'tool_calls' : finish_reason })",
    replace: "chunk({ delta: {}, finish_reason: called > 0 ? 'tool_calls' : 'stop' })",
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a streamed chat always ends with stop',
  },
  {
    id: 'stream-completion-finish', kind: 'serve', file: 'src/serve/server.js',
    find: "chunk({ text: '', finish_reason })",
    replace: "chunk({ text: '', finish_reason: 'stop' })",
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a streamed completion always ends with stop',
  },
  {
    id: 'whole-finish-reason', kind: 'serve', file: 'src/serve/server.js',
    find: '? { index: c.index, message: messageOf(res.text), finish_reason, logprobs }',
    replace: "? { index: c.index, message: messageOf(res.text), finish_reason: 'stop', logprobs }",
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a non-streamed chat always ends with stop',
  },
  {
    id: 'gone-not-released', kind: 'serve', file: 'src/serve/server.js',
    find: '            await it.return(undefined);\n            return undefined;',
    replace: '            return undefined;',
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a non-streamed request whose client left keeps its generation',
  },
  {
    id: 'stream-gone-not-released', kind: 'serve', file: 'src/serve/server.js',
    find: '                    await it.return(undefined);\n                    return;',
    replace: '                    return;',
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'a streamed request whose client left keeps its generation',
  },
  {
    id: 'observed-not-released', kind: 'serve', file: 'src/serve/server.js',
    find: '        live.kv = 0;\n        await it.return(undefined);',
    replace: '        live.kv = 0;',
    tests: ['test/serve/openai.test.js', 'test/serve/text.test.js'], added: ['test/serve/slips.test.js'], why: 'the metrics wrapper does not pass a return on to the generation',
  },
  {
    id: 'farm-removal-one-batch', kind: 'boundary', file: 'src/jobs/farmQueue.js',
    find: 'left.slice(from, from + 100)',
    replace: 'left.slice(0, 100)',
    tests: ['test/farm/queueTimeout.test.js'], added: ['test/farm/slips.test.js'], why: 'a farm that gives up leaves every job past the first 100 in the queue',
  },
  {
    id: 'wire-max-tokens-precedence', kind: 'serve', file: 'src/serve/wire.js',
    find: "const maxTokens = int(b, 'max_completion_tokens', 0) ?? int(b, 'max_tokens', 0);",
    replace: "const maxTokens = int(b, 'max_tokens', 0) ?? int(b, 'max_completion_tokens', 0);",
    tests: ['test/serve/wire.test.js'], added: ['test/serve/slips.test.js'], why: 'max_tokens wins over max_completion_tokens',
  },
  {
    id: 'wire-top-k-one-dropped', kind: 'serve', file: 'src/serve/wire.js',
    find: '...(topK !== undefined && topK > 0 ? { topK } : {}),',
    replace: '...(topK !== undefined && topK > 1 ? { topK } : {}),',
    tests: ['test/serve/wire.test.js'], added: ['test/serve/slips.test.js'], why: 'top_k 1 (greedy sampling) dropped',
  },
  {
    id: 'stop-string-prefix-held', kind: 'serve', file: 'src/model/qwen3/stream.js',
    find: 'for (let k = Math.min(s.length - 1, this.#text.length); k > 0; k--)',
    replace: 'for (let k = Math.min(s.length - 2, this.#text.length); k > 0; k--)',
    tests: [`${Q}/decoding.test.js`], why: 'a stop string\'s start but its last character is streamed before the stop is seen',
  },
  // --- state handoff ---
  {
    id: 'shared-state-dtype', kind: 'handoff', file: 'src/session/session.js',
    find: 'src.dtype !== h.dtype || src.bytes.length !== h.bytes',
    replace: 'src.bytes.length !== h.bytes',
    tests: ['test/devices/hostHandover.test.js', 'test/jobs/deviceSession.test.js', `${Q}/handoff.test.js`], added: ['test/session/slips.test.js'], why: 'f16 state bytes taken as bf16 (same size) without a word',
  },
  {
    id: 'session-state-dtype', kind: 'handoff', file: 'src/session/session.js',
    find: 'src.dtype !== h.dtype || src.bytes !== h.bytes',
    replace: 'src.bytes !== h.bytes',
    tests: ['test/devices/hostHandover.test.js', 'test/jobs/deviceSession.test.js', `${Q}/handoff.test.js`], added: ['test/session/slips.test.js'], why: 'another session\'s f16 state taken as bf16',
  },
  // --- contract constants ---
  {
    id: 'unit-roundoff', kind: 'contract', file: 'src/targets/host/contracts.js',
    find: 'export const F32_U = 2 ** -24;',
    replace: 'export const F32_U = 2 ** -23;',
    tests: ['test/targets/host.test.js', 'test/contracts/host.test.js'], added: ['test/targets/slips.test.js'], why: 'every derived bound twice too loose',
  },
  {
    id: 'gamma-loose', kind: 'contract', file: 'src/targets/host/contracts.js',
    find: 'return (n * F32_U) / (1 - n * F32_U);',
    replace: 'return (2 * n * F32_U) / (1 - n * F32_U);',
    tests: ['test/targets/host.test.js', 'test/contracts/host.test.js'], added: ['test/targets/slips.test.js'], why: 'γ(n) twice too loose',
  },
  {
    id: 'ulps-loose', kind: 'contract', file: 'src/targets/host/contracts.js',
    find: 'rsqrt: ulps(1), exp: ulps(1),',
    replace: 'rsqrt: ulps(1), exp: ulps(2),',
    tests: ['test/targets/host.test.js', 'test/contracts/host.test.js'], added: ['test/targets/slips.test.js'], why: 'exp published at 2 ulp',
  },
  {
    id: 'attention-bound-loose', kind: 'contract', file: 'src/targets/host/contracts.js',
    find: 'const eps = gamma(r.N) + (max - min + 5) * F32_U + 2 * delta;',
    replace: 'const eps = gamma(r.N) + (max - min + 5) * F32_U + 4 * delta;',
    tests: ['test/targets/host.test.js', 'test/contracts/host.test.js'], added: ['test/targets/slips.test.js'], why: 'the fused attention bound twice too loose in its score term',
  },
  // --- remote cache tier ---
  {
    id: 'remote-miss-uncounted', kind: 'remote', file: 'src/cache/remoteTier.js',
    find: 'if (file === null) {\n            this.#counts.misses++;',
    replace: 'if (file === null) {',
    tests: ['test/farm/remoteCache.test.js'], added: ['test/cache/slips.test.js'], why: 'a remote miss is not counted',
  },
  {
    id: 'remote-damaged-not-miss', kind: 'remote', file: 'src/cache/remoteTier.js',
    find: 'if (!read.ok) {\n            this.#counts.damaged++;\n            this.#counts.misses++;',
    replace: 'if (!read.ok) {\n            this.#counts.damaged++;',
    tests: ['test/farm/remoteCache.test.js'], added: ['test/cache/slips.test.js'], why: 'a damaged entry is not counted a miss',
  },
  {
    id: 'remote-retry-ignored', kind: 'remote', file: 'src/cache/remoteTier.js',
    find: 'if (Date.now() < this.#downUntil)\n            return null;',
    replace: 'if (Date.now() > this.#downUntil)\n            return null;',
    tests: ['test/farm/remoteCache.test.js'], added: ['test/cache/slips.test.js'], why: 'a down server is retried on every call, not after retryMs',
  },
  {
    id: 'remote-retry-default', kind: 'remote', file: 'src/cache/remoteTier.js',
    find: 'this.#downUntil = Date.now() + (this.#opts.retryMs ?? 10_000);',
    replace: 'this.#downUntil = Date.now() + (this.#opts.retryMs ?? 10);',
    tests: ['test/farm/remoteCache.test.js'], added: ['test/cache/slips.test.js'], why: 'the default retry pause is 10 ms, not 10 s',
  },
  // --- tokenizer: added tokens and pre-tokenizer regexes ---
  {
    id: 'added-shortest-first', kind: 'tokenizer', file: 'src/model/tokenizer/added.js',
    find: 'list.sort((a, b) => b.content.length - a.content.length);',
    replace: 'list.sort((a, b) => a.content.length - b.content.length);',
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'added tokens that prefix one another: the shorter one wins',
  },
  {
    id: 'added-refused-rescanned', kind: 'tokenizer', file: 'src/model/tokenizer/added.js',
    find: 'i = stop;\n            if (t.special && !parseSpecial)',
    replace: 'i = start + 1;\n            if (t.special && !parseSpecial)',
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'a refused match is searched again for shorter tokens inside it',
  },
  {
    id: 'added-single-word-after', kind: 'tokenizer', file: 'src/model/tokenizer/added.js',
    find: '|| (after !== undefined && WORD_CHAR.test(String.fromCodePoint(after))))',
    replace: ')',
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'a single-word token at the start of a word is taken',
  },
  {
    id: 'llama3-digit-runs', kind: 'tokenizer', file: 'src/model/tokenizer/pattern.js',
    find: '\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
    replace: '\\p{N}{1,4}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'Llama 3 digits in runs of four',
  },
  {
    id: 'qwen2-digit-runs', kind: 'tokenizer', file: 'src/model/tokenizer/pattern.js',
    find: '?\\p{L}+|\\p{N}| ?[^',
    replace: '?\\p{L}+|\\p{N}+| ?[^',
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'Qwen2 digits as one piece rather than one each',
  },
  {
    id: 'qwen2-contraction-case', kind: 'tokenizer', file: 'src/model/tokenizer/pattern.js',
    find: "export const QWEN2_PATTERN = String.raw `(?:'[sS]|",
    replace: "export const QWEN2_PATTERN = String.raw `(?:'s|",
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: "Qwen2's 'S not a contraction",
  },
  {
    id: 'gpt2-digit-space', kind: 'tokenizer', file: 'src/model/tokenizer/pattern.js',
    find: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+|",
    replace: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+|\\p{N}+|",
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'GPT-2 digits lose their leading space',
  },
  {
    id: 'gpt4o-upperish', kind: 'tokenizer', file: 'src/model/tokenizer/pattern.js',
    find: 'const UPPERISH = String.raw `[^\\P{L}a-z]`;',
    replace: 'const UPPERISH = String.raw `\\p{Lu}`;',
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'GPT-4o: a non-ASCII lower-case letter is not upper-case-like as llama.cpp has it',
  },
  {
    id: 'byte-level-prefix-twice', kind: 'tokenizer', file: 'src/model/tokenizer/pretokenize.js',
    find: "const p = addPrefixSpace && !piece.startsWith(' ') ? ` ${piece}` : piece;",
    replace: "const p = addPrefixSpace ? ` ${piece}` : piece;",
    tests: [`${T}/components.test.js`, `${T}/hf.test.js`, `${T}/gguf.test.js`, `${T}/llamaCpp.test.js`], added: [`${T}/slips.test.js`], why: 'a piece that begins with a space gets a second one',
  },
  // --- sampler ---
  {
    id: 'top-k-plus-one', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'let m = o.topK > 0 ? Math.min(o.topK, l.length)',
    replace: 'let m = o.topK > 0 ? Math.min(o.topK + 1, l.length)',
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'top_k keeps k + 1 ids',
  },
  {
    id: 'top-p-edge', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'while (keep < ids.length && acc < o.topP * total)',
    replace: 'while (keep < ids.length && acc <= o.topP * total)',
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'top_p keeps one id past the mass it reached exactly',
  },
  {
    id: 'min-p-edge', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'while (k < keep && w[k] >= o.minP * w[0])',
    replace: 'while (k < keep && w[k] > o.minP * w[0])',
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'min_p drops an id exactly at the floor',
  },
  {
    id: 'repetition-negative', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'out[id] = v < 0 ? v * penalty : v / penalty;',
    replace: 'out[id] = v / penalty;',
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'a negative logit is raised by the repetition penalty',
  },
  {
    id: 'presence-per-count', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'l[id] -= c * o.frequencyPenalty + o.presencePenalty;',
    replace: 'l[id] -= c * (o.frequencyPenalty + o.presencePenalty);',
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'the presence penalty counted per occurrence',
  },
  {
    id: 'top-ids-ties', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: 'if (l[i] > cut)\n            ids.push(i);',
    replace: 'if (l[i] >= cut)\n            ids.push(i);',
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'ties at the k-th logit all kept (more than k ids)',
  },
  {
    id: 'top-p-zero-accepted', kind: 'sampler', file: 'src/model/qwen3/sampler.js',
    find: "check(o.topP, 'topP', (n) => n > 0 && n <= 1,",
    replace: "check(o.topP, 'topP', (n) => n >= 0 && n <= 1,",
    tests: [`${Q}/sampling.test.js`, `${Q}/decoding.test.js`], added: [`${Q}/samplerSlips.test.js`], why: 'top_p 0 accepted',
  },
  // --- tool-call and grammar parsers ---
  {
    id: 'toolcall-partial-tag', kind: 'parser', file: 'src/serve/toolcalls.js',
    find: 'for (let k = Math.min(tag.length - 1, s.length); k > 0; k--)',
    replace: 'for (let k = Math.min(tag.length - 2, s.length); k > 0; k--)',
    tests: ['test/serve/toolcalls.test.js'], added: ['test/serve/slips.test.js'], why: 'an open tag split before its last character leaks as text',
  },
  {
    id: 'toolcall-unknown-tool', kind: 'parser', file: 'src/serve/toolcalls.js',
    find: 'if (call !== undefined && this.tools.has(call.name)) {',
    replace: 'if (call !== undefined) {',
    tests: ['test/serve/toolcalls.test.js'], added: ['test/serve/slips.test.js'], why: 'a block naming a tool not offered is a call',
  },
  {
    id: 'toolcall-gap-lost', kind: 'parser', file: 'src/serve/toolcalls.js',
    find: 'out.push({ text: this.#gap + open + body + close });',
    replace: 'out.push({ text: open + body + close });',
    tests: ['test/serve/toolcalls.test.js'], added: ['test/serve/slips.test.js'], why: 'the space before a block that is not a call is lost',
  },
  {
    id: 'toolcall-unclosed', kind: 'parser', file: 'src/serve/toolcalls.js',
    find: 'return [{ text: this.#gap + this.format.open + held }];',
    replace: 'return [{ text: held }];',
    tests: ['test/serve/toolcalls.test.js'], added: ['test/serve/slips.test.js'], why: 'an unclosed block loses its open tag',
  },
  {
    id: 'grammar-max-length', kind: 'parser', file: 'src/model/grammar/decoder.js',
    find: 'if (n < max)\n                    walkBody(j, n + 1, min, max, after);',
    replace: 'if (n <= max)\n                    walkBody(j, n + 1, min, max, after);',
    tests: ['test/model/grammar/grammar.test.js'], added: ['test/model/grammar/slips.test.js'], why: 'a string one past maxLength allowed',
  },
  {
    id: 'grammar-min-length', kind: 'parser', file: 'src/model/grammar/decoder.js',
    find: 'else if (b === 0x22 && n >= min) {\n                const s = after();',
    replace: 'else if (b === 0x22 && n > min) {\n                const s = after();',
    tests: ['test/model/grammar/grammar.test.js'], added: ['test/model/grammar/slips.test.js'], why: 'a string exactly minLength long refused',
  },
  {
    id: 'grammar-plain-room', kind: 'parser', file: 'src/model/grammar/decoder.js',
    find: 'if (len > 0 && plainRun[id] === len && len <= room) {',
    replace: 'if (len > 0 && plainRun[id] === len && len < room) {',
    tests: ['test/model/grammar/grammar.test.js'], added: ['test/model/grammar/slips.test.js'], why: 'a token filling the string\'s room exactly refused',
  },
];
