/**
 * Skipping a test or a suite with its reason in mocha's pending state: the reason is appended to the
 * title of each test it skips (`… (skipped: why)`), so every reporter (dot, spec, json) carries it and
 * nothing is printed to stdout, where it would corrupt `--reporter json`.
 */
import type { Suite, Test } from 'mocha';

function testsOf(s: Suite): Test[] {
  return [...s.tests, ...s.suites.flatMap(testsOf)];
}

/** Skips `ctx`'s test, or, from a hook, every test of the hook's suite, saying why. */
export function skipWith(ctx: Mocha.Context, why: string): never {
  const r = ctx.test;
  const skipped = r === undefined ? [] : (r as { type?: string }).type === 'hook' ? (r.parent === undefined ? [] : testsOf(r.parent)) : [r as Test];
  for (const t of skipped) if (!t.title.includes(' (skipped: ')) t.title = `${t.title} (skipped: ${why})`;
  return ctx.skip();
}
