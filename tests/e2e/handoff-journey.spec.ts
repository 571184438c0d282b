/**
 * Issue 26 "Done means", on two instances (PostgreSQL + Redis, tests/e2e/handoff-instances-app.ts):
 * a visitor on a host page of another origin, connected to instance B, is declined and presses
 * "Talk to a person"; Dana, signed in on instance A, sees it arrive live in /inbox, takes over,
 * types, replies, hands back, takes over again and resolves; the visitor rates. The Customer API,
 * the export and a webhook receiver show it. Then Dana (A) and Eli (B) race "Take over".
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { screenshotsAtBothWidths } from './fixtures';
import { consoleErrors, hostPage, startOwnApp, stopApp, waitForStatus } from './widget-helpers';

const PORT_A = Number(process.env.E2E_APP_PORT ?? 3210) + 20;
const FX = 'tests/artifacts/handoff-journey-fixtures.json';
type Fx = { widget: { client_id: string }; key: string; members: Array<{ name: string; email: string; password: string }>; urls: [string, string] };

let app: ChildProcess;
let fx: Fx;
const receiver = new WebhookReceiver();

test.beforeAll(async () => {
  test.setTimeout(180_000);
  await receiver.start();
  fs.rmSync(FX, { force: true });
  app = await startOwnApp(PORT_A, '', FX, { E2E_WEBHOOK_URL: `http://127.0.0.1:${receiver.port}/hook` }, 'tests/e2e/handoff-instances-app.ts');
  // A answers first; the fixtures file appears once B does too.
  await expect.poll(() => fs.existsSync(FX), { timeout: 90_000 }).toBe(true);
  fx = JSON.parse(fs.readFileSync(FX, 'utf8'));
});
test.afterAll(async () => {
  if (app) await stopApp(app);
  await receiver.stop();
});

const inLog = (page: Page, text: string) => page.getByRole('log').getByText(text);

async function memberPage(browser: Browser, who: number, url: string): Promise<Page> {
  const page = await (await browser.newContext({ baseURL: url, viewport: { width: 1366, height: 900 } })).newPage();
  const m = fx.members[who]!;
  await page.goto('/login');
  await page.getByLabel('Email').fill(m.email);
  await page.getByLabel('Password').fill(m.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  await page.goto('/inbox?view=waiting');
  return page;
}

async function visitorOnB(page: Page) {
  await page.goto(hostPage({ sel: 'track', val: 'beta', app: fx.urls[1], fixtures: FX }));
  await waitForStatus(page, 'connected');
  await page.getByRole('button', { name: 'Open chat' }).click();
}

async function ask(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

async function api(path: string) {
  const r = await fetch(`${fx.urls[1]}${path}`, { headers: { authorization: `Bearer ${fx.key}` } });
  return { status: r.status, text: await r.text() };
}

test('declined → Talk to a person on B → Dana on A takes over, replies, hands back, takes over, resolves → rating; API, export, webhooks', async ({
  page,
  browser,
}) => {
  test.setTimeout(150_000);
  const errors = consoleErrors(page);
  const dana = await memberPage(browser, 0, fx.urls[0]);
  const danaErrors = consoleErrors(dana);
  const views = dana.getByRole('navigation', { name: 'Inbox views' });
  await expect(views.getByRole('link', { name: /^Waiting/ })).toHaveText('Waiting 0');

  await visitorOnB(page);
  await ask(page, 'Do you sell purple kayak paddles for penguins?');
  const offer = page.getByRole('log').getByRole('button', { name: 'Talk to a person' });
  await expect(offer).toBeVisible({ timeout: 20_000 });
  await offer.click();
  await expect(inLog(page, 'Connecting you to the team')).toBeVisible();

  // Live on A, no reload.
  const row = dana.locator('a[href^="/inbox/"]').filter({ hasText: 'purple kayak' }).first();
  await expect(row).toBeVisible({ timeout: 15_000 });
  await expect(views.getByRole('link', { name: /^Waiting/ })).toHaveText('Waiting 1');
  await screenshotsAtBothWidths(dana, 'journey-inbox-waiting');
  const id = (await row.getAttribute('href'))!.split('/').pop()!;
  await row.click();
  await dana.waitForURL(`**/inbox/${id}`);

  await dana.getByRole('button', { name: 'Take over' }).click();
  await expect(dana.getByRole('status')).toHaveText('You have taken over.');
  await expect(inLog(page, 'Dana Reyes joined')).toBeVisible();
  const reply = dana.getByRole('textbox', { name: 'Reply' });
  await reply.pressSequentially('Hi! I am Dana.', { delay: 20 });
  await expect(inLog(page, 'Dana Reyes is typing…')).toBeVisible();
  await screenshotsAtBothWidths(page, 'journey-widget-typing');
  await reply.fill('Hi! I am Dana. We do not stock those, but I can order a pair for you.');
  await dana.getByRole('button', { name: 'Send', exact: true }).click();
  const agentMsg = page.locator('svc-chat-widget').locator('.msg.agent').last();
  await expect(agentMsg).toContainText('Dana Reyes');
  await expect(agentMsg).toContainText('I can order a pair for you');
  await ask(page, 'Yes please, two pairs.');
  await expect(dana.getByRole('region', { name: 'Transcript' })).toContainText('Yes please, two pairs.');
  await screenshotsAtBothWidths(page, 'journey-widget-member-reply');
  await screenshotsAtBothWidths(dana, 'journey-inbox-conversation');

  await dana.getByRole('button', { name: 'Hand back to AI' }).click();
  await expect(dana.getByRole('status')).toHaveText('The AI answers again.');
  await expect(inLog(page, 'Dana Reyes left — the assistant is back')).toBeVisible();
  await dana.getByRole('button', { name: 'Take over' }).click();
  await expect(dana.getByRole('status')).toHaveText('You have taken over.');
  await expect(inLog(page, 'Dana Reyes joined')).toHaveCount(2);
  await dana.getByRole('button', { name: 'Resolve' }).click();
  await expect(dana.getByRole('status')).toHaveText('Resolved.');
  await expect(inLog(page, 'Conversation resolved')).toBeVisible();
  await page.getByRole('textbox', { name: 'Rating comment' }).fill('Dana was quick and kind.');
  await page.getByRole('button', { name: 'Rate 5 of 5' }).click();
  await screenshotsAtBothWidths(page, 'journey-widget-rating');
  await page.getByRole('button', { name: 'Send rating' }).click();
  await expect(inLog(page, 'Thank you for your feedback.')).toBeVisible();

  // The Customer API (on B), the export and the webhooks show it.
  await expect.poll(async () => JSON.parse((await api(`/customer-api/v2/conversation/${id}`)).text).csat as number | null, { timeout: 10_000 }).toBe(5);
  const record = JSON.parse((await api(`/customer-api/v2/conversation/${id}`)).text);
  expect([record.status, record.handled_by, record.assignee]).toEqual(['Resolved', 'human', 'dana@acme.test']);
  const authors = (record.messages as Array<{ author: string; author_name?: string; text: string }>).map((m) => m.author);
  expect(authors).toEqual(expect.arrayContaining(['visitor', 'ai', 'agent', 'system']));
  expect(record.messages.find((m: { author: string }) => m.author === 'agent').author_name).toBe('Dana Reyes');
  const exported = await api(`/customer-api/v2/conversation/export?include=messages`);
  expect(exported.status).toBe(200);
  const line = exported.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .find((c) => c.conversation_id === id || c.id === id);
  expect(line, 'the conversation is in the export').toBeTruthy();
  expect([line.status, line.csat]).toEqual(['Resolved', 5]);
  expect(JSON.stringify(line.messages)).toContain('I can order a pair for you');

  const webhookTypes = () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
  await expect.poll(() => webhookTypes().filter((w) => w.type === 'csat.submitted').length, { timeout: 20_000 }).toBe(1);
  const hooks = webhookTypes();
  expect(hooks.find((w) => w.type === 'csat.submitted')!.data).toMatchObject({ conversation_id: id, rating: 5, comment: 'Dana was quick and kind.' });
  const statuses = hooks.filter((w) => w.type === 'conversation.status_changed').map((w) => (w.data as { status?: string }).status);
  expect(statuses).toEqual(expect.arrayContaining(['Waiting', 'Resolved']));
  const texts = hooks.filter((w) => w.type === 'message.created').map((w) => (w.data as { message: { author: string; text: string } }).message);
  expect(texts).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ author: 'agent', text: 'Hi! I am Dana. We do not stock those, but I can order a pair for you.' }),
      expect.objectContaining({ author: 'visitor', text: 'Yes please, two pairs.' }),
    ]),
  );
  expect(errors).toEqual([]);
  expect(danaErrors).toEqual([]);
});

test('Dana on A and Eli on B race "Take over": one wins, the other is told who', async ({ page, browser }) => {
  test.setTimeout(90_000);
  const dana = await memberPage(browser, 0, fx.urls[0]);
  const eli = await memberPage(browser, 1, fx.urls[1]);
  await visitorOnB(page);
  await ask(page, 'Can I speak to a human please?');
  await expect(inLog(page, 'Connecting you to the team')).toBeVisible();
  for (const m of [dana, eli]) {
    const row = m.locator('a[href^="/inbox/"]').filter({ hasText: 'speak to a human' }).first();
    await expect(row).toBeVisible({ timeout: 15_000 });
    await row.click();
    await m.waitForURL(/\/inbox\/[0-9a-f-]{36}$/);
  }
  await Promise.all([dana.getByRole('button', { name: 'Take over' }).click(), eli.getByRole('button', { name: 'Take over' }).click()]);
  const notices = await Promise.all(
    [dana, eli].map(async (m) => {
      await expect(m.getByRole('status')).not.toBeEmpty();
      return (await m.getByRole('status').textContent())!;
    }),
  );
  const won = notices.filter((n) => n === 'You have taken over.');
  expect(won, JSON.stringify(notices)).toHaveLength(1);
  const winner = notices[0] === 'You have taken over.' ? 'Dana Reyes' : 'Eli Park';
  expect(notices.find((n) => n !== 'You have taken over.')).toContain(`${winner} has taken over`);
  await expect(inLog(page, `${winner} joined`)).toBeVisible();
  await screenshotsAtBothWidths(notices[0] === 'You have taken over.' ? eli : dana, 'journey-inbox-race-lost');
});
