/**
 * The one JavaScript lint configuration (ESLint's flat config): the recommended rules, the line length written in
 * ruff.toml (one length for both languages), and each folder's globals.
 */
import { readFileSync } from 'node:fs';

import js from '@eslint/js';
import globals from 'globals';

const LINE_LENGTH = Number(/^line-length\s*=\s*(\d+)/m.exec(readFileSync(new URL('./ruff.toml', import.meta.url), 'utf8'))[1]);

export default [
  { ignores: ['node_modules/', 'site/', 'build/', '.venv/'] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { ...globals.browser, ...globals.worker } },
    rules: {
      'max-len': ['error', { code: LINE_LENGTH, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }],
    },
  },
  // Material's page-change observable, which mount.js subscribes to.
  { files: ['docs/**/*.js'], languageOptions: { globals: { document$: 'readonly' } } },
  // The service worker's template: hooks/offline.py replaces its placeholders.
  { files: ['hooks/sw.js'], languageOptions: { globals: { ...globals.serviceworker, workbox: 'readonly', __ONEPASS_RUNTIME_FILES__: 'readonly', __ONEPASS_ISOLATION__: 'readonly' } } },
  { files: ['**/*.mjs', 'benchmarks/**/*.js', 'eslint.config.js'], languageOptions: { globals: { ...globals.node } } },
];
