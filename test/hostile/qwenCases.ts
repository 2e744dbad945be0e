/**
 * Hostile cases of `generate` and `gate` (issue 12): models that are not models (a directory without
 * model.q4nx, a file without the GGUF magic, a FIFO, another architecture, an unbindable weight type),
 * prompts outside the vocabulary or past the context, bad chat files and flags. Each is a typed
 * refusal (exit 1) or a usage error (exit 2), and none hangs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gv } from '../../src/model/gguf/types.js';
import { writeGguf } from '../../src/model/gguf/writer.js';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import type { HostileCase } from './case.js';
import { fifo, put } from './fixtures.js';

const model = (d: string) => { writeFileSync(join(d, 'm.gguf'), tinyQwen3Gguf({ layers: 1 })); };
const gen = (...args: string[]) => ['generate', '{dir}/m.gguf', '--json', ...args];

export const cases: readonly HostileCase[] = [
  { name: 'generate: a directory without model.q4nx', setup: (d) => put(d, 'm/config.json', {}), cli: ['generate', '{dir}/m', '--prompt', 'x', '--json'], exit: 1, code: 'InvalidInput' },
  { name: 'generate: a file that is not a GGUF', setup: (d) => put(d, 'm.gguf', 'not a model'), cli: gen('--prompt', 'x'), exit: 1, code: 'InvalidInput' },
  { name: 'generate: a FIFO as the model is refused unread', setup: (d) => { fifo(d, 'm.gguf'); }, ownProcess: 'hang', cli: gen('--prompt', 'x'), exit: 1, code: 'InvalidInput' },
  { name: 'generate: a GGUF of another architecture', setup: (d) => put(d, 'm.gguf', writeGguf({ metadata: new Map([['general.architecture', gv.str('llama')]]) })), cli: gen('--prompt', 'x'), exit: 1, code: 'InvalidInput' },
  { name: 'generate: a Q5_K model (no weight dtype binds it)', setup: (d) => put(d, 'm.gguf', tinyQwen3Gguf({ layers: 1, type: 'Q5_K' })), cli: gen('--prompt', 'x'), exit: 1, code: 'InvalidInput' },
  { name: 'generate: a prompt id outside the vocabulary', setup: model, cli: gen('--prompt-ids', '1,999999'), exit: 1, code: 'InvalidOptions' },
  { name: 'generate: a prompt longer than --ctx', setup: model, cli: gen('--prompt-ids', '1,2,3,4,5', '--ctx', '4'), exit: 1, code: 'ResourceLimit' },
  { name: 'generate: --ctx past the model\'s context length', setup: model, cli: gen('--prompt', 'x', '--ctx', '1000000'), exit: 1, code: 'InvalidOptions' },
  { name: 'generate: no prompt at all', setup: model, cli: gen(), exit: 1, code: 'InvalidOptions' },
  { name: 'generate: --target xdna2, whose planner does not admit the whole model', setup: model, cli: gen('--prompt', 'x', '--target', 'xdna2'), exit: 1, code: 'CapabilityMissing' },
  { name: 'generate: a chat file that is not JSON', setup: (d) => { model(d); put(d, 'c.json', '[{'); }, cli: gen('--chat', '{dir}/c.json'), exit: 1, code: 'InvalidInput' },
  { name: 'generate: a chat message without content', setup: (d) => { model(d); put(d, 'c.json', [{ role: 'user' }]); }, cli: gen('--chat', '{dir}/c.json'), exit: 1, code: 'InvalidInput' },
  { name: 'generate: --temperature that is not a number', setup: model, cli: gen('--prompt', 'x', '--temperature', 'hot'), exit: 2, code: 'UsageError' },
  { name: 'gate: a build phase longer than the context', setup: model, cli: ['gate', '{dir}/m.gguf', '--ctx', '16', '--json'], exit: 1, code: 'InvalidOptions' },
];
