import { defineConfig } from 'vitest/config';

// End-to-end tests: a real server (building the demo dataset on first start) driven by headless Chromium.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    // The run's folder for shared datasets and temporary folders, removed at the end (as for the unit tests).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    // Building the demo dataset before the server listens takes up to a minute or two on a small CI machine.
    hookTimeout: 360_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
