import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // the third-party clients' own packages (installed on demand) are not ours to run
    exclude: [...configDefaults.exclude, 'test/clients/**', 'bench/peers/**'],
    testTimeout: 20000,
    hookTimeout: 30000,
    pool: 'forks',
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
