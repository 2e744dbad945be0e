import { expect } from 'chai';
import { InvalidInput, TokenizerError } from '../../../src/errors/index.js';
import { tokenizerFromHf, type Tokenizer } from '../../../src/model/tokenizer/index.js';
import { QWEN3_TOKENIZER, qwen3Files } from './helpers.js';

// The expected prompts are written out by hand from reading Qwen3's template, not rendered.
describe('chat templates: Qwen3\'s own template, and ChatML for a model without one', function () {
  this.timeout(60_000);
  let qwen: Tokenizer;
  let bare: Tokenizer;
  const withTemplate = (chat_template: unknown): Tokenizer =>
    tokenizerFromHf({ tokenizer: qwen3Files().tokenizer, tokenizerConfig: { ...qwen3Files().tokenizerConfig, chat_template } }, 'custom');
  before(() => {
    qwen = tokenizerFromHf(qwen3Files(), QWEN3_TOKENIZER);
    bare = tokenizerFromHf({ tokenizer: qwen3Files().tokenizer }, 'bare');
  });

  const hello = [{ role: 'user', content: 'Hello' }];

  it('one user turn with the generation prompt (the default)', () => {
    expect(qwen.applyChatTemplate(hello)).to.equal('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n');
  });

  it('enable_thinking = false adds an empty think block after the generation prompt', () => {
    expect(qwen.applyChatTemplate(hello, { enableThinking: false }))
      .to.equal('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  });

  it('without add_generation_prompt the prompt ends after the last turn', () => {
    expect(qwen.applyChatTemplate(hello, { addGenerationPrompt: false })).to.equal('<|im_start|>user\nHello<|im_end|>\n');
    expect(qwen.applyChatTemplate(hello, { addGenerationPrompt: false, enableThinking: false })).to.equal('<|im_start|>user\nHello<|im_end|>\n');
  });

  it('a system prompt, and an earlier answer\'s reasoning dropped from the history', () => {
    const chat = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>\nreasoning\n</think>\n\nAnswer' },
      { role: 'user', content: 'Again' },
    ];
    expect(qwen.applyChatTemplate(chat)).to.equal(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nAnswer<|im_end|>\n'
      + '<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n');
  });

  it('the answer after the last user turn keeps its reasoning', () => {
    const chat = [{ role: 'user', content: 'Q' }, { role: 'assistant', content: '<think>\nR\n</think>\n\nA' }];
    expect(qwen.applyChatTemplate(chat, { addGenerationPrompt: false }))
      .to.equal('<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\n\nA<|im_end|>\n');
  });

  it('encodeChat encodes the prompt with its special tokens whole and nothing added', () => {
    const { prompt, ids } = qwen.encodeChat(hello, { enableThinking: false });
    expect(ids).to.deep.equal(qwen.encode(prompt, { addSpecial: false }));
    expect(ids.slice(0, 3)).to.deep.equal([151644, 872, 198]);
    expect(ids).to.include.members([151645, 151667, 151668]);
    expect(qwen.decode(ids)).to.equal(prompt);
  });

  it('ChatML when the model has no template', () => {
    expect(bare.chatTemplate).to.equal(null);
    const chat = [{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }];
    expect(bare.applyChatTemplate(chat)).to.equal('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n');
    expect(bare.applyChatTemplate(chat, { addGenerationPrompt: false })).to.equal('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n');
  });

  it('templates see the special tokens, the named default template and extra variables', () => {
    expect(withTemplate('{{ eos_token }}|{{ bos_token is defined }}|{{ add_generation_prompt }}').applyChatTemplate(hello)).to.equal('<|im_end|>|false|true');
    const named = withTemplate([{ name: 'tool_use', template: 'tools' }, { name: 'default', template: 'plain {{ who }}' }]);
    expect(named.applyChatTemplate(hello, { variables: { who: 'me' } })).to.equal('plain me');
  });

  it('a template that raises, or does not parse, is a TokenizerError naming the source', () => {
    expect(() => withTemplate("{{ raise_exception('no system prompt') }}").applyChatTemplate(hello))
      .to.throw(TokenizerError, /^tokenizer custom: the chat template failed: .*no system prompt/);
    expect(() => withTemplate('{% if %}').applyChatTemplate(hello)).to.throw(TokenizerError, /the chat template does not parse/);
  });

  it('messages that are not { role, content } strings are InvalidInput naming the field', () => {
    const bad = (m: unknown) => () => qwen.applyChatTemplate(m as never);
    expect(bad('hi')).to.throw(InvalidInput, /messages must be an array/);
    expect(bad([{ role: 'user' }])).to.throw(InvalidInput, /at \/0\/content: must be a string/);
    expect(bad([{ role: 'user', content: 'ok' }, { role: '', content: 'x' }])).to.throw(InvalidInput, /at \/1\/role/);
    expect(bad([{ role: 'user', content: 'bad \ud83d' }])).to.throw(InvalidInput, /\/0\/content: a lone surrogate U\+D83D/);
  });
});
