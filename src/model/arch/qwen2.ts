/** Qwen2 and Qwen2.5: neox rope, biases on q, k and v, SwiGLU; llama.cpp's `qwen2`. */
import type { ArchDescriptor } from './types.js';

export const QWEN2: ArchDescriptor = {
  name: 'qwen2', hfModelType: 'qwen2', rope: 'neox', qkNorm: false, qkvBias: true, fusedQkv: false, fusedGateUp: false,
  activation: 'silu', postNorms: false, slidingWindow: false, ropeFreqs: false, partialRotary: false, scales: [],
  defaults: { ropeTheta: 1_000_000, rmsEps: 1e-6, contextLength: 32768 },
  layer: [
    'attn_norm', 'attn_q', 'attn_q.bias', 'attn_k', 'attn_k.bias', 'attn_v', 'attn_v.bias', 'attn_output',
    'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down',
  ],
};
