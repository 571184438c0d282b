/**
 * The XSS corpus (tests/fixtures/xss-corpus.ts, 600 payloads) through the import (titles,
 * channel names, questions, answers) and the widget socket (questions), rendered in the
 * dashboard's tables and transcripts and in the widget: no payload may run. Each payload that
 * runs sets `window.__xss` or opens a dialog; the rendered DOM must hold no injected element.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { TRANSCRIPT_PAGE_SIZE } from '../../lib/dashboard/transcript-pages';
import { xssCorpus } from '../fixtures/xss-corpus';
import { askAsVisitor } from './fixtures';
import { hostPage, startOwnApp, stopApp } from './widget-helpers';

// The import and the socket refuse NUL characters (a precise error): those payloads go without it.
const corpus = xssCorpus().map((p) => p.text.replaceAll('\u0000', ''));
const port = Number(process.env.E2E_APP_PORT ?? 3210) + 5;
const APP_URL = `http://localhost:${port}`;
const EMAIL = 'admin@xss.test';
const PASSWORD = 'xss-password-1';

let app: Awaited<ReturnType<typeof startOwnApp>> | undefined;
let dataDir = '';
let client: { client_id: string; client_secret: string };
let transcript = '';

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
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-xss-'));
  const account = cli(['account', 'create', '--name', 'XSS Co', '--admin-email', EMAIL, '--admin-password', PASSWORD]);
  const accountId = String(account.account_id);
  // 200 conversations (titles and channel names from the corpus) and one with every payload as question and answer.
  const lines: object[] = [];
  const conv = (i: number, title: string, channel: number, channelName: string) => {
    const id = crypto.randomUUID();
    lines.push({
      type: 'conversation',
      conversation_id: id,
      title,
      status: 'Open',
      channel_id: channel,
      channel_name: channelName,
      created_at: `2026-10-01 09:${String(i % 60).padStart(2, '0')}:00`,
      updated_at: '2026-10-01 10:00:00',
    });
    return id;
  };
  for (let i = 0; i < 200; i++) conv(i, corpus[i]!, 100 + (i % 50), corpus[(i % 50) + 200]!);
  transcript = conv(0, 'All payloads', 99, 'Import');
  corpus.forEach((text, i) => {
    lines.push({
      type: 'response',
      response_id: crypto.randomUUID(),
      conversation_id: transcript,
      question: text,
      answer: corpus[(i + 1) % corpus.length],
      channel_id: 99,
      created_at: `2026-10-02 ${String(Math.floor(i / 60) % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`,
      likes: 0,
      dislikes: 0,
      comments: 0,
    });
  });
  const file = path.join(dataDir, 'xss.ndjson');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  cli(['import', '--account', accountId, '--file', file]);
  client = cli(['widget', 'client', 'create', '--account', accountId, '--domain', '127.0.0.1', '--domain', 'localhost']);
  app = await startOwnApp(port, dataDir, path.join(dataDir, 'fixtures.json'));
});

test.afterAll(async () => {
  if (app) await stopApp(app);
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Traps every way a payload could announce itself. */
async function watch(page: Page): Promise<string[]> {
  const fired: string[] = [];
  page.on('dialog', (d) => {
    fired.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.addInitScript(() => {
    Object.defineProperty(window, '__xss', {
      configurable: false,
      set: () => {
        document.documentElement.dataset.xss = 'ran';
      },
      get: () => undefined,
    });
  });
  return fired;
}

/** No payload ran and no injected element or javascript: link is in the page (light and shadow DOM). */
async function expectClean(page: Page, fired: string[], where: string) {
  await page.waitForTimeout(300); // onerror/onload handlers fire asynchronously
  const found = await page.evaluate(() => {
    const roots: Array<Document | ShadowRoot> = [document];
    for (const el of document.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
    const bad: string[] = [];
    for (const root of roots) {
      for (const el of root.querySelectorAll(
        'main img, main svg:not([aria-hidden]) script, main iframe, main object, main embed, [onerror], [onload], [onfocus], [ontoggle], [onbegin], [onstart], [onpointerover], a[href^="javascript" i], iframe[srcdoc], form button[formaction]',
      )) {
        bad.push(el.outerHTML.slice(0, 120));
      }
      // A payload's own script (Next's flight data holds the payloads as escaped JSON strings: not code).
      for (const s of root.querySelectorAll('script'))
        if (/^\s*(?:window\.__xss|top\.__xss|alert\(|parent\.)/.test(s.textContent ?? '')) bad.push(s.outerHTML.slice(0, 120));
    }
    return { bad, ran: document.documentElement.dataset.xss ?? null };
  });
  expect(found.ran, `${where}: a payload set window.__xss`).toBeNull();
  expect(fired, `${where}: a payload opened a dialog`).toEqual([]);
  expect(found.bad, `${where}: injected elements`).toEqual([]);
}

test('the corpus renders inert in the dashboard and the widget', async ({ page }) => {
  test.setTimeout(120_000);
  expect(corpus.length).toBeGreaterThanOrEqual(500);
  // Through the widget: questions over the socket (each answered), in one conversation.
  const asked = corpus.slice(300, 318); // under the per-visitor ask limit (20 a minute)
  const widgetConversation = await askAsVisitor(APP_URL, client, asked);

  const fired = await watch(page);
  await page.goto(`${APP_URL}/login`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  for (const p of ['/conversations?size=100', '/conversations?size=100&page=2', '/responses?size=100', '/responses?size=100&page=6']) {
    await page.goto(`${APP_URL}${p}`);
    await expect(page.locator('td.gridjs-td').first()).toBeVisible();
    await expectClean(page, fired, p);
  }
  // The 600-response transcript, a page at a time: the newest first, then every older page through the pager.
  await page.goto(`${APP_URL}/conversations/${transcript}`);
  const pages = Math.ceil(corpus.length / TRANSCRIPT_PAGE_SIZE);
  let shown = 0;
  for (let p = pages; p >= 1; p--) {
    await expect(page.getByRole('navigation', { name: 'Transcript pages' }).first()).toContainText(`page ${p} of ${pages}`);
    await expect(page.locator('article')).toHaveCount(Math.min(TRANSCRIPT_PAGE_SIZE, corpus.length - (p - 1) * TRANSCRIPT_PAGE_SIZE));
    shown += await page.locator('article').count();
    await expectClean(page, fired, `the imported transcript, page ${p}`);
    if (p > 1) await page.getByRole('link', { name: '‹ Older' }).first().click();
  }
  expect(shown).toBe(corpus.length);
  await page.goto(`${APP_URL}/conversations/${widgetConversation}`);
  await expect(page.locator('article')).toHaveCount(asked.length);
  await expectClean(page, fired, "the widget conversation's transcript");

  // In the widget: payloads typed by a visitor, shown in its own transcript.
  await page.goto(hostPage({ app: APP_URL, client: client.client_id }));
  await page.getByRole('button', { name: 'Open chat' }).click();
  for (const text of [corpus[0]!, corpus[2]!, corpus[5]!, corpus[44]!]) {
    await page.getByRole('textbox', { name: 'Message' }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForTimeout(500);
  }
  // The payloads are shown, as text, in the widget's transcript (light or shadow DOM).
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          let text = document.body.innerText;
          for (const el of document.querySelectorAll('*')) if (el.shadowRoot) text += (el.shadowRoot as unknown as HTMLElement).textContent ?? '';
          return text.split('__xss').length - 1;
        }),
      { timeout: 15_000 },
    )
    .toBeGreaterThanOrEqual(2);
  await page.waitForTimeout(1000);
  await expectClean(page, fired, 'the widget');
  // The trap itself works: a script that does run is seen.
  await page.evaluate(() => {
    (window as unknown as { __xss: number }).__xss = 1;
  });
  expect(await page.evaluate(() => document.documentElement.dataset.xss)).toBe('ran');
});
