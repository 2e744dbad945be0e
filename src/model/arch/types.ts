/**
 * An architecture as data, as llama.cpp keeps one apart from its shared graph: the GGUF key prefix,
 * the tensors a layer holds (which of them a file may leave out), and the graph options the program
 * builder reads (src/model/qwen3/program.ts). Adding an architecture is one descriptor file beside
 * these and its line in index.ts (docs/MODELS.md, "Adding an architecture").
 */

/** How rope pairs a head's elements: `neox` rotates (i, i + D/2), `normal` rotates (2i, 2i + 1). */
export type RopeType = 'neox' | 'normal';

/** The per-layer tensors the shared graph knows, in llama.cpp's names (`blk.<l>.<name>`). */
export type LayerTensor =
  | 'attn_norm' | 'attn_q' | 'attn_k' | 'attn_v' | 'attn_qkv' | 'attn_output' | 'attn_q_norm' | 'attn_k_norm'
  | 'attn_q.bias' | 'attn_k.bias' | 'attn_v.bias'
  | 'ffn_norm' | 'ffn_gate' | 'ffn_up' | 'ffn_down' | 'post_attention_norm' | 'post_ffw_norm'
  /** A mixture of experts' FFN: the router `[E, hidden]` and the experts `[E, ff, hidden]`, `[E, hidden, ff]`. */
  | 'ffn_gate_inp' | 'ffn_gate_exps' | 'ffn_up_exps' | 'ffn_down_exps';

/** The GLU's activation: SwiGLU's silu, or GeGLU's tanh-approximated GELU (llama.cpp's ggml_gelu). */
export type Activation = 'silu' | 'gelu_tanh';

/**
 * The scales a graph may honour, by their GGUF key names (`<arch>.embedding_scale`, ...): the embedding
 * times `embedding_scale`, each residual branch (attention's and the FFN's output) times
 * `residual_scale`, the logits divided by `logit_scale` (MiniCPM's and Granite's, as llama.cpp applies them).
 */
export type ScaleKey = 'embedding_scale' | 'residual_scale' | 'logit_scale';

/** What one architecture is. */
export interface ArchDescriptor {
  /** `general.architecture`, which is also the prefix of its keys (`<name>.block_count`). */
  readonly name: string;
  /** The Hugging Face `model_type` of the same models. */
  readonly hfModelType: string;
  readonly rope: RopeType;
  /** Per-head RMS norms of q and k before rope (`attn_q_norm`, `attn_k_norm`). */
  readonly qkNorm: boolean;
  /** Biases on the q, k and v projections (`attn_q.bias`, ...). */
  readonly qkvBias: boolean;
  /** One `attn_qkv` projection giving q, k and v (in that order) rather than three. */
  readonly fusedQkv: boolean;
  /** One `ffn_up` projection of 2 x ffn width giving gate then up, rather than `ffn_gate` and `ffn_up`. */
  readonly fusedGateUp: boolean;
  readonly activation: Activation;
  /** RMS norms of the attention and FFN outputs before each residual add (`post_attention_norm`, `post_ffw_norm`: Gemma's). */
  readonly postNorms: boolean;
  /**
   * Reads `<arch>.attention.sliding_window` (and `sliding_window_pattern`, default `swaPeriod`;
   * `rope.freq_base_swa`, default 10000): layer l attends to the last `window` positions only where
   * l % period < period - 1, with its own rope base and no rope scaling (llama.cpp's standard SWA).
   */
  readonly slidingWindow: boolean;
  readonly swaPeriod?: number;
  /** Reads llama3-style rope frequency factors from a `rope_freqs.weight` tensor when the file has one. */
  readonly ropeFreqs: boolean;
  /**
   * Reads LongRoPE's `rope_factors_long.weight` and `rope_factors_short.weight` when the file has them
   * (Phi-3.5 and Phi-4-mini): the frequencies divided by the long ones when the context is past
   * `<arch>.rope.scaling.original_context_length`, else by the short ones, as llama.cpp chooses.
   */
  readonly longRope?: boolean;
  /** Reads `<arch>.rope.dimension_count` (rope on the first n of a head's elements). */
  readonly partialRotary: boolean;
  /** The declared scale keys (after the prefix) this architecture's graph honours; the scale guard refuses the others. */
  readonly scales: readonly ScaleKey[];
  /** The value of each honoured scale a file leaves out, as llama.cpp defaults it (default: 1, neutral). */
  readonly scaleDefaults?: (dims: { readonly layers: number; readonly hidden: number }) => Partial<Record<ScaleKey, number>>;
  /** Defaults of keys a file may leave out. */
  readonly defaults: { readonly ropeTheta: number; readonly rmsEps: number; readonly contextLength: number };
  /** The per-layer tensors, in the order the programs take them; every one is required. */
  readonly layer: readonly LayerTensor[];
  /**
   * A mixture of experts in place of the dense FFN (llama.cpp's build_moe_ffn with softmax gating):
   * reads `<arch>.expert_count`, `expert_used_count` and `expert_feed_forward_length`; `normalize`:
   * the chosen experts' weights divided by their sum (llama.cpp's norm_w).
   */
  readonly moe?: { readonly normalize: boolean };
}

