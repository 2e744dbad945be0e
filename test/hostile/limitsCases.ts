/** The hostile-input cases of the `limits` part of issue 9; filled in by that branch. */
import type { HostileCase } from './case.js';

export const cases: readonly HostileCase[] = [];
