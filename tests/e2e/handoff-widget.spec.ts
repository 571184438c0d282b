/**
 * Human handoff in the widget (docs/contracts.md §14) on a host page of another origin: 2.1.x on
 * the beta track from a declined answer to the rating, away mode with its Email box, and a 2.0.4
 * widget in a conversation a person takes over. The member acts through the core service of the
 * app's own process (tests/e2e/handoff-app.ts).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { screenshot } from './fixtures';
import { consoleErrors, hostPage, startOwnApp, stopApp, waitForStatus, widgetState } from './widget-helpers';

const PORT = Number(process.env.E2E_APP_PORT ?? 3210) + 5;
const CONTROL = PORT + 1;
const OWN = `http://localhost:${PORT}`;
const FX = 'tests/artifacts/handoff-fixtures.json';
const releases = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as { tracks: Record<string, string> };

let app: ChildProcess;
test.beforeAll(async () => {
  test.setTimeout(120_000);
  app = await startOwnApp(PORT, '', FX, { E2E_CONTROL_PORT: String(CONTROL) }, 'tests/e2e/handoff-app.ts');
});
test.afterAll(async () => {
  if (app) await stopApp(app);
});

/** Acts as the member Dana Reyes (or changes the account's settings) through the app's control server. */
async function member(action: string, body: Record<string, unknown> = {}) {
  const r = await fetch(`http://127.0.0.1:${CONTROL}/${action}`, { method: 'POST', body: JSON.stringify(body) });
  const json = await r.json();
  expect(r.status, `${action}: ${JSON.stringify(json)}`).toBe(200);
  return json;
}

const widget = (page: Page) => page.locator('svc-chat-widget');
/** Text shown in the widget's message log (the polite live region repeats some of it for screen readers). */
const inLog = (page: Page, text: string) => page.getByRole('log').getByText(text);

async function conversationId(page: Page): Promise<string> {
  await expect.poll(async () => ((await widgetState(page)) as { conversationId?: string } | null)?.conversationId ?? null).not.toBeNull();
  return ((await widgetState(page)) as unknown as { conversationId: string }).conversationId;
}

