/**
 * MiniCPM (1 and 2): Llama's graph (normal rope, separate q, k, v, SwiGLU) with the three scales its
 * files declare, honoured as llama.cpp applies them: the embedding times `minicpm.embedding_scale`,
 * each residual branch times `minicpm.residual_scale`, the logits divided by `minicpm.logit_scale`.
 * A file that leaves one out gets llama.cpp's default for it (12, 1.4 / sqrt(layers), 256 / hidden).
 */
import type { ArchDescriptor } from './types.js';

export const MINICPM: ArchDescriptor = {
  name: 'minicpm', hfModelType: 'minicpm', rope: 'normal', qkNorm: false, qkvBias: false, fusedQkv: false, fusedGateUp: false,
  activation: 'silu', postNorms: false, slidingWindow: false, ropeFreqs: true, partialRotary: false, scales: ['embedding_scale', 'residual_scale', 'logit_scale'],
  scaleDefaults: ({ layers, hidden }) => ({ embedding_scale: 12, residual_scale: 1.4 / Math.sqrt(layers), logit_scale: 256 / hidden }),
  defaults: { ropeTheta: 10_000, rmsEps: 1e-5, contextLength: 4096 },
  layer: ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'],
};
