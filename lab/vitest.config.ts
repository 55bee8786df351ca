// The lab's own tests (`npm run lab -- test`): research code (lab/backtest) checked on the real samples. Not part of
// `npm test`, whose configuration includes test/ only.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['lab/**/*.test.ts'],
    testTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
