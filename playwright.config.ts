import { defineConfig, devices } from '@playwright/test';

// Browser tests drive Debian's Chromium (never a downloaded browser) against the production build.
const APP_PORT = Number(process.env.E2E_APP_PORT ?? 3210);
const HOST_PORT = Number(process.env.E2E_HOST_PORT ?? 3211);

export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'tests/artifacts/test-results',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  // One retry: a spec that fails under CI's load and then passes is reported as flaky (named at the end of `npm test`), not hidden.
  retries: 1,
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${APP_PORT}`,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
    },
    // Tracing records every action of every spec, CPU the API files beside it need: E2E_TRACE=1 keeps a failure's trace.
    trace: process.env.E2E_TRACE === '1' ? 'retain-on-failure' : 'off',
    screenshot: 'only-on-failure',
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], channel: undefined } }],
  webServer: [
    {
      command: `node --import tsx tests/e2e/serve-app.ts`,
      url: `http://localhost:${APP_PORT}/healthz`,
      env: { E2E_APP_PORT: String(APP_PORT) },
      reuseExistingServer: false,
      timeout: 120_000,
      stdout: 'pipe',
    },
    {
      command: `node tests/fixtures/host-server.mjs`,
      url: `http://127.0.0.1:${HOST_PORT}/health`,
      env: { E2E_HOST_PORT: String(HOST_PORT), E2E_APP_ORIGIN: `http://localhost:${APP_PORT}` },
      reuseExistingServer: false,
      timeout: 30_000,
    },
  ],
});
