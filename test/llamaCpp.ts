/**
 * node-llama-cpp 3.21.1, the reference the comparison tests run beside: its CPU build of llama.cpp
 * (loaded with gpu: false: package.json's overrides leave its GPU builds out), the part of its API the
 * tests call, and the centering under which logits are compared (a softmax does not see a shift).
 */
import { skipWith } from './skip.js';

interface LlamaContext {
  getSequence(): { controlledEvaluate(input: unknown[]): Promise<({ next: { probabilities?: Map<number, number> } } | undefined)[]> };
  dispose(): Promise<void>;
}

export interface LlamaModel {
  createContext(o: object): Promise<LlamaContext>;
  tokenize(text: string, specialTokens?: boolean): number[] | Uint32Array;
  readonly tokens: { readonly bos: number | null; readonly shouldPrependBosToken: boolean };
  dispose(): Promise<void>;
}

export interface Llama {
  loadModel(o: { modelPath: string; vocabOnly?: boolean }): Promise<LlamaModel>;
}

/** llama.cpp's CPU build, from a `before` hook; the suite is skipped, saying why, where it cannot load. */
export async function loadLlamaCpp(ctx: Mocha.Context): Promise<Llama> {
  try {
    const mod = (await import('node-llama-cpp')) as unknown as { getLlama(o: object): Promise<Llama> };
    return await mod.getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' });
  } catch (e) {
    return skipWith(ctx, `node-llama-cpp cannot load llama.cpp here (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** `a` less its mean. */
export const centered = (a: ArrayLike<number>): number[] => {
  const m = Array.from(a).reduce((s, x) => s + x, 0) / a.length;
  return Array.from(a, (x) => x - m);
};
