/**
 * /inbox tells a member about a NEW Waiting conversation (docs/contracts.md §14): one chime (the
 * page's AudioContext oscillator) and, when the browser allows it, one notification with the
 * visitor's question; nothing for
 * the member's own actions, and only the chime when notifications are not allowed. The browser's
 * Notification and audio are replaced by recorders before the page loads.
 */
import { type BrowserContext, expect, type Page, test } from '@playwright/test';
import { fixtures, signIn, visitorAsksForAPerson } from './fixtures';

const f = fixtures();
test.describe.configure({ mode: 'serial' });

type Alerts = { notifications: Array<{ title: string; body: string; tag: string }>; sounds: number };

/** Runs in the page before its scripts: records every notification shown and every sound started. */
function recordAlerts() {
  const alerts: Alerts = { notifications: [], sounds: 0 };
  (window as unknown as { __alerts: Alerts }).__alerts = alerts;
  const Real = window.Notification;
  class Recorded {
    static get permission() {
      return Real ? Real.permission : 'denied';
    }
    static requestPermission() {
      return Real.requestPermission();
    }
    constructor(title: string, o: NotificationOptions = {}) {
      alerts.notifications.push({ title, body: o.body ?? '', tag: o.tag ?? '' });
    }
    close() {}
  }
  Object.defineProperty(window, 'Notification', { value: Recorded, configurable: true, writable: true });
  const start = AudioScheduledSourceNode.prototype.start;
  AudioScheduledSourceNode.prototype.start = function (this: AudioScheduledSourceNode, ...args: Parameters<typeof start>) {
    alerts.sounds++;
    return start.apply(this, args);
  };
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function (this: HTMLMediaElement) {
    alerts.sounds++;
    return play.call(this);
  };
}

const alertsOf = (page: Page) => page.evaluate(() => (window as unknown as { __alerts: Alerts }).__alerts);

/** The member signed in on /inbox (Waiting view) with the recorders installed. */
async function inboxWithRecorders(context: BrowserContext) {
  await context.addInitScript(recordAlerts);
  const page = await context.newPage();
  await signIn(page, f.alpha.email, f.alpha.password);
  await page.goto('/inbox?view=waiting');
  await expect(page.getByRole('navigation', { name: 'Inbox views' })).toBeVisible();
  return page;
}

/** A visitor hands off; resolves once the row is on the member's list (the page re-read the view) and a little after. */
async function handOff(page: Page, question: string) {
  const visitor = await visitorAsksForAPerson(test.info().project.use.baseURL!, f.widget, question);
  await visitor.pressTalkToAPerson();
  await expect(page.locator(`a[href="/inbox/${visitor.conversationId}"]`)).toBeVisible({ timeout: 15_000 });
  await page.waitForTimeout(600); // longer than the list's 300 ms calm: a second announcement would be here by now
  return visitor;
}

test('a new Waiting conversation: one chime and one notification; the member acting on it: none', async ({ browser }) => {
  const context = await browser.newContext();
  await context.grantPermissions(['notifications']);
  const page = await inboxWithRecorders(context);
  expect(await alertsOf(page)).toEqual({ notifications: [], sounds: 0 });

  const question = `Alerts: where is my parcel ${Date.now()}?`;
  const visitor = await handOff(page, question);
  try {
    // The notification says what the visitor asked (the conversation's title).
    expect(await alertsOf(page)).toEqual({
      notifications: [{ title: 'A visitor is waiting', body: question, tag: 'svc-inbox-waiting' }],
      sounds: 1,
    });

    // The member takes it over and replies in another tab: the Waiting count drops, nobody is alerted.
    const tab = await context.newPage();
    await tab.goto(`/inbox/${visitor.conversationId}`);
    await tab.getByRole('button', { name: 'Take over' }).click();
    await expect(tab.getByRole('status')).toHaveText('You have taken over.');
    await tab.getByRole('textbox', { name: 'Reply' }).fill('On it.');
    await tab.getByRole('button', { name: 'Send', exact: true }).click();
    await expect(tab.getByRole('status')).toHaveText('Sent.');
    await expect(page.locator(`a[href="/inbox/${visitor.conversationId}"]`)).toHaveCount(0, { timeout: 15_000 });
    await page.waitForTimeout(600);
    expect((await alertsOf(page)).notifications).toHaveLength(1);
    expect((await alertsOf(page)).sounds).toBe(1);
    expect(await alertsOf(tab)).toEqual({ notifications: [], sounds: 0 });
  } finally {
    visitor.close();
    await context.close();
  }
});

test('notifications not allowed: the chime only', async ({ browser }) => {
  const context = await browser.newContext(); // no permission granted
  const page = await inboxWithRecorders(context);
  const visitor = await handOff(page, `Alerts: is anyone there ${Date.now()}?`);
  try {
    expect(await alertsOf(page)).toEqual({ notifications: [], sounds: 1 });
  } finally {
    visitor.close();
    await context.close();
  }
});
