/**
 * The members' inbox in Chromium (docs/contracts.md §14): a visitor asks for a person (the widget's
 * `handoff:request`, branch handoff-widget) and the
 * conversation arrives in "Waiting" without a reload; the member takes over, replies, writes an
 * internal note, uses a canned reply and resolves; the Suggested reply drafts from the knowledge
 * base into the Reply box and sends nothing (§14 "suggested reply"). A customer's mail (§17) to the e2e
 * server's listener waits for a person; the reply's mail goes Sent live, threaded in the SMTP sink,
 * and one the sink refuses (550) goes Failed live, with the reason. Screenshots and axe at 1366 and 390 px.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import nodemailer from 'nodemailer';
import { collectConsoleErrors, fixtures, screenshotsAtBothWidths, signIn, visitorAsksForAPerson } from './fixtures';

const f = fixtures();
test.describe.configure({ mode: 'serial' });

const serious = (r: { violations: Array<{ impact?: string | null; id: string; nodes: Array<{ target: unknown }> }> }) =>
  r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);

/** Screenshots and axe at both widths. */
const lookAt = (page: Page, name: string) =>
  screenshotsAtBothWidths(page, name, async (width) => {
    // The title streams in after the page (Next's metadata): axe reads the page once it has one.
    await expect(page).toHaveTitle(/\S/);
    expect.soft(serious(await new AxeBuilder({ page }).analyze()), `${name} at ${width} px`).toEqual([]);
  });

test('a Waiting conversation arrives live; take over, reply, note, canned reply, resolve', async ({ page, context, baseURL }) => {
  await context.grantPermissions(['notifications']);
  const errors = collectConsoleErrors(page);
  await signIn(page, f.alpha.email, f.alpha.password);

  await page.goto('/inbox/replies');
  await page.getByLabel('Shortcut').fill('thanks');
  await page.getByLabel('Text').fill('Thanks for waiting! Anything else I can do?');
  await page.getByRole('button', { name: 'Add reply' }).click();
  await expect(page.getByRole('region', { name: 'Canned replies' })).toContainText('/thanks');
  await lookAt(page, 'inbox-replies');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await expect(page.getByRole('heading', { name: 'Inbox' })).toBeVisible();
  const views = page.getByRole('navigation', { name: 'Inbox views' });
  for (const label of ['Waiting', 'Mine', 'Unassigned', 'All open', 'Resolved'])
    await expect(views.getByRole('link', { name: new RegExp(`^${label} \\d+$`) })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Online' })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Away' })).toBeVisible();
  const before = Number((await views.getByRole('link', { name: /^Waiting/ }).textContent())!.replace(/\D/g, ''));

  const question = `Where is my order ${Date.now()}?`;
  const visitor = await visitorAsksForAPerson(baseURL!, f.widget, question);
  try {
    await visitor.pressTalkToAPerson();
    const row = page.locator(`a[href="/inbox/${visitor.conversationId}"]`);
    await expect(row).toBeVisible({ timeout: 15_000 }); // no reload
    await expect(views.getByRole('link', { name: /^Waiting/ })).toHaveText(`Waiting ${before + 1}`);
    await lookAt(page, 'inbox');

    await row.click();
    await page.waitForURL(`**/inbox/${visitor.conversationId}`);
    await expect(page.getByRole('region', { name: 'Summary' })).toBeVisible();
    await lookAt(page, 'inbox-conversation');
    await expect(page.getByRole('region', { name: 'Suggested reply' })).toContainText('Nothing relevant in the knowledge base');
    await expect(page.getByRole('button', { name: 'Use suggestion' })).toHaveCount(0);

    await expect(page.getByRole('region', { name: 'Summary' })).toContainText(question);
    await page.getByRole('button', { name: 'Take over' }).click();
    await expect(page.getByRole('status')).toHaveText('You have taken over.');
    // Who handles it is not offered to take it over again, and is told why.
    await expect(page.getByRole('button', { name: 'Take over' })).toBeDisabled();
    await expect(page.getByText('You handle this conversation.')).toBeVisible();
    await lookAt(page, 'inbox-conversation-handling');

    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('Hello, this is the team. Let me check your order.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await expect(transcript).toContainText('Hello, this is the team. Let me check your order.');

    await reply.fill('Customer since 2019; be generous.');
    await page.getByRole('button', { name: 'Internal note' }).click();
    await expect(transcript).toContainText('Customer since 2019; be generous.');
    await expect(transcript.getByText('Internal note')).toBeVisible();

    await reply.fill('/thanks');
    await expect(page.getByRole('list', { name: 'Canned replies' })).toContainText('Thanks for waiting!');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect(transcript).toContainText('Thanks for waiting! Anything else I can do?');

    await page.getByRole('button', { name: 'Resolve' }).click();
    await expect(page.getByRole('status')).toHaveText('Resolved.');
    await expect(page.locator('main').getByText('Resolved', { exact: true }).first()).toBeVisible();
    await lookAt(page, 'inbox-conversation-resolved');
  } finally {
    visitor.close();
  }
  expect(errors).toEqual([]);
});

