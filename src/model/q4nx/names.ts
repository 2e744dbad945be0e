/**
 * Q4NX tensor names (Hugging Face names, as FLM's converter configs write them) mapped back to the
 * GGUF names they come from, so a Q4NX tensor can be compared with the GGUF of the same model. The
 * table follows FLM_Q4NX_Converter configs/qwen3.json and configs/qwen3.5_4b.json (`name_map`).
 */

/** GGUF name templates by Q4NX name template; `{i}` is the layer index. */
const NAME_MAP: readonly (readonly [string, string])[] = [
  ['model.embed_tokens.weight', 'token_embd.weight'],
  ['lm_head.weight', 'output.weight'],
  ['model.norm.weight', 'output_norm.weight'],
  ['model.layers.{i}.self_attn.q_proj.weight', 'blk.{i}.attn_q.weight'],
  ['model.layers.{i}.self_attn.k_proj.weight', 'blk.{i}.attn_k.weight'],
  ['model.layers.{i}.self_attn.v_proj.weight', 'blk.{i}.attn_v.weight'],
  ['model.layers.{i}.self_attn.o_proj.weight', 'blk.{i}.attn_output.weight'],
  ['model.layers.{i}.self_attn.q_norm.weight', 'blk.{i}.attn_q_norm.weight'],
  ['model.layers.{i}.self_attn.k_norm.weight', 'blk.{i}.attn_k_norm.weight'],
  ['model.layers.{i}.self_attn.gate_proj.weight', 'blk.{i}.attn_gate.weight'],
  ['model.layers.{i}.mlp.gate_proj.weight', 'blk.{i}.ffn_gate.weight'],
  ['model.layers.{i}.mlp.up_proj.weight', 'blk.{i}.ffn_up.weight'],
  ['model.layers.{i}.mlp.down_proj.weight', 'blk.{i}.ffn_down.weight'],
  ['model.layers.{i}.input_layernorm.weight', 'blk.{i}.attn_norm.weight'],
  ['model.layers.{i}.post_attention_layernorm.weight', 'blk.{i}.post_attention_norm.weight'],
  ['model.layers.{i}.linear_attn.qkv_proj.weight', 'blk.{i}.attn_qkv.weight'],
  ['model.layers.{i}.linear_attn.ssm_alpha_proj.weight', 'blk.{i}.ssm_alpha.weight'],
  ['model.layers.{i}.linear_attn.ssm_beta_proj.weight', 'blk.{i}.ssm_beta.weight'],
  ['model.layers.{i}.linear_attn.ssm_out_proj.weight', 'blk.{i}.ssm_out.weight'],
];

/** The GGUF names a Q4NX tensor may come from, most likely first ([] when the table has no row). */
export function ggufNamesOf(q4nxName: string): string[] {
  const m = /^model\.layers\.(\d+)\.(.*)$/.exec(q4nxName);
  const key = m === null ? q4nxName : `model.layers.{i}.${m[2]!}`;
  const row = NAME_MAP.find(([q]) => q === key);
  if (row === undefined) return [];
  const name = m === null ? row[1] : row[1].replace('{i}', m[1]!);
  // A tied lm_head has no output.weight in the GGUF: the converter built it from token_embd.
  return name === 'output.weight' ? [name, 'token_embd.weight'] : [name];
}
