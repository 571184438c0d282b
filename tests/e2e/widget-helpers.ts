import { spawn, type ChildProcess } from 'node:child_process';
import { expect, type Page } from '@playwright/test';

export const HOST = `http://127.0.0.1:${process.env.E2E_HOST_PORT ?? 3211}`;
export const APP = `http://localhost:${process.env.E2E_APP_PORT ?? 3210}`;

export function hostPage(params: Record<string, string>): string {
  return `${HOST}/page?${new URLSearchParams(params).toString()}`;
}

/** Collects console errors of the page. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

export async function widgetState(page: Page): Promise<{ connectionStatus: string; version: string } | null> {
  return page.evaluate(() => {
    const ai = (window as unknown as { svcAI?: { stateManager?: { getState(): { connectionStatus: string; version: string } } } }).svcAI;
    return ai?.stateManager ? ai.stateManager.getState() : null;
  });
}

export async function waitForStatus(page: Page, status: string, timeout = 15_000) {
  await expect.poll(async () => (await widgetState(page))?.connectionStatus, { timeout }).toBe(status);
}

export async function openAndAsk(page: Page, question: string) {
  await page.getByRole('button', { name: 'Open chat' }).click();
  await page.getByRole('textbox', { name: 'Message' }).fill(question);
  await page.getByRole('button', { name: 'Send' }).click();
}

export async function apiGet(path: string, key: string) {
  const r = await fetch(`${APP}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: await r.json() };
}

/** A second app instance the test controls (restart, short token lifetime); `script` another app (tests/e2e/handoff-app.ts). */
export async function startOwnApp(
  port: number,
  dataDir: string,
  fixturesFile: string,
  env: Record<string, string> = {},
  script = 'tests/e2e/serve-app.ts',
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, E2E_APP_PORT: String(port), E2E_DATA_DIR: dataDir, E2E_FIXTURES: fixturesFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (d) => process.stderr.write(d));
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://localhost:${port}/healthz`)).ok) return child;
    } catch {
      /* not yet */
    }
    if (child.exitCode !== null) throw new Error(`app on ${port} exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`app on ${port} did not start`);
}

export async function stopApp(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