async function ask(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

async function axe(page: Page) {
  const results = await new AxeBuilder({ page }).include('svc-chat-widget').analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

async function bothWidths(page: Page, name: string) {
  await page.setViewportSize({ width: 1366, height: 900 });
  await screenshot(page, `handoff-${name}-1366`);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, `handoff-${name}-390`);
  await page.setViewportSize({ width: 1366, height: 900 });
}

test.describe('handoff in widget 2.1', () => {
  test('beta serves 2.1.1; declined → Talk to a person → member joins, types, replies → hand back → resolve → rating', async ({ page }) => {
    test.setTimeout(120_000);
    expect(releases.tracks.beta).toBe('2.1.1');
    const errors = consoleErrors(page);
    await member('open');
    await page.goto(hostPage({ sel: 'track', val: 'beta', app: OWN, fixtures: FX }));
    await waitForStatus(page, 'connected');
    expect((await widgetState(page))!.version).toBe('2.1.1');
    await page.getByRole('button', { name: 'Open chat' }).click();
    await ask(page, 'Do you sell purple kayak paddles for penguins?');
    const offer = page.getByRole('log').getByRole('button', { name: 'Talk to a person' });
    await expect(offer).toBeVisible();
    await axe(page);
    const id = await conversationId(page);

    await offer.click();
    await expect(inLog(page, 'Connecting you to the team')).toBeVisible();
    await expect(offer).toBeHidden();

    await member('take_over', { conversation_id: id });
    await expect(inLog(page, 'Dana Reyes joined')).toBeVisible();
    await member('typing', { conversation_id: id });
    await expect(inLog(page, 'Dana Reyes is typing…')).toBeVisible();
    await bothWidths(page, 'typing');
    await member('reply', { conversation_id: id, text: 'Hi! I am Dana. We do not stock those, but I can order a pair for you.' });
    await expect(inLog(page, 'Dana Reyes is typing…')).toBeHidden();
    const reply = widget(page).locator('.msg.agent').last();
    await expect(reply).toContainText('Dana Reyes');
    await expect(reply).toContainText('I can order a pair for you');

    // While Dana handles it, the visitor's message goes to her and the AI stays silent.
    const answersBefore = await widget(page).locator('.msg.bot').count();
    await ask(page, 'Yes please, two pairs.');
    await expect(widget(page).locator('.msg.user').last()).toHaveText('Yes please, two pairs.');
    await page.waitForTimeout(1500);
    expect(await widget(page).locator('.msg.bot').count()).toBe(answersBefore);
    const record = await member('conversation', { conversation_id: id });
    expect(JSON.stringify(record)).toContain('Yes please, two pairs.');
    await axe(page);
    await bothWidths(page, 'member-reply');

    await member('hand_back', { conversation_id: id });
    await expect(inLog(page, 'Dana Reyes left — the assistant is back')).toBeVisible();
    await member('resolve', { conversation_id: id });
    await expect(inLog(page, 'Conversation resolved')).toBeVisible();
    await page.getByRole('textbox', { name: 'Rating comment' }).fill('Dana was quick and kind.');
    await page.getByRole('button', { name: 'Rate 5 of 5' }).click();
    await bothWidths(page, 'rating');
    await axe(page);
    await page.getByRole('button', { name: 'Send rating' }).click();
    await expect(inLog(page, 'Thank you for your feedback.')).toBeVisible();
    const rated = await member('conversation', { conversation_id: id });
    expect(rated.csat).toBe(5);
    expect(errors).toEqual([]);
  });

  test('an answer offers a person only after a Dislike; the menu always does', async ({ page }) => {
    await page.goto(hostPage({ sel: 'track', val: 'beta', app: OWN, fixtures: FX }));
    await page.getByRole('button', { name: 'Open chat' }).click();
    await ask(page, 'How long do I have to return a tent?');
    const answer = widget(page).locator('.msg.bot').last();
    await expect(answer).toContainText('30 days');
    await expect(answer.getByRole('button', { name: 'Talk to a person' })).toHaveCount(0);
    await answer.getByRole('button', { name: 'Dislike' }).click();
    await expect(answer.getByRole('button', { name: 'Talk to a person' })).toBeVisible();
    await page.getByRole('button', { name: 'Menu' }).click();
    await expect(page.getByRole('button', { name: 'Menu' })).toHaveAttribute('aria-expanded', 'true');
    await axe(page);
    await answer.getByRole('button', { name: 'Talk to a person' }).click();
    await expect(inLog(page, 'Connecting you to the team')).toBeVisible();
  });

  test('a rating without a comment is stored at the click', async ({ page }) => {
    await page.goto(hostPage({ sel: 'track', val: 'beta', app: OWN, fixtures: FX }));
    await page.getByRole('button', { name: 'Open chat' }).click();
    await ask(page, 'Can I speak to a human please?');
    await expect(inLog(page, 'Connecting you to the team')).toBeVisible();
    const id = await conversationId(page);
    await member('reply', { conversation_id: id, text: 'Done, your order is on its way.' });
    await expect(inLog(page, 'Done, your order is on its way.')).toBeVisible();
    // After a reload the history brings the member's message back, under their name.
    await page.reload();
    await page.getByRole('button', { name: 'Open chat' }).click();
    await expect(widget(page).locator('.msg.agent')).toContainText('Dana ReyesDone, your order is on its way.');
    await expect(inLog(page, 'Dana Reyes joined')).toBeVisible();
    await waitForStatus(page, 'connected');
    await member('resolve', { conversation_id: id });
    await page.getByRole('button', { name: 'Rate 3 of 5' }).click();
    await expect(inLog(page, 'Thank you for your feedback.')).toBeVisible();
    expect((await member('conversation', { conversation_id: id })).csat).toBe(3);
  });

  test('away mode: no promise of a person, and the Email box', async ({ page }) => {
    await member('away', { never: true });
    try {
      await page.goto(hostPage({ sel: 'track', val: 'beta', app: OWN, fixtures: FX }));
      await page.getByRole('button', { name: 'Open chat' }).click();
      await ask(page, 'Where is my order 1234?');
      await expect(widget(page).locator('.msg.bot').last()).not.toBeEmpty();
      await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('button', { name: 'Talk to a person' }).first().click();
      await expect(inLog(page, "We're away right now")).toBeVisible();
      await expect(inLog(page, 'Connecting you to the team')).toHaveCount(0);
      await page.getByRole('textbox', { name: 'Email' }).fill('visitor@example.org');
      await page.getByRole('button', { name: 'Email me the reply' }).click();
      await expect(inLog(page, "We'll email the reply to visitor@example.org.")).toBeVisible();
      await axe(page);
      await bothWidths(page, 'away');
    } finally {
      await member('open');
    }
  });
});

test.describe('a 2.0.4 widget in a conversation a person takes over', () => {
  test('shows the member messages, stores its asks as visitor messages, and keeps them across a reload', async ({ page }) => {
    test.setTimeout(90_000);
    await member('open');
    await page.goto(hostPage({ sel: 'version', val: '2.0.4', app: OWN, fixtures: FX }));
    await waitForStatus(page, 'connected');
    expect((await widgetState(page))!.version).toBe('2.0.4');
    await page.getByRole('button', { name: 'Open chat' }).click();
    await ask(page, 'How long do I have to return a tent?');
    await expect(widget(page).locator('.msg.bot').first()).toContainText('30 days');
    const id = await conversationId(page);

    await member('take_over', { conversation_id: id });
    await expect(widget(page).getByText('Dana Reyes joined')).toBeVisible();
    await member('reply', { conversation_id: id, text: 'Hello from Dana! Do you want a return label?' });
    await expect(widget(page).locator('.msg.bot').last()).toContainText('Dana Reyes: Hello from Dana! Do you want a return label?');
    await ask(page, 'Yes, a label please.');
    await expect.poll(async () => JSON.stringify(await member('conversation', { conversation_id: id }))).toContain('Yes, a label please.');
    await bothWidths(page, 'legacy-2.0.4');

    await page.reload();
    await page.getByRole('button', { name: 'Open chat' }).click();
    await expect(widget(page).getByText('Dana Reyes: Hello from Dana! Do you want a return label?')).toBeVisible();
    await expect(widget(page).getByText('Yes, a label please.')).toBeVisible();
    await bothWidths(page, 'legacy-2.0.4-reloaded');
  });
});
