import AxeBuilder from '@axe-core/playwright';
import { type Browser, expect, type Page, test } from '@playwright/test';
import { DASHBOARD_PAGES } from '../../lib/auth/pages';
import { fixtures, screenshot, signIn, startReceiver } from './fixtures';

/**
 * Every dashboard page (lib/auth/pages.ts, plus a transcript) axe-clean at 1366 and 390 px, with the
 * states that carry badges and notices: a revoked key, a webhook endpoint and its delivery log, a
 * widget client, a "Closed" conversation. It uses the beta account, which no other spec changes.
 */
const f = fixtures();
const WIDTHS = [
  { label: 'desktop', viewport: { width: 1366, height: 900 } },
  { label: 'phone', viewport: { width: 390, height: 844 } },
] as const;

test.describe.configure({ mode: 'serial' });

/** Serious and critical axe violations, each with the elements it names. */
const serious = (r: { violations: Array<{ impact?: string | null; id: string; nodes: Array<{ target: unknown }> }> }) =>
  r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);

/** A page in its own context (axe needs one made by browser.newContext()). */
async function freshPage(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  return (await browser.newContext({ viewport })).newPage();
}

const slug = (path: string) => (path === '/' ? 'overview' : path.replace(/^\//, '').replace(/\//g, '-').slice(0, 40));

test('the states with badges and notices exist (a revoked key, a webhook endpoint with a delivery, a widget client)', async ({ page }) => {
  const rx = await startReceiver('/axe');
  const hook = rx.url;
  try {
    await signIn(page, f.beta.email, f.beta.password);
    await page.goto('/api-keys');
    await page.getByLabel('Name').fill('axe key');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Copy' }).first()).toBeVisible();
    await page.reload();
    await page.getByRole('button', { name: /^Revoke axe key/ }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await expect(page.getByText('revoked', { exact: true })).toBeVisible();

    await page.goto('/webhooks');
    await page.getByLabel('Endpoint URL').fill(hook);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await expect(page.getByTestId('webhook-secret')).toBeVisible();
    await page.getByRole('button', { name: `Send test event to ${hook}` }).click();
    await expect(page.getByText('Test event queued')).toBeVisible();

    await page.goto('/widget');
    await page.getByLabel('Name', { exact: true }).fill('Axe shop');
    await page.getByLabel('Domains (one per line)').fill('shop.example.net');
    await page.getByRole('button', { name: 'Create client' }).click();
    await expect(page.getByTestId('new-client-id')).toBeVisible();
  } finally {
    rx.close();
  }
});

for (const { label, viewport } of WIDTHS) {
  test(`every dashboard page is axe-clean at ${viewport.width} px`, async ({ browser }) => {
    test.setTimeout(180_000);
    const page = await freshPage(browser, viewport);
    await signIn(page, f.beta.email, f.beta.password);
    const paths = [...DASHBOARD_PAGES.map((p) => p.path), `/conversations/${f.beta.conversations[0]}`];
    const found: Record<string, string[]> = {};
    for (const path of paths) {
      const res = await page.goto(path);
      expect(res?.status(), path).toBe(200);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      if (path === '/conversations' || path === '/responses') await expect(page.getByTestId('table-summary')).not.toHaveText('\u00a0');
      if (path === '/webhooks') await expect(page.getByRole('table', { name: 'Delivery log' })).toBeVisible();
      await expect(page).toHaveTitle(/\S/); // the title streams in after the page (Next's metadata)
      const violations = serious(await new AxeBuilder({ page }).analyze());
      if (violations.length > 0) found[path] = violations;
      await screenshot(page, `axe-${slug(path)}-${label}`);
    }
    expect(found).toEqual({});
    await page.context().close();
  });
}
