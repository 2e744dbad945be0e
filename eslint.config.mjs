// `npm run lint`'s ESLint config: typescript-eslint's strict, type-aware rules over src, test and bench.
// typescript-eslint needs TypeScript's JS compiler API, which TypeScript 7 does not ship: `typescript` is
// the 6.0 compatibility package (@typescript/typescript6) for eslint, while the build's `tsc` is 7.x
// (installed as @typescript/native). A rule is turned off or eased only with its reason beside it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-*/', 'build/', 'node_modules/'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // With noUncheckedIndexedAccess, `a[i]!` is how the code states an index it has bounds-checked (~2,900 uses).
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Numbers in messages are the common case and print as expected; undefined, objects and the rest stay errors.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // `() => resolve(x)` and `() => h.run(...)` return nothing on purpose; braces would only add noise.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // An `async` function without `await` is how an API that may throw answers with a rejection instead.
      '@typescript-eslint/require-await': 'off',
      // `_` names a value a loop or a destructuring must bind but does not use.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `cond ? a() : b()` as a statement picks one of two calls.
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true }],
      // `{}` is the attribute record of an op that has none (src/ir/ops.ts' tables).
      '@typescript-eslint/no-empty-object-type': ['error', { allowObjectTypes: 'always' }],
      // A caught error is cast to the class that an instanceOf check (often chai's) has just established.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // Control characters are what the escaping and the hostile-input checks look for.
      'no-control-regex': 'off',
    },
  },
  {
    // chai's property assertions (`expect(x).to.be.true`) are expressions by design.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    // The server speaks OpenAI's wire, deprecated fields included (max_tokens, seed): these send them on purpose.
    files: ['test/serve/**/*.ts', 'bench/serve.ts'],
    rules: { '@typescript-eslint/no-deprecated': 'off' },
  },
  {
    // page.evaluate's callbacks run in the browser, and the build's lib has no DOM types.
    files: ['test/browser/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-call': 'off', '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off', '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JS (scripts/, a fixture's generator): no types to check, Node's globals.
    files: ['**/*.mjs', '**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly' },
    },
  },
);
