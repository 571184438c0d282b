/**
 * A long conversation on /inbox/<id> (issue 33 item 7): the newest page first with "Load earlier",
 * which puts the page before it above; and the transcript's numbered pages read a page at a time.
 * Its own app and data (an imported conversation of 120 questions). Screenshots at 1366 and 390 px.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { INBOX_PAGE_SIZE, TRANSCRIPT_PAGE_SIZE } from '../../lib/dashboard/transcript-pages';
import { collectConsoleErrors, screenshotsAtBothWidths } from './fixtures';
import { startOwnApp, stopApp } from './widget-helpers';

const port = Number(process.env.E2E_APP_PORT ?? 3210) + 7;
const APP_URL = `http://localhost:${port}`;
const EMAIL = 'admin@paging.test';
const PASSWORD = 'paging-password-1';
const QUESTIONS = 120;

let app: Awaited<ReturnType<typeof startOwnApp>> | undefined;
let dataDir = '';
const conversation = crypto.randomUUID();

function cli(args: string[]) {
  return JSON.parse(
    execFileSync('node_modules/.bin/tsx', ['lib/cli/main.ts', ...args], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', SVC_DEMO: '0' },
      encoding: 'utf8',
    }),
  );
}

test.beforeAll(async () => {
  test.setTimeout(180_000);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-paging-'));
  const account = cli(['account', 'create', '--name', 'Paging Co', '--admin-email', EMAIL, '--admin-password', PASSWORD]);
  const lines: object[] = [
    {
      type: 'conversation',
      conversation_id: conversation,
      title: 'A long conversation',
      status: 'Open',
      channel_id: 1,
      channel_name: 'Website',
      created_at: '2026-11-01 09:00:00',
      updated_at: '2026-11-01 12:00:00',
    },
  ];
  for (let i = 1; i <= QUESTIONS; i++) {
    const at = new Date(Date.UTC(2026, 10, 1, 9, 0, i * 30)).toISOString().slice(0, 19).replace('T', ' ');
    lines.push({
      type: 'response',
      response_id: crypto.randomUUID(),
      conversation_id: conversation,
      question: `Question number ${i}?`,
      answer: `Answer number ${i}.`,
      channel_id: 1,
      created_at: at,
      likes: 0,
      dislikes: 0,
      comments: 0,
    });
  }
  const file = path.join(dataDir, 'paging.ndjson');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  cli(['import', '--account', String(account.account_id), '--file', file]);
  app = await startOwnApp(port, dataDir, path.join(dataDir, 'fixtures.json'));
});

test.afterAll(async () => {
  if (app) await stopApp(app);
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a long conversation opens on its newest messages; "Load earlier" adds the page before', async ({ page }) => {
  const errors = collectConsoleErrors(page);
  await page.goto(`${APP_URL}/login`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  await page.goto(`${APP_URL}/inbox/${conversation}`);
  const transcript = page.getByRole('region', { name: 'Transcript' });
  await expect(transcript).toContainText(`Question number ${QUESTIONS}?`);
  await expect(transcript).not.toContainText(`Question number ${QUESTIONS - INBOX_PAGE_SIZE}?`);
  await expect(transcript.getByText('Earlier messages are not shown.')).toBeVisible();
  const shown = () => transcript.getByText(/^Question number \d+\?$/).count();
  expect(await shown()).toBe(INBOX_PAGE_SIZE);
  await screenshotsAtBothWidths(page, 'inbox-paged');

  await transcript.getByRole('button', { name: 'Load earlier' }).click();
  await expect(transcript).toContainText(`Question number ${QUESTIONS - INBOX_PAGE_SIZE}?`);
  expect(await shown()).toBe(2 * INBOX_PAGE_SIZE);
  await transcript.getByRole('button', { name: 'Load earlier' }).click();
  await expect(transcript).toContainText('Question number 1?');
  expect(await shown()).toBe(QUESTIONS);
  await expect(transcript.getByRole('button', { name: 'Load earlier' })).toHaveCount(0);
  await screenshotsAtBothWidths(page, 'inbox-paged-all');

  // The transcript page: the newest numbered page, then the oldest.
  await page.goto(`${APP_URL}/conversations/${conversation}`);
  const pages = Math.ceil(QUESTIONS / TRANSCRIPT_PAGE_SIZE);
  await expect(page.getByRole('navigation', { name: 'Transcript pages' }).first()).toContainText(`page ${pages} of ${pages}`);
  await expect(page.locator('article')).toHaveCount(QUESTIONS - (pages - 1) * TRANSCRIPT_PAGE_SIZE);
  await page.getByRole('link', { name: '« Oldest' }).first().click();
  await expect(page.locator('article').first()).toContainText('Question number 1?');
  await expect(page.locator('article')).toHaveCount(TRANSCRIPT_PAGE_SIZE);
  expect(errors).toEqual([]);
});
