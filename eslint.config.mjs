// `npm run lint`: type-aware rules that tsc does not check (STYLE.md: no floating promises).
// typescript-eslint drives TypeScript 5's JS API, which the project's TypeScript 7 does not
// have, so ESLint and its TypeScript live apart in .tools/lint (scripts/bootstrap.js pins
// them) and are loaded from there.
import { createRequire } from 'node:module';

const require = createRequire(new URL('./.tools/lint/', import.meta.url));
const tseslint = require('typescript-eslint');

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.tools/**',
      '.data/**',
      'dist/**',
      'prisma/generated/**',
      'clients/typescript/schema.ts',
      'scratch.tmp/**',
      '**/*.tmp.ts',
      'test-output/**',
      'bench/results/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // Dead code: tsc's noUnusedLocals/noUnusedParameters catch locals, imports and parameters;
      // this also catches unused catch bindings and destructured names. A name that must stay
      // (a parameter a signature requires) starts with an underscore.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  // Tests, the bench and scripts poke at loosely typed JSON answers on purpose.
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Small modules with one job: no function over 80 lines, so each reads whole. It covers every
  // source outside test/, where a mocha describe callback holds its whole suite; the generated
  // Prisma and OpenAPI clients are ignored above.
  {
    files: ['**/*.ts'],
    ignores: ['test/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
);
