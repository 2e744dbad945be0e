/**
 * Qwen3-MoE (Qwen3-30B-A3B, 235B-A22B): Qwen3's attention (neox rope, per-head q/k RMS norms) and a
 * mixture of experts for every layer's FFN: softmax gating over `qwen3moe.expert_count` experts, the
 * `expert_used_count` most probable, their weights normalised to sum 1, SwiGLU experts of
 * `expert_feed_forward_length`; llama.cpp's `qwen3moe` (src/models/qwen3moe.cpp).
 */
import type { ArchDescriptor } from './types.js';

export const QWEN3MOE: ArchDescriptor = {
  name: 'qwen3moe', hfModelType: 'qwen3_moe', rope: 'neox', qkNorm: true, qkvBias: false, fusedQkv: false, fusedGateUp: false,
  activation: 'silu', postNorms: false, slidingWindow: false, ropeFreqs: false, partialRotary: false, scales: [],
  defaults: { ropeTheta: 1_000_000, rmsEps: 1e-6, contextLength: 40960 },
  layer: ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'attn_q_norm', 'attn_k_norm', 'ffn_norm', 'ffn_gate_inp', 'ffn_gate_exps', 'ffn_up_exps', 'ffn_down_exps'],
  moe: { normalize: true },
};
