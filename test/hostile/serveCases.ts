/**
 * Hostile cases of `serve` (issue 13): bad flags are usage errors (exit 2); a missing model, a file
 * that is not a model, a model_type nothing serves, a missing add-on and a context past the model's
 * are typed refusals (exit 1) before or right after the port opens, and none leaves a server running.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tinyQwen3Gguf } from '../../src/model/qwen3/tiny.js';
import type { HostileCase } from './case.js';
import { put } from './fixtures.js';

const model = (d: string) => { writeFileSync(join(d, 'm.gguf'), tinyQwen3Gguf({ layers: 1 })); };
const serve = (...args: string[]) => ['serve', '--port', '0', ...args];

export const cases: readonly HostileCase[] = [
  { name: 'serve: no model and no --demo', cli: serve(), exit: 2, code: 'UsageError' },
  // The one-layer model, not --demo: the demo writes and reads a GGUF of Qwen3's 151 936-token vocabulary
  // first (35 s on a loaded machine), work that has nothing to do with the address.
  { name: 'serve: an address this machine cannot listen on', setup: model, cli: serve('{dir}/m.gguf', '--host', '256.1.1.1'), exit: 2, code: 'UsageError' },
  { name: 'serve: a model path that does not exist', cli: serve('{dir}/none.gguf'), exit: 2, code: 'UsageError' },
  { name: 'serve: a file that is not a GGUF', setup: (d) => { put(d, 'm.gguf', 'not a model'); }, cli: serve('{dir}/m.gguf'), exit: 1, code: 'InvalidInput' },
  { name: 'serve: a directory whose model_type nothing serves', setup: (d) => { put(d, 'm/config.json', { model_type: 'mamba' }); }, cli: serve('{dir}/m'), exit: 1, code: 'InvalidInput', check: (r) => { if (!r.stderr.includes('its route is not part of this build')) throw new Error(r.stderr); } },
  { name: 'serve: a config.json that is not JSON', setup: (d) => { put(d, 'm/config.json', '{'); }, cli: serve('{dir}/m'), exit: 1, code: 'InvalidInput' },
  { name: 'serve: --ctx past the model\'s context length', setup: model, cli: serve('{dir}/m.gguf', '--ctx', '1000000'), exit: 1, code: 'InvalidOptions' },
  { name: 'serve: an --addon file that does not exist', setup: model, cli: serve('{dir}/m.gguf', '--addon', '{dir}/none.js'), exit: 1, code: 'InvalidOptions' },
  { name: 'serve: an --addon without register()', setup: (d) => { model(d); put(d, 'a.mjs', 'export const x = 1;'); }, cli: serve('{dir}/m.gguf', '--addon', '{dir}/a.mjs'), exit: 1, code: 'InvalidOptions' },
  { name: 'serve: --port past 65535', setup: model, cli: ['serve', '{dir}/m.gguf', '--port', '70000'], exit: 2 },
  { name: 'serve: --max-queue that is not a count', setup: model, cli: serve('{dir}/m.gguf', '--max-queue', '-1'), exit: 2 },
  { name: 'serve: --npu-opt without KEY=VALUE', setup: model, cli: serve('{dir}/m.gguf', '--npu-opt', 'tiles'), exit: 2 },
  { name: 'serve: an unknown --target', setup: model, cli: serve('{dir}/m.gguf', '--target', 'gpu'), exit: 2 },
];
