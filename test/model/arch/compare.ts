/**
 * What the architecture tests against llama.cpp share (llamacpp.test.ts, yarn.test.ts): llama.cpp's
 * teacher-forced next-token logits over a list of ids, and the figures of ours against them.
 */
import type { Llama } from '../../llamaCpp.js';
import { centered } from '../../llamaCpp.js';
import { cosine } from '../qwen3/helpers.js';

/** The least top-two margin (in logits) at which llama.cpp's argmax must be ours (test/model/qwen3/llamacpp.test.ts's). */
const MARGIN = 0.2;

/** llama.cpp's centered logits at each position of `ids`, its top-two margin there and its argmax. */
export interface TheirLogits { readonly logits: number[][]; readonly margins: number[]; readonly top: number[] }

/** llama.cpp's logits of the file at `path` over `ids` (their probabilities' logs, centered), in a context of `contextSize`. */
export async function llamaCppLogits(llama: Llama, path: string, ids: readonly number[], vocab: number, contextSize: number): Promise<TheirLogits> {
  const m = await llama.loadModel({ modelPath: path });
  const ctx = await m.createContext({ contextSize, threads: 2 });
  const out = await ctx.getSequence().controlledEvaluate(ids.map((t) => [t, { generateNext: { probabilities: true } }]));
  await ctx.dispose();
  await m.dispose();
  const r: TheirLogits = { logits: [], margins: [], top: [] };
  for (let k = 0; k < ids.length; k++) {
    const probs = out[k]!.next.probabilities!;
    r.logits.push(centered(Float64Array.from({ length: vocab }, (_, i) => Math.log(probs.get(i) ?? 0))));
    // The map is sorted by probability, highest first.
    const [first, second] = [...probs.entries()];
    r.margins.push(Math.log(first![1]) - Math.log(second![1]));
    r.top.push(first![0]);
  }
  return r;
}

/** The worst of the per-position figures of ours against llama.cpp's (minCosPast: from position `past` on). */
export interface Figures { minCos: number; minCosPast: number; worstScale: number; decisive: number; argmaxMisses: number }

const norm = (a: readonly number[]) => Math.sqrt(a.reduce((s, x) => s + x * x, 0));

/** Ours (centered logits per position) against theirs: least cosine, worst scale, argmax where their margin is clear. */
export function figures(ours: readonly (readonly number[])[], theirs: TheirLogits, past = 0): Figures {
  const f: Figures = { minCos: 1, minCosPast: 1, worstScale: 1, decisive: 0, argmaxMisses: 0 };
  theirs.logits.forEach((l, k) => {
    const o = ours[k]!;
    const c = cosine(l, o);
    f.minCos = Math.min(f.minCos, c);
    if (k >= past) f.minCosPast = Math.min(f.minCosPast, c);
    const scale = norm(o) / norm(l);
    if (Math.abs(scale - 1) > Math.abs(f.worstScale - 1)) f.worstScale = scale;
    if (theirs.margins[k]! > MARGIN) {
      f.decisive++;
      if (o.indexOf(Math.max(...o)) !== theirs.top[k]) f.argmaxMisses++;
    }
  });
  return f;
}
