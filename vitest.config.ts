import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**'],
    // One folder per run for the datasets the test files share (built once, read-only): test/helpers/data.ts.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // DuckDB and the pipeline tests are CPU-bound: two workers match the 2-core CI machine.
    pool: 'forks',
    maxWorkers: 2,
  },
});
