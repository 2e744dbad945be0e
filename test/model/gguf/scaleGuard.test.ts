import { expect } from 'chai';
import { scanDeclaredScales } from '../../../src/model/gguf/scaleGuard.js';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';
import { GEMMA2, MINICPM, MINICPM_CONFIG } from './helpers.js';

describe('gguf declared-scale guard', () => {
  it('negative control: a config that keeps every critical scale passes', () => {
    expect(scanDeclaredScales(MINICPM, MINICPM_CONFIG)).to.deep.equal({ fatal: [], warnings: [] });
  });

  it('a config that drops dim_model_base fails on logit_scale, the one no argmax check sees', () => {
    const { dim_model_base: _d, ...dropped } = MINICPM_CONFIG;
    const r = scanDeclaredScales(MINICPM, dropped);
    expect(r.fatal).to.have.length(1);
    expect(r.fatal[0]).to.match(/^minicpm\.logit_scale = 0\.25 .* drops it/);
  });

  it('a config that drops all three fails three times', () => {
    expect(scanDeclaredScales(MINICPM, { hidden_size: 1024 }).fatal).to.have.length(3);
  });

  it('softcaps: kept under text_config passes, dropped fails, a different value fails', () => {
    expect(scanDeclaredScales(GEMMA2, { text_config: { attn_logit_softcapping: 50, final_logit_softcapping: 30 } }).fatal).to.deep.equal([]);
    expect(scanDeclaredScales(GEMMA2, { attn_logit_softcapping: 50 }).fatal).to.deep.equal([
      'gemma2.final_logit_softcapping = 30 is declared by the GGUF but config.json drops it (none of final_logit_softcapping)',
    ]);
    expect(scanDeclaredScales(GEMMA2, { attn_logit_softcapping: 50, final_logit_softcapping: 50 }).fatal[0]).to.match(/= 30 but config\.json has final_logit_softcapping = 50/);
    expect(scanDeclaredScales(GEMMA2, { attn_logit_softcapping: 50, final_logit_softcapping: null }).fatal).to.have.length(1);
  });

  it('a neutral value dropped is a warning, not fatal', () => {
    const m = new Map<string, GgufValue>([['general.architecture', gv.str('granite')], ['granite.embedding_scale', gv.f32(1)], ['granite.attn_logit_softcapping', gv.f32(0)]]);
    const r = scanDeclaredScales(m, {});
    expect(r.fatal).to.deep.equal([]);
    expect(r.warnings).to.have.length(2);
  });

  it('other scale-like keys are warnings unless the config carries them', () => {
    const m = new Map<string, GgufValue>([
      ['general.architecture', gv.str('granite')], ['granite.attention.scale', gv.f32(0.0078125)], ['granite.mup_width', gv.u32(4)],
      ['granite.expert_weights_scale', gv.f32(2.5)], ['general.scale_note', gv.str('ignored')], ['granite.block_count', gv.u32(4)],
    ]);
    const r = scanDeclaredScales(m, { expert_weights_scale: 2.5 });
    expect(r.fatal).to.deep.equal([]);
    expect(r.warnings.map((w) => w.split(' ')[0])).to.deep.equal(['granite.attention.scale', 'granite.mup_width']);
  });

  it('rope scaling keys: ignored when the config carries rope_scaling or the type is none, warned otherwise', () => {
    const yarn = new Map<string, GgufValue>([['general.architecture', gv.str('qwen3')], ['qwen3.rope.scaling.type', gv.str('yarn')], ['qwen3.rope.scaling.factor', gv.f32(4)]]);
    expect(scanDeclaredScales(yarn, { rope_scaling: { type: 'yarn', factor: 4 } }).warnings).to.deep.equal([]);
    expect(scanDeclaredScales(yarn, { rope_scaling: null }).warnings).to.have.length(2);
    const none = new Map<string, GgufValue>([['general.architecture', gv.str('qwen3')], ['qwen3.rope.scaling.type', gv.str('none')]]);
    expect(scanDeclaredScales(none, {})).to.deep.equal({ fatal: [], warnings: [] });
  });

  it('a plain qwen3 has nothing to report', () => {
    const m = new Map<string, GgufValue>([['general.architecture', gv.str('qwen3')], ['qwen3.rope.freq_base', gv.f32(1e6)]]);
    expect(scanDeclaredScales(m, {})).to.deep.equal({ fatal: [], warnings: [] });
  });
});