/**
 * A mixture of experts' FFN (GraphOptions.moe): the router's softmax over `experts`, the `used` most
 * probable experts (lowest index first among equals), their probabilities as weights (divided by their
 * sum when `normalize`), each chosen expert's SwiGLU of width `ff` read by matmul_id, the weighted sum.
 */
export interface MoeOptions {
  readonly experts: number;
  readonly used: number;
  readonly ff: number;
  readonly normalize: boolean;
}

/** YaRN's parameters beside its factor (llama.cpp's defaults: beta_fast 32, beta_slow 1, ext factor 1). */
export interface YarnParams {
  /** The context the model was trained at before the scaling (`<arch>.rope.scaling.original_context_length`, default the context length). */
  readonly origContext: number;
  /** The rotation counts over the original context that bound the ramp: faster frequencies extrapolate, slower ones interpolate. */
  readonly betaFast: number;
  readonly betaSlow: number;
  /** How much of the extrapolated frequency the ramp mixes in (1 for YaRN). */
  readonly extFactor: number;
}

/** A model's graph options, resolved from its descriptor and its file (the descriptor's flags as they are). */
export interface GraphOptions extends Pick<ArchDescriptor, 'qkNorm' | 'qkvBias' | 'fusedQkv' | 'fusedGateUp' | 'activation' | 'postNorms'> {
  readonly rope: RopeType;
  /** Elements of a head that rope turns (the head dim, or fewer: partial rotary). */
  readonly ropeDims: number;
  /** Positions are multiplied by this before rope (1, or 1 / the factor of linear rope scaling). */
  readonly ropeFreqScale: number;
  /** The weights include `rope_freqs` `[ropeDims / 2]`: each frequency divided by its factor (llama3). */
  readonly ropeFreqs: boolean;
  /** The weights include `rope_factors_long` and `rope_factors_short`: the long ones divide the frequencies at a context past this, else the short ones. */
  readonly longRopeContext?: number;
  /**
   * YaRN (`<arch>.rope.scaling.type = yarn`): the frequency scale (`ropeFreqScale`, 1 / the factor)
   * applies to each frequency through YaRN's ramp between the correction dims of the original context,
   * and cos and sin are times 1 + 0.1 ln(factor) besides `ropeAttnFactor` (ggml's rope_yarn;
   * src/model/qwen3/layers.ts, ropeTables). Fused form only.
   */
  readonly ropeYarn?: YarnParams;
  /** Rope's cos and sin are multiplied by this (`<arch>.rope.scaling.attn_factor`; 1: neutral). */
  readonly ropeAttnFactor: number;
  /**
   * The rope frequency factors as numbers, in place of the `rope_freqs` / `rope_factors_*` weight args:
   * a model directory's, from its config.json's rope_scaling (llama3's parameters, LongRoPE's
   * long_factor and short_factor). Each frequency is divided by its factor; `long` when the context is
   * past `longRopeContext`, else `short`. Fused form only.
   */
  readonly ropeFactorValues?: { readonly short: readonly number[]; readonly long?: readonly number[] };
  /** Sliding-window layers, when the file declares a window: see ArchDescriptor.slidingWindow. */
  readonly slidingWindow?: { readonly window: number; readonly period: number; readonly ropeBase: number };
  /** The embedding is multiplied by this (1: neutral). */
  readonly embeddingScale: number;
  /** Each residual branch is multiplied by this before it is added (1: neutral). */
  readonly residualScale: number;
  /** The logits are divided by this (1: neutral). */
  readonly logitScale: number;
  /** A mixture of experts in place of the dense FFN (ArchDescriptor.moe), when the architecture has one. */
  readonly moe?: MoeOptions;
}
