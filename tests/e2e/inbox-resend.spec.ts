/**
 * A member's reply whose acknowledgement is lost (docs/decisions/inbox.md "A reply or note is
 * stored once"): the page shows it as "Sending…", sends it again with the same client_message_id
 * when no answer came, and the conversation holds it once. The socket's frames pass through
 * Playwright's WebSocket route, which drops the first reply's acknowledgement.
 */
import { expect, test } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn, visitorAsksForAPerson } from './fixtures';

const f = fixtures();
// The route sees the WebSocket only: until Engine.IO's upgrade packet ("5") the socket still polls
// over HTTP (for seconds on a loaded machine), and a reply sent then would pass untouched.
const UPGRADED = 'the inbox socket moved from polling to the WebSocket';

test('a reply whose ack was lost shows "Sending…", is sent again and stored once', async ({ page, baseURL }) => {
  test.setTimeout(90_000); // the page waits 15 s for the lost acknowledgement before it sends again
  const text = `We are on it (${Date.now()}).`;
  const text2 = `Still on it (${Date.now()}).`;
  // As a connection that drops after the commit: a reply's acknowledgement (`43/inbox,<id>[…]`)
  // and its push to members (`42/inbox,["inbox:message",…]`) never reach the page. For the first
  // reply the changes that make the page re-read its transcript are held back too (`dropChanged`).
  const lost = new Set<string>();
  let dropChanged = true;
  let upgraded = false;
  await page.routeWebSocket(/\/socket\.io\//, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((m) => {
      if (m === '5') upgraded = true;
      server.send(m);
    });
    server.onMessage((m) => {
      if (dropChanged && typeof m === 'string' && m.startsWith('42/inbox,["inbox:changed"')) return;
      for (const t of [text, text2]) {
        const kind = typeof m === 'string' && m.includes(t) ? `${t}:${m.slice(0, 9)}` : null;
        if (kind && (kind.endsWith('43/inbox,') || kind.endsWith('42/inbox,')) && !lost.has(kind)) {
          lost.add(kind);
          return;
        }
      }
      ws.send(m);
    });
  });
  await signIn(page, f.alpha.email, f.alpha.password);
  const visitor = await visitorAsksForAPerson(baseURL!, f.widget, `Resend: my invoice ${Date.now()}?`);
  try {
    await visitor.pressTalkToAPerson();
    await page.goto(`/inbox/${visitor.conversationId}`);
    await expect.poll(() => upgraded, { message: UPGRADED, timeout: 20_000 }).toBe(true);
    await page.getByRole('textbox', { name: 'Reply' }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await expect(transcript.getByText('Sending…')).toBeVisible();
    await expect(page.getByRole('textbox', { name: 'Reply' })).toHaveValue('');
    await screenshotsAtBothWidths(page, 'inbox-reply-sending');
    expect([...lost].sort()).toEqual([`${text}:42/inbox,`, `${text}:43/inbox,`]);

    await expect(page.getByRole('status')).toHaveText('Sent.', { timeout: 30_000 });
    await expect(transcript.getByText('Sending…')).toHaveCount(0);
    await expect(transcript.getByText(text)).toHaveCount(1);
    upgraded = false; // the reloaded page's socket polls again until its own upgrade
    await page.reload();
    await expect(page.getByRole('region', { name: 'Transcript' }).getByText(text)).toHaveCount(1);
    await expect.poll(() => upgraded, { message: UPGRADED, timeout: 20_000 }).toBe(true);

    // A lost ack, but the change reaches the page: the re-read transcript holds the reply, which
    // leaves "Sending…" then and there (no copy beside it, no wait for the resend).
    dropChanged = false;
    await page.getByRole('textbox', { name: 'Reply' }).fill(text2);
    const clicked = Date.now();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const again = page.getByRole('region', { name: 'Transcript' });
    await expect.poll(async () => [await again.getByText('Sending…').count(), await again.getByText(text2).count()], { timeout: 14_000 }).toEqual([0, 1]);
    expect(Date.now() - clicked, 'settled by the re-read, before the 15 s resend').toBeLessThan(14_000);
    expect(lost.has(`${text2}:43/inbox,`)).toBe(true);
  } finally {
    visitor.close();
  }
});

test('Resolve clicked while the page still waits for a reply\'s acknowledgement waits for it, then "Resolved." stays', async ({ page, baseURL }) => {
  const text = `Checking now (${Date.now()}).`;
  // The reply's acknowledgement and push, and every inbox change (whose re-read transcript would
  // show the reply stored), are held until the member has clicked Resolve.
  const held: string[] = [];
  let hold = false;
  let toPage: ((m: string) => void) | null = null;
  let upgraded = false;
  await page.routeWebSocket(/\/socket\.io\//, (ws) => {
    const server = ws.connectToServer();
    toPage = (m) => ws.send(m);
    ws.onMessage((m) => {
      if (m === '5') upgraded = true;
      server.send(m);
    });
    server.onMessage((m) => {
      if (hold && typeof m === 'string' && ((m.includes(text) && /^4[23]\/inbox,/.test(m)) || m.startsWith('42/inbox,["inbox:changed"'))) held.push(m);
      else ws.send(m);
    });
  });
  await signIn(page, f.alpha.email, f.alpha.password);
  const visitor = await visitorAsksForAPerson(baseURL!, f.widget, `Late ack: my parcel ${Date.now()}?`);
  try {
    await visitor.pressTalkToAPerson();
    await page.goto(`/inbox/${visitor.conversationId}`);
    await expect(page.getByRole('button', { name: 'Resolve' })).toBeEnabled();
    await expect.poll(() => upgraded, { message: UPGRADED, timeout: 20_000 }).toBe(true);
    hold = true;
    await page.getByRole('textbox', { name: 'Reply' }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await expect(transcript.getByText('Sending…')).toBeVisible();
    await expect.poll(() => held.filter((m) => m.includes(text)).length).toBe(2);

    await page.getByRole('button', { name: 'Resolve' }).click();
    await expect(page.getByRole('button', { name: 'Resolve' })).toBeDisabled();
    await page.waitForTimeout(500);
    await expect(page.getByRole('status')).not.toHaveText('Resolved.');
    hold = false;
    for (const m of held.splice(0)) toPage!(m);
    await expect(page.getByRole('status')).toHaveText('Resolved.');
    await expect(transcript.getByText('Sending…')).toHaveCount(0);
    await expect(transcript.getByText(text)).toHaveCount(1);
    await page.waitForTimeout(500);
    await expect(page.getByRole('status')).toHaveText('Resolved.');
    await expect(page.locator('main').getByText('Resolved', { exact: true }).first()).toBeVisible();
  } finally {
    visitor.close();
  }
});
