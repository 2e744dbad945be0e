/**
 * What `gguf pack` writes for each architecture it converts: qwen3 as it always has (config.ts,
 * plan.ts's planQwen3), the other families through their HF names and config.json (src/model/arch/hf.ts)
 * from the same ModelConfig the GGUF runs with. A GGUF of another architecture, or one with a piece
 * the packer does not carry yet (llama3 rope_freqs, LongRoPE factors), is InvalidInput naming it.
 */
import { InvalidInput } from '../../errors/index.js';
import { modelConfigFromGguf, type ModelConfig } from '../arch/config.js';
import { hfConfig, unpackable } from '../arch/hf.js';
import { numericValue, type GgufFile } from '../gguf/types.js';
import { qwen3Config, qwen3Dims, requirePackable } from './config.js';
import { planArch, planQwen3, type PlannedTensor } from './plan.js';

/** The config a GGUF of a packable architecture other than qwen3 runs with; InvalidInput for what pack does not carry. */
function packableConfig(f: GgufFile): ModelConfig {
  const c = modelConfigFromGguf(f);
  const why = unpackable(c);
  if (why !== null) throw new InvalidInput('/metadata/general.architecture', why);
  return c;
}

/** The tensors a pack of this GGUF writes, in HF order; refuses an architecture the packer does not convert. */
export function packTensors(f: GgufFile): PlannedTensor[] {
  const arch = requirePackable(f.metadata);
  return arch === 'qwen3' ? planQwen3(f, qwen3Dims(f.metadata)) : planArch(f, packableConfig(f));
}

/** The config.json a pack of this GGUF writes (`source`: the GGUF's file name, recorded in q4nx_source). */
export function packConfig(f: GgufFile, source: string, converter: string): Record<string, unknown> {
  const arch = requirePackable(f.metadata);
  if (arch === 'qwen3') return qwen3Config(f, source, converter);
  const config = hfConfig(packableConfig(f), numericValue(f.metadata.get('tokenizer.ggml.bos_token_id')));
  config['q4nx_source'] = { converter, gguf: source };
  return config;
}
