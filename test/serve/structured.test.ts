/**
 * Structured output through the server with the official client, on a random-weight tiny Qwen3 at
 * temperature 1: `json_schema` answers are valid under the schema for any seed, `json_object` answers
 * that end parse as objects; without response_format the same requests are not valid (the control).
 */
import { expect } from 'chai';
import { acceptsPrefix, jsonObjectGrammar } from '../../src/model/grammar/index.js';
import { problem } from '../model/grammar/validate.js';
import { startServer, tinyModel } from './helpers.js';

const SCHEMA = {
  type: 'object', additionalProperties: false, required: ['kind', 'age', 'name', 'tags'],
  properties: {
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    name: { type: 'string', minLength: 1, maxLength: 6 },
    tags: { type: 'array', items: { anyOf: [{ type: 'boolean' }, { type: 'string', maxLength: 2 }] }, maxItems: 2 },
  },
};
const HI = [{ role: 'user' as const, content: 'describe a pet as JSON' }];

describe('serve: response_format json_schema and json_object', function () {
  this.timeout(180_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => { model = tinyModel(); s = await startServer(model.path, { load: { ctx: 256 } }); });
  after(async () => { await s.server.close(); model.remove(); });

  it('json_schema: every answer is valid under the schema, whatever the seed', async () => {
    for (let seed = 0; seed < 4; seed++) {
      const r = await s.client.chat.completions.create({
        model: 'tiny', messages: HI, max_tokens: 120, temperature: 1, seed,
        response_format: { type: 'json_schema', json_schema: { name: 'pet', strict: true, schema: SCHEMA } },
      });
      const text = r.choices[0]!.message.content ?? '';
      expect(r.choices[0]!.finish_reason, text).to.equal('stop');
      expect(problem(SCHEMA, text), text).to.equal(undefined);
    }
  });

  it('negative control: without response_format the same requests are not valid', async () => {
    for (let seed = 0; seed < 2; seed++) {
      const r = await s.client.chat.completions.create({ model: 'tiny', messages: HI, max_tokens: 40, temperature: 1, seed });
      expect(problem(SCHEMA, r.choices[0]!.message.content ?? '')).to.not.equal(undefined);
    }
  });

  it('json_object: every answer parses as an object (logit_bias favours `"` and `}` so the random model ends its strings)', async () => {
    for (let seed = 0; seed < 4; seed++) {
      const r = await s.client.chat.completions.create({
        model: 'tiny', messages: HI, max_tokens: 200, temperature: 1, seed, response_format: { type: 'json_object' },
        logit_bias: { [0x22]: 4, [0x7d]: 4 },
      });
      const text = r.choices[0]!.message.content ?? '';
      if (r.choices[0]!.finish_reason !== 'stop') expect(acceptsPrefix(jsonObjectGrammar(), text), text).to.equal(true);
      expect(r.choices[0]!.finish_reason, text).to.equal('stop');
      const v: unknown = JSON.parse(text);
      expect(v, text).to.be.an('object').and.not.be.an('array');
    }
  });
});
