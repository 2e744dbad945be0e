/** The architectures that run, as descriptors (types.ts); the one list the loader consults. */
import { InvalidInput } from '../../errors/index.js';
import { quote } from '../../io/escape.js';
import { GEMMA3 } from './gemma3.js';
import { LLAMA } from './llama.js';
import { MINICPM } from './minicpm.js';
import { PHI3 } from './phi3.js';
import { QWEN2 } from './qwen2.js';
import { QWEN3 } from './qwen3.js';
import { QWEN3MOE } from './qwen3moe.js';
import type { ArchDescriptor } from './types.js';

export type { ArchDescriptor, LayerTensor } from './types.js';

/** Every architecture that runs, by `general.architecture`. */
export const ARCHITECTURES: readonly ArchDescriptor[] = [QWEN3, QWEN3MOE, LLAMA, QWEN2, PHI3, MINICPM, GEMMA3];

/** The names of the architectures that run. */
export const ARCHITECTURE_NAMES: readonly string[] = ARCHITECTURES.map((a) => a.name);

/** The descriptor of `name`; InvalidInput at `at` listing the architectures that run when there is none. */
export function architecture(name: string, at = '/metadata/general.architecture'): ArchDescriptor {
  const a = ARCHITECTURES.find((x) => x.name === name);
  if (a === undefined) {
    throw new InvalidInput(at, `architecture ${name === '' ? '(none)' : quote(name)} does not run: the architectures that do are ${ARCHITECTURE_NAMES.join(', ')}`);
  }
  return a;
}
