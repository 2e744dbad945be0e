/**
 * Phi-3 and Phi-4-mini: one fused `attn_qkv` projection, one `ffn_up` holding gate then up (SwiGLU of
 * its halves), neox rope on `phi3.rope.dimension_count` elements of a head (partial rotary on
 * Phi-4-mini), LongRoPE's `rope_factors_long/short` (the 128k models: the long ones past
 * `phi3.rope.scaling.original_context_length`) and `phi3.rope.scaling.attn_factor`; llama.cpp's `phi3`.
 */
import type { ArchDescriptor } from './types.js';

export const PHI3: ArchDescriptor = {
  name: 'phi3', hfModelType: 'phi3', rope: 'neox', qkNorm: false, qkvBias: false, fusedQkv: true, fusedGateUp: true,
  activation: 'silu', postNorms: false, slidingWindow: false, ropeFreqs: false, partialRotary: true, longRope: true, scales: [],
  defaults: { ropeTheta: 10_000, rmsEps: 1e-5, contextLength: 4096 },
  layer: ['attn_norm', 'attn_qkv', 'attn_output', 'ffn_norm', 'ffn_up', 'ffn_down'],
};
