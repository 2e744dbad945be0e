/**
 * The declared-scale guard: a GGUF may declare scale-like values (MiniCPM's embedding, residual and
 * logit scales, Gemma's softcaps) that a converted config.json must carry, or the model decodes
 * garbage, sometimes only in its probabilities where no argmax check sees it. A known-critical key the
 * config drops is fatal; any other scale-like key (`*scale*`, `*softcap*`, `*mup*`) is a warning.
 *
 * Choices, so the guard neither cries wolf nor misses a drop:
 * - The config may carry a value under its Hugging Face name (scale_emb for embedding_scale,
 *   scale_depth for residual_scale, dim_model_base or logits_scaling for logit_scale, the granite
 *   *_multiplier names); any alias at any depth of the config (text_config too) counts.
 * - A critical key carried under its own name with a different number is fatal as well.
 * - A critical key holding its neutral value (a scale of 1, a softcap of 0, which ggml treats as off)
 *   changes nothing when dropped, so it is a warning.
 * - `general.*` and `tokenizer.*` keys describe the file and the vocabulary, not the forward pass; they
 *   are not scanned.
 * - Rope scaling keys (rope.scaling.*, rope.scale_linear; `*scaling*` is scanned for them) are ignored
 *   when the config carries a `rope_scaling` object or the GGUF's own rope.scaling.type is "none";
 *   otherwise they are warnings: a dropped YaRN factor only bites past the original context.
 * - A non-critical key the config carries under its own name is not warned about.
 */
import { escapeControl } from '../../io/escape.js';
import { plainValue, numericValue, type GgufMetadata, type GgufValue } from './types.js';

/** The findings of the scan: fatal ones make the check fail. */
export interface ScaleFindings {
  readonly fatal: string[];
  readonly warnings: string[];
}

/** The key names (after the architecture prefix) that must never be dropped, with the config names that carry each. */
export const CRITICAL_SCALE_KEYS: Readonly<Record<string, readonly string[]>> = {
  embedding_scale: ['embedding_scale', 'scale_emb', 'embedding_multiplier'],
  residual_scale: ['residual_scale', 'scale_depth', 'residual_multiplier'],
  logit_scale: ['logit_scale', 'dim_model_base', 'logits_scaling'],
  scale_emb: ['scale_emb', 'embedding_scale', 'embedding_multiplier'],
  scale_depth: ['scale_depth', 'residual_scale', 'residual_multiplier'],
  dim_model_base: ['dim_model_base', 'logit_scale', 'logits_scaling'],
  final_logit_softcapping: ['final_logit_softcapping'],
  attn_logit_softcapping: ['attn_logit_softcapping'],
};

// `scaling` too, so rope.scaling.* keys reach the rope rule below instead of passing unseen.
const SCALE_LIKE = /scal(e|ing)|softcap|mup/i;
const MAX_CONFIG_DEPTH = 8;

/** Every value the config holds under `name`, at any depth (null values count as absent). */
function configValues(config: unknown, name: string, depth = 0, out: unknown[] = []): unknown[] {
  if (depth > MAX_CONFIG_DEPTH || typeof config !== 'object' || config === null) return out;
  if (Array.isArray(config)) {
    for (const v of config) configValues(v, name, depth + 1, out);
    return out;
  }
  for (const [k, v] of Object.entries(config)) {
    if (k === name && v !== null && v !== undefined) out.push(v);
    configValues(v, name, depth + 1, out);
  }
  return out;
}

function show(v: GgufValue): string {
  return JSON.stringify(plainValue(v), (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

function isNeutral(name: string, v: GgufValue): boolean {
  const n = numericValue(v);
  if (n === undefined) return false;
  if (name.endsWith('softcapping')) return n === 0;
  return (name === 'embedding_scale' || name === 'residual_scale' || name === 'logit_scale' || name === 'scale_emb') && n === 1;
}

function differs(a: number, b: number): boolean {
  return Math.abs(a - b) > 1e-6 * Math.max(Math.abs(a), Math.abs(b), 1e-30);
}

/** Scans GGUF metadata for scale-like values and checks that `config` (a parsed config.json) carries them. */
export function scanDeclaredScales(metadata: GgufMetadata, config: object): ScaleFindings {
  const fatal: string[] = [];
  const warnings: string[] = [];
  const archValue = metadata.get('general.architecture');
  const arch = archValue?.type === 'string' ? archValue.value : '';
  const ropeType = metadata.get(`${arch}.rope.scaling.type`);
  const ropeOff = ropeType?.type === 'string' && ropeType.value === 'none';
  const configHasRope = configValues(config, 'rope_scaling').some((v) => typeof v === 'object');

  for (const [key, v] of metadata) {
    if (key.startsWith('general.') || key.startsWith('tokenizer.')) continue;
    const tail = arch !== '' && key.startsWith(`${arch}.`) ? key.slice(arch.length + 1) : key;
    const name = tail.slice(tail.lastIndexOf('.') + 1);
    const aliases = CRITICAL_SCALE_KEYS[name];
    if (aliases !== undefined) {
      const carried = aliases.some((a) => configValues(config, a).length > 0);
      if (!carried) {
        const msg = `${key} = ${show(v)} is declared by the GGUF but config.json drops it (none of ${aliases.join(', ')})`;
        if (isNeutral(name, v)) warnings.push(`${msg}; its value is neutral, so dropping it changes nothing`);
        else fatal.push(msg);
        continue;
      }
      const mine = numericValue(v);
      const same = configValues(config, name).find((x) => typeof x === 'number');
      if (mine !== undefined && typeof same === 'number' && differs(mine, same)) {
        fatal.push(`${key} = ${show(v)} but config.json has ${name} = ${same}`);
      }
      continue;
    }
    if (!SCALE_LIKE.test(tail)) continue;
    if (/^rope\.scal/.test(tail)) {
      if (configHasRope || ropeOff) continue;
      warnings.push(`${key} = ${show(v)}: rope scaling declared but config.json has no rope_scaling`);
      continue;
    }
    if (configValues(config, name).length > 0) continue;
    warnings.push(`${key} = ${show(v)} is scale-like and config.json does not carry ${name}`);
  }
  // Keys and values come from the GGUF; the findings are printed, so none may carry a control character.
  return { fatal: fatal.map(escapeControl), warnings: warnings.map(escapeControl) };
}

/**
 * The declared scales a model's graph would drop: each `<arch>.` key whose name is a critical scale
 * key (CRITICAL_SCALE_KEYS) other than those the architecture honours (`honoured`, names after the
 * prefix), and not at its neutral value. Loading a GGUF to run it refuses these (src/model/arch).
 */
export function unhonouredScales(metadata: GgufMetadata, honoured: readonly string[]): string[] {
  const archValue = metadata.get('general.architecture');
  const arch = archValue?.type === 'string' ? archValue.value : '';
  const out: string[] = [];
  for (const [key, v] of metadata) {
    if (arch === '' || !key.startsWith(`${arch}.`)) continue;
    const tail = key.slice(arch.length + 1);
    const name = tail.slice(tail.lastIndexOf('.') + 1);
    if (CRITICAL_SCALE_KEYS[name] === undefined || honoured.includes(name) || isNeutral(name, v)) continue;
    out.push(key);
  }
  return out;
}