test('a Suggested reply drafts from the knowledge base into the Reply box, sending nothing', async ({ page, baseURL }) => {
  const errors = collectConsoleErrors(page);
  await signIn(page, f.alpha.email, f.alpha.password);
  const visitor = await visitorAsksForAPerson(baseURL!, f.widget, `How many days do I have to return an item for a refund? ${Date.now()}`);
  try {
    await visitor.pressTalkToAPerson();
    await page.goto(`/inbox/${visitor.conversationId}`);
    const region = page.getByRole('region', { name: 'Suggested reply' });
    await expect(region).toContainText('within 30 days for a full refund', { timeout: 1_500 });
    await expect(region).toContainText('Sources: Alpha FAQ');
    await lookAt(page, 'inbox-suggested-reply');
    await region.getByRole('button', { name: 'Use suggestion' }).click();
    await expect(page.getByRole('textbox', { name: 'Reply' })).toHaveValue(/within 30 days for a full refund/);
    await expect(page.getByRole('region', { name: 'Transcript' }).locator('[class*="agent"]')).toHaveCount(0);
  } finally {
    visitor.close();
  }
  expect(errors).toEqual([]);
});

test("an email conversation: the reply's mail goes Sent live and arrives in the thread; one the customer's server refuses goes Failed, with the reason", async ({
  page,
}) => {
  const errors = collectConsoleErrors(page);
  // gamma: no other spec reads its inbox or mails its address.
  await signIn(page, f.gamma.email, f.gamma.password);
  await page.goto('/email');
  const address = (await page.locator('section[aria-labelledby="address-heading"] code').textContent())!.trim();
  await page.getByLabel('AI answers email').uncheck();
  await page.getByRole('button', { name: 'Save email settings' }).click();
  await expect(page.getByText('Saved.')).toBeVisible();

  // The server writes its listener's port into the fixtures once it has started.
  let port = 0;
  await expect.poll(() => (port = fixtures().inboundSmtpPort ?? 0)).toBeGreaterThan(0);
  const listener = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  const tag = randomUUID().slice(0, 8);

  /** A customer's mail to gamma's address; resolves with its conversation's id once its row (marked Email) is in the inbox. */
  const customerMail = async (from: string, subject: string) => {
    await page.goto('/inbox?view=waiting');
    const messageId = `<${randomUUID()}@customer.example>`;
    await listener.sendMail({ from: `Carla Customer <${from}>`, to: address, subject, text: 'My order 4711 has not arrived.', messageId });
    const row = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: subject, exact: true }) });
    await expect(row).toBeVisible({ timeout: 20_000 }); // no reload
    await expect(row.getByText('Email', { exact: true })).toBeVisible();
    await expect(row).toContainText(from);
    const href = (await row.getByRole('link', { name: subject, exact: true }).getAttribute('href'))!;
    return { id: href.replace('/inbox/', ''), messageId };
  };
  /** Replies on the conversation's page; the reply's mail state in the transcript. */
  const reply = async (id: string, text: string) => {
    await page.goto(`/inbox/${id}`);
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await expect(transcript).toContainText('My order 4711 has not arrived.');
    await page.getByRole('textbox', { name: 'Reply' }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    return transcript.locator('div', { hasText: text }).locator('[data-mail-state]');
  };

  const customer = `carla-${tag}@example.org`;
  const sent = await customerMail(customer, `Where is my order ${tag}?`);
  const answer = 'It left our warehouse today. Tracking follows.';
  const state = await reply(sent.id, answer);
  await expect(state).toHaveText('Sent', { timeout: 20_000 }); // the mail worker sent it: live, no reload
  await expect(state).toHaveAttribute('title', 'Emailed to the customer');
  await expect(page.getByRole('status')).toHaveText('Sent by email.'); // the notice follows the mail, not only the save
  await expect
    .poll(
      () =>
        fs
          .readFileSync(f.mailsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { envelopeTo: string[]; subject: string; text: string; inReplyTo: string | null; references: string[] })
          .find((m) => m.envelopeTo.includes(customer)),
      { timeout: 20_000 },
    )
    .toMatchObject({
      subject: `Re: Where is my order ${tag}?`,
      text: expect.stringContaining(answer),
      inReplyTo: sent.messageId,
      references: [sent.messageId],
    });
  await lookAt(page, 'inbox-email-sent');

  // The sink refuses a `refused-…` recipient with 550 (tests/helpers/smtp-child.ts).
  const refused = await customerMail(`refused-${tag}@example.org`, `Nobody home ${tag}?`);
  const failed = await reply(refused.id, 'Are you still there?');
  await expect(failed).toHaveText('Failed', { timeout: 20_000 });
  await expect(failed).toHaveAttribute('title', /^Not delivered: .*550/);
  await expect(page.getByText(/^Not delivered by email: .*550/)).toBeVisible();
  await expect(page.getByRole('status')).toHaveText(/^Reply saved, but the email was not delivered: .*550/);
  await lookAt(page, 'inbox-email-failed');

  await page.goto('/email');
  await page.getByLabel('AI answers email').check();
  await page.getByRole('button', { name: 'Save email settings' }).click();
  await expect(page.getByText('Saved.')).toBeVisible();
  expect(errors).toEqual([]);
});
