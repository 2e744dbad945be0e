/**
 * Gemma 3 (text): neox rope, per-head q/k RMS norms, RMS norms after attention and after the FFN
 * (`post_attention_norm`, `post_ffw_norm`) before each residual add, GeGLU (tanh GELU), the embedding
 * times sqrt(hidden), tied output, and sliding-window layers: with `gemma3.attention.sliding_window`
 * declared, layer l is local where l % period < period - 1 (period `gemma3.attention.sliding_window_pattern`,
 * default 6), attends to the last `window` positions and turns rope with `gemma3.rope.freq_base_swa`
 * (default 10000) unscaled; llama.cpp's `gemma3`. The norms' weights are stored as `1 + w` by the
 * converter, so the graph's RMSNorm takes them as they are. The 27B's attention scale (by hidden /
 * heads) is not done: its head dim differs, so such a file's scores would be scaled wrong.
 */
import type { ArchDescriptor } from './types.js';

export const GEMMA3: ArchDescriptor = {
  name: 'gemma3', hfModelType: 'gemma3_text', rope: 'neox', qkNorm: true, qkvBias: false, fusedQkv: false, fusedGateUp: false,
  activation: 'gelu_tanh', postNorms: true, slidingWindow: true, swaPeriod: 6, ropeFreqs: false, partialRotary: false, scales: [],
  scaleDefaults: ({ hidden }) => ({ embedding_scale: Math.sqrt(hidden) }),
  defaults: { ropeTheta: 1_000_000, rmsEps: 1e-6, contextLength: 131072 },
  layer: [
    'attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'attn_q_norm', 'attn_k_norm', 'post_attention_norm',
    'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down', 'post_ffw_norm',
  ],
};
