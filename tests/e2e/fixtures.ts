import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';

type AccountFixture = { accountId: number; email: string; password: string; key: string; conversations: string[]; channels: number[] };
export type Fixtures = { alpha: AccountFixture; beta: AccountFixture; widget: { client_id: string; client_secret: string }; elsewhere: { client_id: string }; dataDir: string };

export function fixtures(file = 'tests/artifacts/e2e-fixtures.json'): Fixtures {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

export async function signIn(page: Page, email: string, password: string) {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

export async function screenshot(page: Page, name: string) {
  const dir = 'tests/artifacts/screenshots';
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
