/**
 * One prompt's prefill shared by several generations (a server's `n` choices of one prompt): the first
 * generation given the share prefills the prompt as always, then its cache's prompt positions are read
 * (in shared memory) with the logits of the prompt's last token; every other generation given the
 * share, with the same prompt ids, starts from a copy of those positions (written into its new cache
 * before its first step) and those logits, and prefills nothing. Its cache then holds the bytes its own
 * prefill would have written and its first logits are those it would have computed, so each answer is
 * the bytes of the same request alone (its own seed, its own sampling).
 *
 * Those that arrive while the first prefills wait for it; when the first ends before its prefill is
 * read (an abort, a failure, a prompt that is not theirs) each prefills for itself.
 */
import type { Tensor } from '../../ir/tensor.js';
import type { PositionPiece } from './runner.js';

/** A prompt's prefilled positions and the logits of its last token. */
export interface SharedPrefill {
  readonly ids: readonly number[];
  readonly axes: Readonly<Record<string, number>>;
  readonly pieces: readonly PositionPiece[];
  readonly logits: Tensor;
}

/** generate's `share`: see the file's doc. */
export class PromptShare {
  #prefill: Promise<SharedPrefill | undefined> | undefined;
  #give: ((p: SharedPrefill | undefined) => void) | undefined;
  /** Prompts prefilled for the share (by its first generation), and generations that started from one. */
  prefills = 0;
  reuses = 0;

  /**
   * @internal What a generation of prompt `ids` starts from: a prefill to copy (undefined, and the
   * generation then prefills; `first` says it is the one whose prefill the others wait for).
   */
  async take(ids: readonly number[]): Promise<{ readonly shared?: SharedPrefill; readonly first: boolean }> {
    if (this.#prefill === undefined) {
      this.#prefill = new Promise((resolve) => { this.#give = resolve; });
      return { first: true };
    }
    const p = await this.#prefill;
    if (p === undefined || p.ids.length !== ids.length || p.ids.some((id, i) => id !== ids[i])) return { first: false };
    this.reuses++;
    return { shared: p, first: false };
  }

  /** @internal The first generation's prefill (undefined: none to share; the others prefill). Once. */
  give(p: SharedPrefill | undefined): void {
    const give = this.#give;
    this.#give = undefined;
    if (give === undefined) return;
    if (p !== undefined) this.prefills++;
    give(p);
  }
}
