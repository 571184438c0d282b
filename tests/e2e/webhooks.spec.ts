import { expect, test } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { askAsVisitor, fixtures, screenshot, signIn, startReceiver } from './fixtures';

const f = fixtures();

test.describe('dashboard webhooks', () => {
  test('create an endpoint (secret shown once), receive signed deliveries, see them in the log and send one again', async ({ page, baseURL }) => {
    const rx = await startReceiver();
    try {
      await signIn(page, f.alpha.email, f.alpha.password);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
      await expect(page).toHaveURL(/\/webhooks$/);
      await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();

      await page.getByLabel('Endpoint URL').fill(rx.url);
      await expect(page.getByRole('checkbox', { name: 'response.feedback' })).toBeChecked();
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      const secretEl = page.getByTestId('webhook-secret');
      await expect(secretEl).toHaveText(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const secret = (await secretEl.textContent())!;
      await expect(page.getByRole('link', { name: `Deliveries of ${rx.url}` })).toBeVisible();
      await screenshot(page, 'webhooks-created-desktop');

      await page.reload();
      await expect(page.getByTestId('webhook-secret')).toHaveCount(0); // shown once
      await expect(page.getByText(secret)).toHaveCount(0);

      await askAsVisitor(baseURL!, f.widget, ['What are the opening hours?']);
      await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
      for (const r of rx.received) expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toBeTruthy();
      expect(rx.received.map((r) => JSON.parse(r.body).type)).toEqual(['conversation.created', 'response.created']);

      await page.getByRole('link', { name: `Deliveries of ${rx.url}` }).click();
      const log = page.getByRole('table', { name: 'Delivery log' });
      await expect(log.getByRole('row')).toHaveCount(3);
      await expect(log.getByText('delivered')).toHaveCount(2);
      await expect(log.getByText('response.created')).toBeVisible();
      await expect(log.getByRole('cell', { name: '204' }).first()).toBeVisible();
      await screenshot(page, 'webhooks-log-desktop');

      const firstId = rx.received[0]!.headers['webhook-id'];
      await log.getByRole('row').filter({ hasText: 'conversation.created' }).getByRole('button', { name: 'Send again' }).click();
      await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBe(3);
      expect(rx.received[2]!.headers['webhook-id']).toBe(firstId);

      await page.getByRole('button', { name: `Rotate secret of ${rx.url}` }).click();
      await expect(page.getByTestId('webhook-secret')).toHaveText(/^whsec_/);
      expect(await page.getByTestId('webhook-secret').textContent()).not.toBe(secret);
      await expect(page.getByText('The previous secret keeps signing for 24 hours')).toBeVisible();

      await page.getByRole('button', { name: `Pause ${rx.url}` }).click();
      await expect(page.getByText('paused', { exact: true })).toBeVisible();
      await expect(page.getByText(/While an endpoint is paused its deliveries are held; Resume sends those of the last 24 hours/)).toBeVisible();
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
      await screenshot(page, 'webhooks-phone');
      const overflowing = await page.evaluate(() =>
        [...document.querySelectorAll('main td > *')]
          .filter((el) => el.getBoundingClientRect().right > el.closest('tr')!.getBoundingClientRect().right + 1)
          .map(
            (el) =>
              `${el.tagName} ${el.textContent?.slice(0, 30)} ${el.getBoundingClientRect().right} > ${el.closest('tr')!.getBoundingClientRect().right} (td ${el.parentElement!.getBoundingClientRect().right})`,
          ),
      );
      expect(overflowing, 'no cell content runs out of its card on a phone').toEqual([]);
      await page.getByRole('button', { name: `Resume ${rx.url}` }).click();
      await expect(page.getByText('active', { exact: true })).toBeVisible();
      await page.getByRole('button', { name: `Delete ${rx.url}` }).click();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await expect(page.getByText('No webhook endpoints yet.')).toBeVisible();
    } finally {
      rx.close();
    }
  });
});
