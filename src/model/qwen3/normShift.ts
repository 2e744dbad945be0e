/**
 * Norm weights stored as w where the model computes with 1 + w (a Gemma 3 directory in Hugging Face's
 * layout: GemmaRMSNorm multiplies by 1 + weight). The programs take norm weights as they multiply by
 * them (llama.cpp's converter stores 1 + w in a GGUF, and `gguf pack` keeps that), so such a directory
 * is bound through a derived file: each norm's 1 + w in f32, computed once from the directory's bf16 (or
 * f32) values and kept in the cache under a key of the model file's identity. 1 + w of a bf16 w is exact
 * in f32, so the graph sees the checkpoint's values exactly. The programs are unchanged.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCacheDir } from '../../cache/defaultDir.js';
import { InvalidInput } from '../../errors/index.js';
import { fileIdentity, readFileRange } from '../../io/fileRange.js';
import { ensureDir, writeOutputFile } from '../../io/write.js';
import type { BoundWeight, ModelWeights } from './weights.js';

/** The weight args that are norms (the layer norms, the q/k norms, the final norm). */
const isNormArg = (name: string): boolean => name === 'output_norm' || /^blk\.\d+\.(attn_norm|ffn_norm|post_attention_norm|post_ffw_norm|attn_q_norm|attn_k_norm)$/.test(name);

/** A norm weight's values as f32. */
function values(w: BoundWeight, bytes: Uint8Array): Float32Array {
  const n = w.shape[0]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(n);
  if (w.dtype === 'bf16') {
    const u = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) u[i] = view.getUint16(2 * i, true) << 16;
  } else if (w.dtype === 'f32') {
    for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
  } else {
    throw new InvalidInput(w.file, `a norm weight of dtype ${w.dtype} cannot be shifted by 1 (bf16 and f32 can)`);
  }
  return out;
}

/**
 * `weights` with every norm rebound to 1 + its value, in f32, from a derived file beside the cache
 * (`<cache>/derived/norm-plus-one-<key>.f32`, key: the sha256 of the model file's real path, size, mtime
 * and ends). The file is written once (atomically) and reused while the model file is unchanged.
 */
export function bindNormsPlusOne(weights: ModelWeights, cacheDir: string = defaultCacheDir()): ModelWeights {
  const norms = [...weights].filter(([name]) => isNormArg(name));
  if (norms.length === 0) return weights;
  const files = new Set(norms.map(([, w]) => w.file));
  if (files.size !== 1) throw new InvalidInput([...files].join(', '), 'norm weights from more than one file');
  const file = [...files][0]!;
  const id = fileIdentity(file);
  const key = createHash('sha256').update(JSON.stringify(['norm-plus-one', 1, file, id.size, id.mtimeMs, id.sha256Ends])).digest('hex').slice(0, 24);
  const dir = join(cacheDir, 'derived');
  const path = join(dir, `norm-plus-one-${key}.f32`);
  const total = norms.reduce((t, [, w]) => t + w.shape[0]!, 0);
  if (!existsSync(path) || readFileSync(path).byteLength !== total * 4) {
    const out = new Float32Array(total);
    let at = 0;
    for (const [, w] of norms) {
      const v = values(w, readFileRange(w.file, w.offset, w.length, { size: id.size, mtimeMs: id.mtimeMs }));
      for (let i = 0; i < v.length; i++) out[at + i] = 1 + v[i]!;
      at += v.length;
    }
    ensureDir(dir);
    writeOutputFile(path, new Uint8Array(out.buffer));
  }
  const rebound = new Map(weights);
  let at = 0;
  for (const [name, w] of norms) {
    const n = w.shape[0]!;
    rebound.set(name, { dtype: 'f32', shape: [n], file: path, offset: at * 4, length: n * 4 });
    at += n;
  }
  return rebound;
}
