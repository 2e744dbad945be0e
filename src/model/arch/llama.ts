/**
 * Llama (2, 3, 3.1, 3.2): normal rope (adjacent pairs: llama.cpp's converter permutes q and k so),
 * llama3 frequency factors from `rope_freqs.weight` when the file has one, linear rope scaling from
 * `llama.rope.scaling.*`, separate or tied output, SwiGLU; llama.cpp's `llama`.
 */
import type { ArchDescriptor } from './types.js';

export const LLAMA: ArchDescriptor = {
  name: 'llama', hfModelType: 'llama', rope: 'normal', qkNorm: false, qkvBias: false, fusedQkv: false, fusedGateUp: false,
  activation: 'silu', postNorms: false, slidingWindow: false, ropeFreqs: true, partialRotary: false, scales: [],
  defaults: { ropeTheta: 10_000, rmsEps: 1e-5, contextLength: 4096 },
  layer: ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'],
};
