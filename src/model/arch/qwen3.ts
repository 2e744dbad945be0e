/** Qwen3 (dense): neox rope, per-head q/k RMS norms, no biases, SwiGLU; llama.cpp's `qwen3`. */
import type { ArchDescriptor } from './types.js';

export const QWEN3: ArchDescriptor = {
  name: 'qwen3', hfModelType: 'qwen3', rope: 'neox', qkNorm: true, qkvBias: false, fusedQkv: false, fusedGateUp: false,
  activation: 'silu', postNorms: false, slidingWindow: false, ropeFreqs: false, partialRotary: false, scales: [],
  defaults: { ropeTheta: 1_000_000, rmsEps: 1e-6, contextLength: 40960 },
  layer: ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'attn_q_norm', 'attn_k_norm', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'],
};
